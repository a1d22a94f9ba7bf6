// Per-particle device columns behind one type-erased interface: a set of Kokkos Views with a row
// per particle and a fixed number of components of any trivially copyable type, each with a
// name and flags saying where it goes (migration, ghosts, checkpoints, trajectories). The
// exchanges pack, unpack and compact every flagged column without knowing their types, so a new
// per-particle property is one registration. Host code calls the columns through virtual
// functions; the kernels behind them are free function templates capturing pointers and scalars.
#pragma once

#include "stratus/core/types.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace stratus {

/// Where a column goes. The exchanges read `migrate` and `ghost`; checkpoints and trajectories
/// read the other two.
struct ColumnFlags {
  bool migrate = false;     ///< travels with a particle that moves to another rank
  bool ghost = false;       ///< ghosts get a copy when they are built
  bool checkpoint = false;  ///< saved in checkpoints
  bool trajectory = false;  ///< written to trajectories
  /// Only the owned particles' rows hold values (velocities, image counts: a ghost's are never
  /// read): a resize keeps those rows alone, and the ghosts' rows are never touched.
  bool owned_only = false;
};

/// Which flag selects the columns of an exchange.
enum class Travel { migrate, ghost };

/// What the values of a column are, for host copies: `real` and `integer` columns convert to
/// doubles, `integer` ones to int64 too; `other` (records) only travel.
enum class ColumnKind { real, integer, other };

/// Row indices on the device (send lists, holes).
using RowList = Kokkos::View<int*, DevMemSpace>;

/// A column of `N` values of `T` per row, as ParticleColumns::add creates it.
template <class T, int N = 1>
using ColumnView = Kokkos::View<T* [N], Kokkos::LayoutRight, DevMemSpace>;

/// The rows of a message of two parts (the low and the high side of a neighbour exchange):
/// message row k is list[0](k) for k < count[0], then list[1](k - count[0]).
struct RowParts {
  std::array<RowList, 2> list;
  std::array<int, 2> count{0, 0};
  [[nodiscard]] int rows() const noexcept { return count[0] + count[1]; }
};

/// Which buffer rows fill the rows [begin, begin + count) of an unpack: row begin + k takes
/// buffer row first + k for k < n_first, else second + (k - n_first). The default is in order.
struct BufferRows {
  int n_first = 0;
  int first = 0;
  int second = 0;
};

/// Where each selected column's values sit in a message row of `stride` bytes: at offset[c]
/// for column c of the set (-1: not selected). Offsets respect the values' alignment.
struct RowLayout {
  std::size_t stride = 0;
  std::vector<std::ptrdiff_t> offset;
};

/// One column, type-erased. Rows are contiguous: `components()` values of `value_bytes()` bytes
/// each. Every call runs kernels on the default execution space (no fence unless it says so).
class ParticleColumn {
 public:
  ParticleColumn(std::string name, ColumnFlags flags) : name_(std::move(name)), flags_(flags) {}
  virtual ~ParticleColumn() = default;
  ParticleColumn(const ParticleColumn&) = delete;
  ParticleColumn& operator=(const ParticleColumn&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const ColumnFlags& flags() const noexcept { return flags_; }
  [[nodiscard]] bool travels(Travel travel) const noexcept {
    return travel == Travel::migrate ? flags_.migrate : flags_.ghost;
  }
  [[nodiscard]] virtual int components() const noexcept = 0;
  [[nodiscard]] virtual std::size_t value_bytes() const noexcept = 0;
  [[nodiscard]] virtual std::size_t value_align() const noexcept = 0;
  [[nodiscard]] std::size_t row_bytes() const noexcept {
    return value_bytes() * static_cast<std::size_t>(components());
  }
  [[nodiscard]] virtual ColumnKind kind() const noexcept = 0;
  /// Rows allocated.
  [[nodiscard]] virtual int rows() const noexcept = 0;

  /// Reallocates to exactly `rows` rows, keeping the values of the first `keep` rows (of those
  /// both sizes have); the others hold unspecified values, their memory untouched until written.
  virtual void resize(int rows, int keep) = 0;
  /// Writes the rows of `parts` into message rows 0, 1, ... of `buf` (device memory): message
  /// row k's values at buf + k * stride + offset.
  virtual void pack(const RowParts& parts, char* buf, std::size_t stride,
                    std::size_t offset) const = 0;
  /// Reads rows [begin, begin + count) from `buf` (laid out as pack writes it), taking the
  /// buffer rows `from` says.
  virtual void unpack(const char* buf, std::size_t stride, std::size_t offset, int begin, int count,
                      BufferRows from) = 0;
  /// Row to(k) = row from(k) for k < count; the two sets of rows must not overlap.
  virtual void move_rows(const RowList& from, const RowList& to, int count) = 0;
  /// The first `n` rows on the host, n * components() values converted to double (real and
  /// integer columns; throws RuntimeError for other kinds). Fences.
  [[nodiscard]] virtual std::vector<double> host_reals(int n) const = 0;
  /// The same as int64 (integer columns only; throws RuntimeError otherwise). Fences.
  [[nodiscard]] virtual std::vector<std::int64_t> host_integers(int n) const = 0;
  /// The inverse of host_reals (a restart): writes the first values.size() / components() rows,
  /// converted. Throws RuntimeError for other kinds, or when the values are not whole rows or
  /// more than rows(). Fences.
  virtual void assign_reals(const std::vector<double>& values) = 0;
  /// The inverse of host_integers (integer columns only). Fences.
  virtual void assign_integers(const std::vector<std::int64_t>& values) = 0;

 protected:
  /// Throws RuntimeError: this column cannot be copied to the host as `as`.
  [[noreturn]] void refuse_host_copy(const char* as) const;
  /// Throws RuntimeError unless 0 <= n <= rows().
  void check_host_rows(int n) const;
  /// Throws RuntimeError unless `values` host values are whole rows that fit.
  void check_host_values(std::size_t values) const;

 private:
  std::string name_;
  ColumnFlags flags_;
};

namespace detail {

using ColumnPolicy = Kokkos::RangePolicy<DevExecSpace>;

// The kernels of ParticleColumn, free functions (CUDA rejects extended lambdas in member
// functions of some classes); they capture pointers, views and scalars only. Rows hold N values.

template <class T, int N>
void pack_column(const T* src, const RowParts& parts, char* buf, std::size_t stride,
                 std::size_t offset) {
  const RowList low = parts.list[0], high = parts.list[1];
  const int n_low = parts.count[0];
  Kokkos::parallel_for(
      "stratus::ParticleColumn::pack", ColumnPolicy(0, parts.rows()), KOKKOS_LAMBDA(const int k) {
        const int i = k < n_low ? low(k) : high(k - n_low);
        T* out = reinterpret_cast<T*>(buf + static_cast<std::size_t>(k) * stride + offset);
        for (int c = 0; c < N; ++c) out[c] = src[static_cast<std::size_t>(i) * N + c];
      });
}

template <class T, int N>
void unpack_column(T* dst, const char* buf, std::size_t stride, std::size_t offset, int begin,
                   int count, BufferRows from) {
  Kokkos::parallel_for(
      "stratus::ParticleColumn::unpack", ColumnPolicy(0, count), KOKKOS_LAMBDA(const int k) {
        const int src = k < from.n_first ? from.first + k : from.second + (k - from.n_first);
        const T* in =
            reinterpret_cast<const T*>(buf + static_cast<std::size_t>(src) * stride + offset);
        for (int c = 0; c < N; ++c) dst[static_cast<std::size_t>(begin + k) * N + c] = in[c];
      });
}

template <class T, int N>
void move_column_rows(T* data, const RowList& from, const RowList& to, int count) {
  const RowList src = from, dst = to;
  Kokkos::parallel_for(
      "stratus::ParticleColumn::move_rows", ColumnPolicy(0, count), KOKKOS_LAMBDA(const int k) {
        const auto i = static_cast<std::size_t>(src(k)), j = static_cast<std::size_t>(dst(k));
        for (int c = 0; c < N; ++c) data[j * N + c] = data[i * N + c];
      });
}

/// Components per row of a column view: 1 for View<T*>, N for View<T*[N]>.
template <class V>
constexpr int components_of() {
  if constexpr (static_cast<int>(V::rank) == 1) {
    return 1;
  } else {
    static_assert(static_cast<int>(V::rank) == 2, "a column has one or two dimensions");
    static_assert(std::is_same_v<typename V::array_layout, Kokkos::LayoutRight>,
                  "a column of several components is LayoutRight: rows are contiguous");
    return static_cast<int>(V::static_extent(1));
  }
}

}  // namespace detail

/// A column over a View `V` (View<T*> or View<T*[N], LayoutRight> in device memory) that lives
/// elsewhere: every operation, resize included, works on that very View, so its owner always
/// holds the current allocation.
template <class V>
class ViewColumn : public ParticleColumn {
 public:
  using value_type = typename V::non_const_value_type;
  static constexpr int kComponents = detail::components_of<V>();
  static_assert(std::is_trivially_copyable_v<value_type>, "columns travel as bytes");
  static_assert(std::is_same_v<typename V::memory_space, DevMemSpace>, "columns are on the device");

  ViewColumn(std::string name, ColumnFlags flags, V& view)
      : ParticleColumn(std::move(name), flags), view_(&view) {}

  [[nodiscard]] V& view() const noexcept { return *view_; }

  [[nodiscard]] int components() const noexcept override { return kComponents; }
  [[nodiscard]] std::size_t value_bytes() const noexcept override { return sizeof(value_type); }
  [[nodiscard]] std::size_t value_align() const noexcept override { return alignof(value_type); }
  [[nodiscard]] ColumnKind kind() const noexcept override {
    if constexpr (std::is_floating_point_v<value_type>) return ColumnKind::real;
    if constexpr (std::is_integral_v<value_type>) return ColumnKind::integer;
    return ColumnKind::other;
  }
  [[nodiscard]] int rows() const noexcept override { return static_cast<int>(view_->extent(0)); }

  void resize(int rows, int keep) override {
    const auto n = static_cast<std::size_t>(std::max(0, std::min({keep, rows, this->rows()})));
    V fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing, view_->label()),
            static_cast<std::size_t>(rows));
    if constexpr (static_cast<int>(V::rank) == 1)
      Kokkos::deep_copy(Kokkos::subview(fresh, std::make_pair(std::size_t{0}, n)),
                        Kokkos::subview(*view_, std::make_pair(std::size_t{0}, n)));
    else
      Kokkos::deep_copy(Kokkos::subview(fresh, std::make_pair(std::size_t{0}, n), Kokkos::ALL),
                        Kokkos::subview(*view_, std::make_pair(std::size_t{0}, n), Kokkos::ALL));
    *view_ = fresh;
  }
  void pack(const RowParts& parts, char* buf, std::size_t stride,
            std::size_t offset) const override {
    detail::pack_column<value_type, kComponents>(view_->data(), parts, buf, stride, offset);
  }
  void unpack(const char* buf, std::size_t stride, std::size_t offset, int begin, int count,
              BufferRows from) override {
    detail::unpack_column<value_type, kComponents>(view_->data(), buf, stride, offset, begin, count,
                                                   from);
  }
  void move_rows(const RowList& from, const RowList& to, int count) override {
    detail::move_column_rows<value_type, kComponents>(view_->data(), from, to, count);
  }
  [[nodiscard]] std::vector<double> host_reals(int n) const override {
    if constexpr (std::is_arithmetic_v<value_type>) {
      return host_copy<double>(n);
    } else {
      refuse_host_copy("reals");
    }
  }
  [[nodiscard]] std::vector<std::int64_t> host_integers(int n) const override {
    if constexpr (std::is_integral_v<value_type>) {
      return host_copy<std::int64_t>(n);
    } else {
      refuse_host_copy("integers");
    }
  }
  void assign_reals(const std::vector<double>& values) override {
    if constexpr (std::is_arithmetic_v<value_type>) {
      assign(values);
    } else {
      refuse_host_copy("reals");
    }
  }
  void assign_integers(const std::vector<std::int64_t>& values) override {
    if constexpr (std::is_integral_v<value_type>) {
      assign(values);
    } else {
      refuse_host_copy("integers");
    }
  }

 private:
  template <class U>
  std::vector<U> host_copy(int n) const {
    check_host_rows(n);
    std::vector<U> out(static_cast<std::size_t>(n) * kComponents);
    // The first n rows are the first n * kComponents values (rows are contiguous).
    const Kokkos::View<const value_type*, DevMemSpace, Kokkos::MemoryUnmanaged> values(
        view_->data(), out.size());
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<U>(host(k));
    return out;
  }

  template <class U>
  void assign(const std::vector<U>& values) {
    check_host_values(values.size());
    const Kokkos::View<value_type*, DevMemSpace, Kokkos::MemoryUnmanaged> target(view_->data(),
                                                                                 values.size());
    auto host = Kokkos::create_mirror_view(target);
    for (std::size_t k = 0; k < values.size(); ++k) host(k) = static_cast<value_type>(values[k]);
    Kokkos::deep_copy(target, host);
  }

  V* view_;
};

/// A column that owns its View (what ParticleColumns::add creates).
template <class T, int N>
class OwnedColumn : public ViewColumn<ColumnView<T, N>> {
 public:
  OwnedColumn(std::string name, ColumnFlags flags, int rows)
      : ViewColumn<ColumnView<T, N>>(name, flags, own_),
        own_(name, static_cast<std::size_t>(rows)) {}

 private:
  ColumnView<T, N> own_;  // bound by reference in the base before it is constructed; used after
};

/// A set of columns with the same number of rows: the per-particle state of a solver. Columns
/// are either attached (a View the caller keeps as a typed member: the set resizes that View
/// itself, so the member and the set can never disagree) or added (owned by the set, looked up
/// by name). Neither copyable nor movable: attached columns point into their owner.
class ParticleColumns {
 public:
  ParticleColumns() = default;
  ParticleColumns(const ParticleColumns&) = delete;
  ParticleColumns& operator=(const ParticleColumns&) = delete;

  /// Registers `view`, which must outlive the set and not move (a member of the set's owner).
  /// Throws RuntimeError when the name is taken or the view's rows differ from the set's.
  template <class V>
  void attach(std::string name, V& view, ColumnFlags flags) {
    insert(std::make_unique<ViewColumn<V>>(std::move(name), flags, view));
  }
  /// Adds a column of `N` values of `T` per row, zero, with as many rows as the set, and returns
  /// its View. The View stays this column's until the next resize(), which reallocates it:
  /// after a resize, look it up again with view(). Throws RuntimeError when the name is taken.
  template <class T, int N = 1>
  ColumnView<T, N> add(std::string name, ColumnFlags flags) {
    auto column = std::make_unique<OwnedColumn<T, N>>(std::move(name), flags, rows());
    const ColumnView<T, N> out = column->view();
    insert(std::move(column));
    return out;
  }
  /// The current View of column `name` (an added one, or an attached ColumnView<T, N>). Throws
  /// RuntimeError when there is none, or when it is not a ColumnView<T, N>.
  template <class T, int N = 1>
  [[nodiscard]] ColumnView<T, N> view(const std::string& name) const {
    const auto* typed = dynamic_cast<const ViewColumn<ColumnView<T, N>>*>(&at(name));
    if (typed == nullptr) refuse_type(name, sizeof(T), N);
    return typed->view();
  }

  /// Column `name`; throws RuntimeError when there is none.
  [[nodiscard]] ParticleColumn& at(const std::string& name) const;
  /// Column `name`, or nullptr.
  [[nodiscard]] ParticleColumn* find(const std::string& name) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return columns_.size(); }
  /// Column k, in the order of registration.
  [[nodiscard]] ParticleColumn& operator[](std::size_t k) const { return *columns_[k]; }
  /// Rows of every column (0 for an empty set).
  [[nodiscard]] int rows() const noexcept;

  /// Reallocates every column to exactly `rows` rows, keeping the rows both sizes have; rows
  /// past the old size hold unspecified values (their memory untouched until written).
  void resize(int rows) { resize(rows, rows, rows); }
  /// Reallocates every column to exactly `rows` rows, keeping the first `keep_owned` rows of
  /// `owned_only` columns and the first `keep_all` rows of the others; every other row holds
  /// unspecified values.
  void resize(int rows, int keep_owned, int keep_all);
  /// The rows of a message of the columns that travel: widest alignment first (no padding
  /// between columns of the same alignment), the stride rounded up to the widest alignment.
  [[nodiscard]] RowLayout layout(Travel travel) const;
  /// Packs every column that travels into `buf` (laid out as `layout`).
  void pack(Travel travel, const RowLayout& layout, const RowParts& parts, char* buf) const;
  /// Unpacks every column that travels from `buf` into rows [begin, begin + count).
  void unpack(Travel travel, const RowLayout& layout, const char* buf, int begin, int count,
              BufferRows from = {});
  /// Row to(k) = row from(k) for k < count, in every column that travels.
  void move_rows(Travel travel, const RowList& from, const RowList& to, int count);

 private:
  void insert(std::unique_ptr<ParticleColumn> column);
  [[noreturn]] void refuse_type(const std::string& name, std::size_t value_bytes, int n) const;

  std::vector<std::unique_ptr<ParticleColumn>> columns_;
};

}  // namespace stratus
