#include "transpose.hpp"

#include <stdexcept>

namespace stratus::fft {

namespace {

using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
using ConstComplexArray = Kokkos::View<const Complex*, DevMemSpace, Unmanaged>;
using ComplexArray = Kokkos::View<Complex*, DevMemSpace, Unmanaged>;

template <class T>
Kokkos::View<T*, DevMemSpace> to_device(const std::string& label, const std::vector<T>& values) {
  Kokkos::View<T*, DevMemSpace> v(label, values.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i) h(i) = values[i];
  Kokkos::deep_copy(v, h);
  return v;
}

Kokkos::Array<std::int64_t, 3> storage_extents(const BlockLayout& l) {
  return {l.extent[l.order[0]], l.extent[l.order[1]], l.extent[l.order[2]]};
}

/// Where element `idx` of a rank's block (stored with extents `se` in order `so`; logical
/// extents `le`) sits in the all-to-all buffer: in the part of the rank q that owns its index
/// along `split`, at its place in the box (q's range along split) x (the block's other axes) in
/// logical order. Pack writes there, unpack reads from there.
struct BufferPlace {
  Kokkos::Array<std::int64_t, 3> se;
  Kokkos::Array<int, 3> so;
  Kokkos::Array<std::int64_t, 3> le;
  int split;
  Kokkos::View<int*, DevMemSpace> owner;
  Kokkos::View<std::int64_t*, DevMemSpace> begin, extent, offset;

  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t idx) const {
    std::int64_t l[3];
    l[so[2]] = idx % se[2];
    const std::int64_t t = idx / se[2];
    l[so[1]] = t % se[1];
    l[so[0]] = t / se[1];
    const int q = owner(l[split]);
    std::int64_t e[3] = {le[0], le[1], le[2]};
    e[split] = extent(q);
    l[split] -= begin(q);
    return offset(q) + (l[0] * e[1] + l[1]) * e[2] + l[2];
  }
};

}  // namespace

Transpose::Transpose(MPI_Comm comm, BlockLayout in, BlockLayout out, int split_in, int split_out,
                     const Ranges& in_ranges, const Ranges& out_ranges, MpiTransport transport)
    : comm_(comm), in_(in), out_(out), split_in_(split_in), split_out_(split_out) {
  MPI_Comm_size(comm, &size_);
  if (static_cast<int>(in_ranges.size()) != size_ || static_cast<int>(out_ranges.size()) != size_)
    throw std::logic_error("Transpose: one range per rank expected");
  if (size_ == 1) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int third = 3 - split_in - split_out;
  const std::int64_t plane_send = in.extent[split_in] * in.extent[third];
  const std::int64_t plane_recv = out.extent[split_out] * out.extent[third];
  std::vector<int> owner_out, owner_in;
  std::vector<std::int64_t> ob, oe, so, ib, ie, ro;
  std::int64_t send_total = 0, recv_total = 0;
  for (int q = 0; q < size_; ++q) {
    for (std::int64_t i = 0; i < out_ranges[q][1]; ++i) owner_out.push_back(q);
    for (std::int64_t i = 0; i < in_ranges[q][1]; ++i) owner_in.push_back(q);
    ob.push_back(out_ranges[q][0]);
    oe.push_back(out_ranges[q][1]);
    ib.push_back(in_ranges[q][0]);
    ie.push_back(in_ranges[q][1]);
    const std::int64_t ns = out_ranges[q][1] * plane_send;
    const std::int64_t nr = in_ranges[q][1] * plane_recv;
    if (ns > INT32_MAX || nr > INT32_MAX || send_total + ns > INT32_MAX ||
        recv_total + nr > INT32_MAX)
      throw std::runtime_error(
          "Transpose: message larger than MPI int counts allow; use more ranks");
    so.push_back(send_total);
    ro.push_back(recv_total);
    send_counts_.push_back(static_cast<int>(ns));
    send_displs_.push_back(static_cast<int>(send_total));
    recv_counts_.push_back(static_cast<int>(nr));
    recv_displs_.push_back(static_cast<int>(recv_total));
    send_total += ns;
    recv_total += nr;
  }
  owner_out_ = to_device("fft::owner_out", owner_out);
  owner_in_ = to_device("fft::owner_in", owner_in);
  out_begin_ = to_device("fft::out_begin", ob);
  out_extent_ = to_device("fft::out_extent", oe);
  send_offset_ = to_device("fft::send_offset", so);
  in_begin_ = to_device("fft::in_begin", ib);
  in_extent_ = to_device("fft::in_extent", ie);
  recv_offset_ = to_device("fft::recv_offset", ro);
  send_ = MpiBuffer<Complex>("fft::send", transport);
  recv_ = MpiBuffer<Complex>("fft::recv", transport);
  send_.allocate(static_cast<std::size_t>(send_total));
  recv_.allocate(static_cast<std::size_t>(recv_total));
  (void)rank;
}

void Transpose::local_permute(const Complex* in, Complex* out) const {
  const ConstComplexArray src(in, in_.size());
  const ComplexArray dst(out, out_.size());
  // Strides of the logical axes in the input storage.
  const auto ie = storage_extents(in_);
  Kokkos::Array<std::int64_t, 3> stride{};
  stride[in_.order[2]] = 1;
  stride[in_.order[1]] = ie[2];
  stride[in_.order[0]] = ie[2] * ie[1];
  const auto oe = storage_extents(out_);
  const Kokkos::Array<int, 3> oo{out_.order[0], out_.order[1], out_.order[2]};
  Kokkos::parallel_for(
      "fft::local_permute", Kokkos::RangePolicy<DevExecSpace>(0, out_.size()),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t s2 = idx % oe[2];
        const std::int64_t t = idx / oe[2];
        const std::int64_t s1 = t % oe[1];
        const std::int64_t s0 = t / oe[1];
        dst(idx) = src(s0 * stride[oo[0]] + s1 * stride[oo[1]] + s2 * stride[oo[2]]);
      });
}

void Transpose::execute(const Complex* in, Complex* out) {
  if (size_ == 1) {
    local_permute(in, out);
    Kokkos::fence();
    return;
  }
  const ConstComplexArray src(in, in_.size());
  const ComplexArray dst(out, out_.size());
  const auto send = send_.device();
  const auto recv = recv_.device();
  {
    // Pack: every input element goes to the rank that owns its index along split_out, at its
    // place in the box (split_out range of that rank) x (this rank's input) in logical order.
    const BufferPlace place{storage_extents(in_),
                            {in_.order[0], in_.order[1], in_.order[2]},
                            {in_.extent[0], in_.extent[1], in_.extent[2]},
                            split_out_,
                            owner_out_,
                            out_begin_,
                            out_extent_,
                            send_offset_};
    Kokkos::parallel_for(
        "fft::transpose_pack", Kokkos::RangePolicy<DevExecSpace>(0, in_.size()),
        KOKKOS_LAMBDA(const std::int64_t idx) { send(place(idx)) = src(idx); });
  }
  send_.to_mpi(0, send_.size());
  MPI_Alltoallv(send_.mpi(), send_counts_.data(), send_displs_.data(), MPI_C_DOUBLE_COMPLEX,
                recv_.mpi(), recv_counts_.data(), recv_displs_.data(), MPI_C_DOUBLE_COMPLEX, comm_);
  recv_.from_mpi(0, recv_.size());
  {
    // Unpack: every output element comes from the rank that owned its index along split_in.
    const BufferPlace place{storage_extents(out_),
                            {out_.order[0], out_.order[1], out_.order[2]},
                            {out_.extent[0], out_.extent[1], out_.extent[2]},
                            split_in_,
                            owner_in_,
                            in_begin_,
                            in_extent_,
                            recv_offset_};
    Kokkos::parallel_for(
        "fft::transpose_unpack", Kokkos::RangePolicy<DevExecSpace>(0, out_.size()),
        KOKKOS_LAMBDA(const std::int64_t idx) { dst(idx) = recv(place(idx)); });
  }
  Kokkos::fence();
}

}  // namespace stratus::fft
