// ParticleColumns: attached columns stay their owner's View through resizes, added ones are
// found by name and type; message rows are laid out without gaps between columns of the same
// alignment; pack/unpack (in order and with the two parts swapped), compaction moves, host
// copies and their way back round-trip every value. ColumnExchange on a periodic ring of ranks
// (one rank: its own neighbour, no MPI) delivers the listed rows of every travelling column,
// with both transports.
#include "stratus/core/error.hpp"
#include "stratus/core/neighbor_exchange.hpp"
#include "stratus/core/particle_columns.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace stratus {
namespace {

/// A record column: any trivially copyable type travels.
struct Tag {
  std::int32_t a;
  std::int16_t b;
};

using Vec3 = ColumnView<double, 3>;
using Ints = Kokkos::View<int*, DevMemSpace>;

/// Typical owner of columns: typed members attached, plus what the set adds.
struct Owner {
  Vec3 x{"x", 0};
  Ints type{"type", 0};
  ParticleColumns columns;
  Owner() {
    columns.attach("x", x, {.migrate = true, .checkpoint = true});
    columns.attach("type", type, {.migrate = true, .ghost = true});
  }
};

// Row r of every column holds values made from `key(r)`: x = (k, k + 0.5, -k), type = k % 7,
// id = (k, -k), tag = {k, k % 3}.
double x_of(int k, int d) { return d == 0 ? k : d == 1 ? k + 0.5 : -k; }

template <class Key>
void fill(Owner& o, int n, Key key) {
  auto x = Kokkos::create_mirror_view(o.x);
  auto type = Kokkos::create_mirror_view(o.type);
  auto id = Kokkos::create_mirror_view(o.columns.view<GlobalId, 2>("id"));
  auto tag = Kokkos::create_mirror_view(o.columns.view<Tag>("tag"));
  for (int r = 0; r < n; ++r) {
    const int k = key(r);
    for (int d = 0; d < 3; ++d) x(r, d) = x_of(k, d);
    type(r) = k % 7;
    id(r, 0) = k;
    id(r, 1) = -k;
    tag(r, 0) = Tag{k, static_cast<std::int16_t>(k % 3)};
  }
  Kokkos::deep_copy(o.x, x);
  Kokkos::deep_copy(o.type, type);
  Kokkos::deep_copy(o.columns.view<GlobalId, 2>("id"), id);
  Kokkos::deep_copy(o.columns.view<Tag>("tag"), tag);
}

// Checks rows [begin, begin + keys.size()) against the keys; `all`: the non-ghost columns too.
void expect_rows(const Owner& o, int begin, const std::vector<int>& keys, bool all) {
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.x);
  const auto type = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.type);
  const auto id =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.columns.view<GlobalId, 2>("id"));
  const auto tag =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.columns.view<Tag>("tag"));
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const int r = begin + static_cast<int>(j), k = keys[j];
    SCOPED_TRACE(::testing::Message() << "row " << r << ", key " << k);
    EXPECT_EQ(type(r), k % 7);
    if (!all) continue;
    for (int d = 0; d < 3; ++d) EXPECT_EQ(x(r, d), x_of(k, d));
    EXPECT_EQ(id(r, 0), k);
    EXPECT_EQ(id(r, 1), -k);
    EXPECT_EQ(tag(r, 0).a, k);
    EXPECT_EQ(tag(r, 0).b, k % 3);
  }
}

RowList rows_of(const std::vector<int>& rows) {
  RowList out("rows", rows.size());
  auto h = Kokkos::create_mirror_view(out);
  for (std::size_t k = 0; k < rows.size(); ++k) h(k) = rows[k];
  Kokkos::deep_copy(out, h);
  return out;
}

int identity(int r) { return r; }
int shifted(int r) { return 100 + 3 * r; }

void add_extras(Owner& o) {
  o.columns.add<GlobalId, 2>("id", {.migrate = true, .ghost = false, .trajectory = true});
  o.columns.add<Tag>("tag", {.migrate = true});
}

TEST(ParticleColumns, AttachedColumnsFollowEveryResize) {
  Owner o;
  add_extras(o);
  o.columns.resize(6);
  fill(o, 6, identity);
  o.columns.resize(50);
  // The member itself was reallocated: nothing to refresh, nothing stale.
  EXPECT_EQ(o.x.extent(0), 50u);
  EXPECT_EQ(o.type.extent(0), 50u);
  EXPECT_EQ(o.columns.rows(), 50);
  EXPECT_EQ((o.columns.view<double, 3>("x").data()), o.x.data());
  EXPECT_EQ((o.columns.view<GlobalId, 2>("id").extent(0)), 50u);
  expect_rows(o, 0, {0, 1, 2, 3, 4, 5}, true);
}

TEST(ParticleColumns, NamesAndTypesAreChecked) {
  Owner o;
  add_extras(o);
  EXPECT_EQ(o.columns.size(), 4u);
  EXPECT_EQ(o.columns[2].name(), "id");
  EXPECT_EQ(o.columns.at("id").components(), 2);
  EXPECT_TRUE(o.columns.at("id").flags().trajectory);
  EXPECT_EQ(o.columns.find("charge"), nullptr);
  EXPECT_THROW((void)o.columns.at("charge"), RuntimeError);
  EXPECT_THROW((void)o.columns.view<double>("id"), RuntimeError);    // another type
  EXPECT_THROW((void)o.columns.view<GlobalId>("id"), RuntimeError);  // another width
  EXPECT_THROW(o.columns.add<double>("x", {}), RuntimeError);        // taken
  Ints longer("longer", 3);
  EXPECT_THROW(o.columns.attach("longer", longer, {}), RuntimeError);  // other row count
}

TEST(ParticleColumns, MessageRowsHaveNoGapsBetweenColumns) {
  Owner o;
  add_extras(o);
  // migrate: x (24 bytes), id (16), then type (4) and tag (8, aligned to 4): 52, stride 56.
  const RowLayout m = o.columns.layout(Travel::migrate);
  EXPECT_EQ(m.stride, 56u);
  EXPECT_EQ(m.offset, (std::vector<std::ptrdiff_t>{0, 40, 24, 44}));
  // ghost: type only.
  const RowLayout g = o.columns.layout(Travel::ghost);
  EXPECT_EQ(g.stride, 4u);
  EXPECT_EQ(g.offset, (std::vector<std::ptrdiff_t>{-1, 0, -1, -1}));
}

TEST(ParticleColumns, PackAndUnpackRoundTrip) {
  Owner o;
  add_extras(o);
  o.columns.resize(20);
  fill(o, 10, identity);
  const RowLayout layout = o.columns.layout(Travel::migrate);
  RowParts parts;
  parts.list = {rows_of({3, 1}), rows_of({4, 0, 2})};
  parts.count = {2, 3};
  Kokkos::View<char*, DevMemSpace> buf("buf", layout.stride * 5);
  o.columns.pack(Travel::migrate, layout, parts, buf.data());
  o.columns.unpack(Travel::migrate, layout, buf.data(), 10, 5);
  expect_rows(o, 10, {3, 1, 4, 0, 2}, true);
  // Parts swapped (what a rank that is its own neighbour receives).
  o.columns.unpack(Travel::migrate, layout, buf.data(), 15, 5, BufferRows{3, 2, 0});
  expect_rows(o, 15, {4, 0, 2, 3, 1}, true);
}

TEST(ParticleColumns, MovesAndHostCopies) {
  Owner o;
  add_extras(o);
  o.columns.resize(12);
  fill(o, 12, shifted);
  // Compaction: rows 9 and 11 fill the holes 2 and 5, in the ghost columns only (x stays).
  o.columns.move_rows(Travel::ghost, rows_of({9, 11}), rows_of({2, 5}), 2);
  const auto type = o.columns.at("type").host_integers(6);
  EXPECT_EQ(type,
            (std::vector<std::int64_t>{100 % 7, 103 % 7, 127 % 7, 109 % 7, 112 % 7, 133 % 7}));
  const auto x = o.columns.at("x").host_reals(3);
  EXPECT_EQ(x, (std::vector<double>{100, 100.5, -100, 103, 103.5, -103, 106, 106.5, -106}));
  const auto id = o.columns.at("id").host_integers(2);
  EXPECT_EQ(id, (std::vector<std::int64_t>{100, -100, 103, -103}));
  EXPECT_EQ(o.columns.at("type").host_reals(1), std::vector<double>{100 % 7});
  EXPECT_THROW((void)o.columns.at("x").host_integers(1), RuntimeError);
  EXPECT_THROW((void)o.columns.at("tag").host_reals(1), RuntimeError);
  EXPECT_THROW((void)o.columns.at("x").host_reals(13), RuntimeError);
}

TEST(ParticleColumns, HostValuesGoBackIntoTheirRows) {
  // What a restart does with the host copies of a checkpoint.
  Owner o;
  add_extras(o);
  o.columns.resize(8);
  fill(o, 8, identity);
  o.columns.at("x").assign_reals({1, 2, 3, 4.5, 5.5, 6.5});
  o.columns.at("type").assign_reals({6, 5});
  o.columns.at("id").assign_integers({-9, 9, -8, 8, -7, 7});
  EXPECT_EQ(o.columns.at("x").host_reals(3),
            (std::vector<double>{1, 2, 3, 4.5, 5.5, 6.5, 2, 2.5, -2}));
  EXPECT_EQ(o.columns.at("type").host_integers(3), (std::vector<std::int64_t>{6, 5, 2}));
  EXPECT_EQ(o.columns.at("id").host_integers(4),
            (std::vector<std::int64_t>{-9, 9, -8, 8, -7, 7, 3, -3}));
  EXPECT_THROW(o.columns.at("x").assign_reals({1, 2}), RuntimeError);  // not whole rows
  EXPECT_THROW(o.columns.at("type").assign_integers(std::vector<std::int64_t>(9)), RuntimeError);
  EXPECT_THROW(o.columns.at("x").assign_integers({1, 2, 3}), RuntimeError);
  EXPECT_THROW(o.columns.at("tag").assign_reals({1}), RuntimeError);
}

TEST(ColumnExchange, RingDeliversTheListedRows) {
  // Rank r owns rows keyed 100 r + i, i < 10; sends rows 0..2 down and 7..9 up, and receives
  // after its 10 rows: the low neighbour's 7..9, then the high neighbour's 0..2.
  MPI_Comm comm = testing::context().comm();
  const int n = testing::context().size(), me = testing::context().rank();
  const int low = (me + n - 1) % n, high = (me + 1) % n;
  for (const MpiTransport transport : {MpiTransport::direct, MpiTransport::staged}) {
    Owner o;
    add_extras(o);
    o.columns.resize(16);
    fill(o, 10, [me](int r) { return 100 * me + r; });
    NeighborPlan plan;
    plan.neighbors = Neighbors{comm, {low, high}};
    plan.send.list = {rows_of({0, 1, 2}), rows_of({7, 8, 9})};
    plan.send.count = {3, 3};
    plan.recv_count = plan.self(me) ? std::array<int, 2>{3, 3}
                                    : exchange_counts(plan.neighbors, 700, plan.send.count);
    ColumnExchange exchange("test", transport);
    exchange.pack(o.columns, Travel::migrate, plan);
    exchange.transfer(o.columns, Travel::migrate, plan, 710, 10);
    EXPECT_EQ(exchange.row_bytes(), 56u);
    expect_rows(
        o, 10,
        {100 * low + 7, 100 * low + 8, 100 * low + 9, 100 * high, 100 * high + 1, 100 * high + 2},
        true);
  }
}

}  // namespace
}  // namespace stratus
