// Counter-based RNG: moments, histogram and lag correlations of 1e6 draws made on the device,
// bitwise agreement of host and device, reproducibility, and sensitivity to every key word.
// Statistical bounds are 5 standard errors of the estimator (the draws are deterministic, so
// a passing test always passes; a broken generator misses them by far).
#include "stratus/kernels/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace stratus::random_test {

using namespace stratus::kernels;
constexpr int n_draws = 1000000;
constexpr std::uint64_t seed = 20240611;

// Draws i = 0 .. n-1 with key (seed, stream, i, c1, c2) on the device.
std::vector<Real> draw(bool normal, std::uint64_t s, std::uint64_t stream, std::uint64_t c1,
                       std::uint64_t c2, int n = n_draws) {
  Kokkos::View<Real*, DevMemSpace> out("draws", n);
  Kokkos::parallel_for(
      "draw", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const auto c0 = static_cast<std::uint64_t>(i);
        out(i) = normal ? rng_normal(s, stream, c0, c1, c2) : rng_uniform(s, stream, c0, c1, c2);
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  return std::vector<Real>(h.data(), h.data() + n);
}

Real mean(const std::vector<Real>& a) {
  Real s = 0;
  for (Real v : a) s += v;
  return s / a.size();
}
Real central_moment(const std::vector<Real>& a, int k) {
  const Real m = mean(a);
  Real s = 0;
  for (Real v : a) s += std::pow(v - m, k);
  return s / a.size();
}
// Pearson correlation of a[i] and b[i + lag].
Real correlation(const std::vector<Real>& a, const std::vector<Real>& b, int lag) {
  const std::size_t n = a.size() - lag;
  Real ma = 0, mb = 0;
  for (std::size_t i = 0; i < n; ++i) ma += a[i], mb += b[i + lag];
  ma /= n;
  mb /= n;
  Real sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i + lag] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i + lag] - mb) * (b[i + lag] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

const Real n_real = n_draws;
const Real corr_tol = 5 / std::sqrt(n_real);  // sd of a correlation of independent samples

TEST(MdRandom, MixIsSplitMix64) {
  // First output of the reference SplitMix64 generator seeded with 0 (Vigna's splitmix64.c).
  EXPECT_EQ(rng_mix(0), 0xe220a8397b1dcdafULL);
}

TEST(MdRandom, UniformMomentsHistogramCorrelation) {
  const auto u = draw(false, seed, 7, 0, 0);
  for (Real v : u) ASSERT_TRUE(v > 0 && v < 1);
  // mean 1/2 (sd sqrt(1/12 / N)); variance 1/12 (sd sqrt((1/80 - 1/144) / N)).
  EXPECT_NEAR(mean(u), 0.5, 5 * std::sqrt(1.0 / 12 / n_real));
  EXPECT_NEAR(central_moment(u, 2), 1.0 / 12, 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / n_real));
  // chi^2 of a 100-bin histogram: 99 degrees of freedom, mean 99, sd sqrt(198).
  std::vector<int> bins(100, 0);
  for (Real v : u) ++bins[std::min(99, static_cast<int>(v * 100))];
  Real chi2 = 0;
  for (int b : bins) chi2 += (b - n_real / 100) * (b - n_real / 100) / (n_real / 100);
  EXPECT_LT(chi2, 99 + 5 * std::sqrt(198.0));
  EXPECT_GT(chi2, 99 - 5 * std::sqrt(198.0));
  for (int lag : {1, 2, 7, 64}) EXPECT_LT(std::fabs(correlation(u, u, lag)), corr_tol) << lag;
}

TEST(MdRandom, NormalMomentsAndTails) {
  const auto z = draw(true, seed, 7, 0, 0);
  EXPECT_NEAR(mean(z), 0, 5 / std::sqrt(n_real));
  EXPECT_NEAR(central_moment(z, 2), 1, 5 * std::sqrt(2 / n_real));   // Var(z^2) = 2
  EXPECT_NEAR(central_moment(z, 3), 0, 5 * std::sqrt(15 / n_real));  // Var(z^3) = 15
  EXPECT_NEAR(central_moment(z, 4), 3, 5 * std::sqrt(96 / n_real));  // Var(z^4) = 105 - 9
  const Real p2 = 0.04550026389635842;                               // P(|z| > 2)
  Real tail = 0;
  for (Real v : z) tail += std::fabs(v) > 2 ? 1 : 0;
  EXPECT_NEAR(tail / n_real, p2, 5 * std::sqrt(p2 * (1 - p2) / n_real));
  for (int lag : {1, 3, 64}) EXPECT_LT(std::fabs(correlation(z, z, lag)), corr_tol) << lag;
}

TEST(MdRandom, NeighbouringKeysAreIndependent) {
  // Same c0, adjacent values of each other key word: uncorrelated sequences.
  const auto base = draw(true, seed, 7, 0, 0);
  EXPECT_LT(std::fabs(correlation(base, draw(true, seed + 1, 7, 0, 0), 0)), corr_tol);
  EXPECT_LT(std::fabs(correlation(base, draw(true, seed, 8, 0, 0), 0)), corr_tol);
  EXPECT_LT(std::fabs(correlation(base, draw(true, seed, 7, 1, 0), 0)), corr_tol);
  EXPECT_LT(std::fabs(correlation(base, draw(true, seed, 7, 0, 1), 0)), corr_tol);
  // Swapping two counters gives a different stream.
  EXPECT_LT(std::fabs(correlation(draw(true, seed, 7, 1, 2), draw(true, seed, 7, 2, 1), 0)),
            corr_tol);
}

TEST(MdRandom, ReproducibleAndHostEqualsDevice) {
  const int n = 10000;
  const auto a = draw(true, seed, 3, 5, 9, n);
  const auto b = draw(true, seed, 3, 5, 9, n);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(a[i], b[i]);
    ASSERT_EQ(a[i], rng_normal(seed, 3, i, 5, 9));  // host call, same bits
  }
}

TEST(MdRandom, EveryKeyWordMatters) {
  const std::uint64_t k[5] = {seed, 1, 2, 3, 4};
  const auto h0 = rng_hash(k[0], k[1], k[2], k[3], k[4]);
  for (int w = 0; w < 5; ++w) {
    for (std::uint64_t flip : {1ULL, 1ULL << 31, 1ULL << 63}) {
      std::uint64_t kk[5] = {k[0], k[1], k[2], k[3], k[4]};
      kk[w] ^= flip;
      EXPECT_NE(rng_hash(kk[0], kk[1], kk[2], kk[3], kk[4]), h0) << w << " " << flip;
    }
  }
  // No collisions among 1e6 hashes of consecutive counters (expected number ~ 3e-8).
  std::vector<std::uint64_t> hs(n_draws);
  for (int i = 0; i < n_draws; ++i) hs[i] = rng_hash(seed, 1, i, 0, 0);
  std::sort(hs.begin(), hs.end());
  EXPECT_EQ(std::adjacent_find(hs.begin(), hs.end()), hs.end());
}

}  // namespace stratus::random_test
