// Kernels of `stratus post` (kernels/analysis.hpp): the cell-binned pair histogram gives
// exactly the counts of the all-pairs one and of a host double loop (random atoms of two
// types, positions also outside the box, several rmax); displacement sums against the host.
// The np1 run uses two threads, so races in the atomics show.
#include "stratus/kernels/analysis.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stratus::analysis_test {

namespace ka = kernels::analysis;

std::vector<std::int64_t> host_counts(const std::vector<double>& x, const std::vector<int>& t,
                                      const ka::PairHistogramParams& p) {
  const std::size_t n = t.size();
  std::vector<std::int64_t> h(static_cast<std::size_t>(p.bins), 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j || (p.type_a >= 0 && t[i] != p.type_a) || (p.type_b >= 0 && t[j] != p.type_b))
        continue;
      double r2 = 0;
      for (int a = 0; a < 3; ++a) {
        double d = x[3 * j + a] - x[3 * i + a];
        d -= p.box[a] * std::nearbyint(d / p.box[a]);
        r2 += d * d;
      }
      if (r2 < p.rmax * p.rmax)
        ++h[std::min<std::size_t>(static_cast<std::size_t>(std::sqrt(r2) / (p.rmax / p.bins)),
                                  static_cast<std::size_t>(p.bins - 1))];
    }
  return h;
}

TEST(Analysis, CellHistogramEqualsAllPairsAndHost) {
  std::mt19937_64 rng(11);
  const int n = 900;
  const double box[3] = {9.0, 10.5, 12.0};
  std::uniform_real_distribution<double> u(-0.2, 1.2);  // some atoms outside [0, L)
  ka::Positions x("x", n);
  ka::Species t("t", n);
  auto xh = Kokkos::create_mirror_view(x);
  auto th = Kokkos::create_mirror_view(t);
  std::vector<double> xs(3 * n);
  std::vector<int> ts(n);
  for (int i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) xs[3 * i + a] = xh(i, a) = u(rng) * box[a];
    ts[i] = th(i) = static_cast<int>(rng() % 2);
  }
  Kokkos::deep_copy(x, xh);
  Kokkos::deep_copy(t, th);
  for (const double rmax : {1.5, 2.9, 3.0}) {
    for (const auto& types : {std::pair{-1, -1}, std::pair{0, 1}, std::pair{1, 1}}) {
      ka::PairHistogramParams p;
      p.box = {box[0], box[1], box[2]};
      p.rmax = rmax;
      p.bins = 37;
      p.type_a = types.first;
      p.type_b = types.second;
      const auto nc = ka::histogram_cells(p);
      ASSERT_GE(nc[0], 3);
      ka::Counts all("all", p.bins), cells("cells", p.bins);
      ka::pair_histogram(x, t, p, all);
      ka::pair_histogram_cells(x, t, p, cells);
      auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), all);
      auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cells);
      const auto h = host_counts(xs, ts, p);
      std::int64_t total = 0;
      for (int b = 0; b < p.bins; ++b) {
        EXPECT_EQ(a(b), h[b]) << "rmax " << rmax << " bin " << b;
        EXPECT_EQ(c(b), h[b]) << "rmax " << rmax << " bin " << b;
        total += h[b];
      }
      EXPECT_GT(total, 1000);
    }
  }
}

TEST(Analysis, DisplacementSumAndUnwrap) {
  const int frames = 6, n = 50;
  const double box = 4.0;
  ka::Trajectory x("x", frames, n);
  auto xh = Kokkos::create_mirror_view(x);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);  // < box / 2 per frame
  std::vector<double> v(3 * n), x0(3 * n);
  for (auto& e : v) e = u(rng);
  for (auto& e : x0) e = (u(rng) + 1.5) / 3 * box;
  for (int f = 0; f < frames; ++f)
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a) {
        const double un = x0[3 * i + a] + f * v[3 * i + a];
        xh(f, i, a) = un - box * std::floor(un / box);  // wrapped
      }
  Kokkos::deep_copy(x, xh);
  for (int f = 1; f < frames; ++f) ka::unwrap_from_previous(x, f, {box, box, box});
  double v2 = 0;
  for (const double e : v) v2 += e * e;
  for (int lag = 1; lag < frames; ++lag) {
    const double sum = ka::displacement_sum(x, lag);
    EXPECT_NEAR(sum, (frames - lag) * v2 * lag * lag, 1e-10 * sum) << "lag " << lag;
  }
  EXPECT_EQ(ka::displacement_sum(x, frames), 0.0);
}

}  // namespace stratus::analysis_test
