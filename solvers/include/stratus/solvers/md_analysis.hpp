// Trajectory analyses of `stratus post` that run as kernels (the radial distribution
// function's pair histogram, the mean-square displacement sums), behind a Kokkos-free
// interface: the command (host code) passes host arrays and gets host results.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stratus::analysis {

/// One frame's pair histogram: ordered pairs (i, j), i != j, type(i) = type_a and type(j) =
/// type_b (-1: any type), counted in `bins` bins of width rmax / bins by minimum-image distance
/// in the periodic box `box` (rmax <= half the shortest edge).
struct PairHistogramRequest {
  std::array<double, 3> box{};
  double rmax = 0;
  int bins = 0;
  int type_a = -1;
  int type_b = -1;
};

/// Counts per bin for atoms at `position` (3 per atom) with types `species` (0-based).
std::vector<std::int64_t> pair_histogram(const std::vector<double>& position,
                                         const std::vector<int>& species,
                                         const PairHistogramRequest& request);

/// Mean-square displacement sums of an unwrapped trajectory `unwrapped` (frames x atoms x 3,
/// row-major): entry lag (1 .. frames-1) is the sum over time origins and atoms of
/// |x(o + lag) - x(o)|^2; entry 0 is 0. With `unwrap_minimum_image`, each frame is first
/// unwrapped from the previous one by the minimum image in `box` (files without image data).
std::vector<double> displacement_sums(std::vector<double> unwrapped, std::size_t frames,
                                      std::size_t atoms, bool unwrap_minimum_image,
                                      const std::array<double, 3>& box);

}  // namespace stratus::analysis
