#include "stratus/solvers/md_analysis.hpp"

#include "stratus/kernels/analysis.hpp"

namespace stratus::analysis {

namespace ka = kernels::analysis;

std::vector<std::int64_t> pair_histogram(const std::vector<double>& position,
                                         const std::vector<int>& species,
                                         const PairHistogramRequest& request) {
  const std::size_t n = species.size();
  ka::Positions x("post::x", n);
  ka::Species type("post::type", n);
  ka::Counts counts("post::counts", static_cast<std::size_t>(request.bins));
  auto xh = Kokkos::create_mirror_view(x);
  auto th = Kokkos::create_mirror_view(type);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t a = 0; a < 3; ++a) xh(i, a) = position[3 * i + a];
    th(i) = species[i];
  }
  Kokkos::deep_copy(x, xh);
  Kokkos::deep_copy(type, th);
  ka::PairHistogramParams p;
  for (int a = 0; a < 3; ++a) p.box[a] = request.box[static_cast<std::size_t>(a)];
  p.rmax = request.rmax;
  p.bins = request.bins;
  p.type_a = request.type_a;
  p.type_b = request.type_b;
  const auto cells = ka::histogram_cells(p);
  if (cells[0] >= 3 && cells[1] >= 3 && cells[2] >= 3)
    ka::pair_histogram_cells(x, type, p, counts);
  else
    ka::pair_histogram(x, type, p, counts);
  auto ch = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  return std::vector<std::int64_t>(ch.data(), ch.data() + ch.extent(0));
}

std::vector<double> displacement_sums(std::vector<double> unwrapped, std::size_t frames,
                                      std::size_t atoms, bool unwrap_minimum_image,
                                      const std::array<double, 3>& box) {
  ka::Trajectory x("post::unwrapped", frames, atoms);
  {
    Kokkos::View<double** [3], Kokkos::LayoutRight, Kokkos::HostSpace,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        host(unwrapped.data(), frames, atoms);
    Kokkos::deep_copy(x, host);
  }
  if (unwrap_minimum_image) {
    for (std::size_t k = 1; k < frames; ++k)
      ka::unwrap_from_previous(x, static_cast<std::int64_t>(k), {box[0], box[1], box[2]});
  }
  std::vector<double> sums(frames, 0.0);
  for (std::size_t lag = 1; lag < frames; ++lag)
    sums[lag] = ka::displacement_sum(x, static_cast<std::int64_t>(lag));
  return sums;
}

}  // namespace stratus::analysis
