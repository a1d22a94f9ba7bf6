// Distributed FFTs: round trips to round-off, transforms of known signals, agreement of slab,
// pencil and a serial FFTW transform of the whole grid, at the rank count of the run (1, 2, 4).
#include "stratus/core/error.hpp"
#include "stratus/core/kokkos_compat.hpp"
#include "stratus/fft/distributed_fft.hpp"
#include "test_context.hpp"

#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

using namespace stratus;
using namespace stratus::fft;

namespace {

MPI_Comm comm() { return stratus::testing::context().comm(); }
int ranks() { return stratus::testing::context().size(); }

/// A value per global grid point that does not depend on the decomposition.
double signal(std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::uint64_t h =
      static_cast<std::uint64_t>((i * 73856093) ^ (j * 19349663) ^ (k * 83492791));
  return std::sin(0.37 * static_cast<double>(h % 1000)) + 0.1 * static_cast<double>(i - j + k);
}

RealField fill(const DistributedFft& f) {
  RealField u = f.make_real("u");
  auto h = Kokkos::create_mirror_view(u);
  const auto& b = f.real_block();
  for (std::int64_t i = 0; i < b.extent[0]; ++i)
    for (std::int64_t j = 0; j < b.extent[1]; ++j)
      for (std::int64_t k = 0; k < b.extent[2]; ++k)
        h(i, j, k) = signal(b.begin[0] + i, b.begin[1] + j, k);
  Kokkos::deep_copy(u, h);
  return u;
}

double global_max(double v) {
  double g = 0;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, MPI_MAX, comm());
  return g;
}

// Device kernels of the tests: free functions, since nvcc takes device lambdas only there (a
// TEST body is a private member function).

/// max |scale b - a| over this rank's points.
double max_scaled_difference(const RealField& b, double scale, const RealField& a) {
  double err = 0;
  Kokkos::parallel_reduce(
      "test::roundtrip", Kokkos::RangePolicy<DevExecSpace>(0, a.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i, double& e) {
        for (std::size_t j = 0; j < a.extent(1); ++j)
          for (std::size_t k = 0; k < a.extent(2); ++k) {
            const double d = kmath::fabs(b(i, j, k) * scale - a(i, j, k));
            e = e > d ? e : d;
          }
      },
      Kokkos::Max<double>(err));
  return err;
}

/// max |a| over this rank's points.
double max_abs(const RealField& a) {
  double mag = 0;
  Kokkos::parallel_reduce(
      "test::max", Kokkos::RangePolicy<DevExecSpace>(0, a.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i, double& e) {
        for (std::size_t j = 0; j < a.extent(1); ++j)
          for (std::size_t k = 0; k < a.extent(2); ++k) {
            const double d = kmath::fabs(a(i, j, k));
            e = e > d ? e : d;
          }
      },
      Kokkos::Max<double>(mag));
  return mag;
}

/// u = cos(2 pi (a i/Nx + b j/Ny + c k/Nz)) + m on this rank's block, which starts at (bx, by, 0).
void fill_wave(const RealField& u, std::int64_t bx, std::int64_t by, std::array<std::int64_t, 3> n,
               int a, int b, int c, double m) {
  const double two_pi = 2.0 * M_PI;
  const double nx = static_cast<double>(n[0]), ny = static_cast<double>(n[1]),
               nz = static_cast<double>(n[2]);
  Kokkos::parallel_for(
      "test::wave",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>({0, 0, 0},
                                                           {u.extent(0), u.extent(1), u.extent(2)}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k) {
        const double gi = static_cast<double>(bx + i);
        const double gj = static_cast<double>(by + j);
        u(i, j, k) = kmath::cos(two_pi * (a * gi / nx + b * gj / ny + c * k / nz)) + m;
      });
}

/// Serial FFTW r2c of the whole grid, [i][j][k] with k < Nz/2+1.
std::vector<std::complex<double>> serial_transform(std::array<std::int64_t, 3> n) {
  const std::int64_t nzc = n[2] / 2 + 1;
  std::vector<double> in(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (std::int64_t i = 0; i < n[0]; ++i)
    for (std::int64_t j = 0; j < n[1]; ++j)
      for (std::int64_t k = 0; k < n[2]; ++k) in[(i * n[1] + j) * n[2] + k] = signal(i, j, k);
  std::vector<std::complex<double>> out(static_cast<std::size_t>(n[0] * n[1] * nzc));
  fftw_plan p =
      fftw_plan_dft_r2c_3d(static_cast<int>(n[0]), static_cast<int>(n[1]), static_cast<int>(n[2]),
                           in.data(), reinterpret_cast<fftw_complex*>(out.data()), FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out;
}

/// max |distributed - serial| over this rank's spectral block, and max |serial|.
std::array<double, 2> compare_with_serial(const DistributedFft& f, const SpectralField& s,
                                          const std::vector<std::complex<double>>& ref) {
  auto h = Kokkos::create_mirror_view(s);
  Kokkos::deep_copy(h, s);
  const auto& b = f.spectral_block();
  const auto n = f.n();
  const std::int64_t nzc = f.nzc();
  double err = 0, scale = 0;
  for (std::int64_t kz = 0; kz < b.extent[2]; ++kz)
    for (std::int64_t ky = 0; ky < b.extent[1]; ++ky)
      for (std::int64_t kx = 0; kx < b.extent[0]; ++kx) {
        const auto r = ref[(kx * n[1] + b.begin[1] + ky) * nzc + b.begin[2] + kz];
        const auto v = h(kz, ky, kx);
        err = std::max(err, std::abs(std::complex<double>(v.real(), v.imag()) - r));
        scale = std::max(scale, std::abs(r));
      }
  return {global_max(err), global_max(scale)};
}

struct Case {
  std::array<std::int64_t, 3> n;
  Decomposition d;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (auto n : {std::array<std::int64_t, 3>{16, 16, 16}, std::array<std::int64_t, 3>{12, 10, 9},
                 std::array<std::int64_t, 3>{8, 20, 14}, std::array<std::int64_t, 3>{24, 16, 1}})
    for (auto d : {Decomposition::slab, Decomposition::pencil}) {
      if (d == Decomposition::pencil && n[2] / 2 + 1 < 2 && ranks() > 1) continue;  // 2D: slabs
      out.push_back({n, d});
    }
  return out;
}

}  // namespace

// Both MPI transports: MPI on the device buffers, and through separate host copies.
TEST(DistributedFft, RoundTripToRoundOff) {
  for (const auto& c : cases())
    for (const MpiTransport t : {MpiTransport::direct, MpiTransport::staged}) {
      Options o;
      o.decomposition = c.d;
      o.transport = t;
      DistributedFft f(comm(), c.n, o);
      if (c.d == Decomposition::pencil && ranks() > 1) {
        EXPECT_EQ(f.decomposition(), Decomposition::pencil);
      }
      const RealField u = fill(f);
      SpectralField s = f.make_spectral("s");
      RealField back = f.make_real("back");
      f.forward(u, s);
      f.backward(s, back);
      const double scale = 1.0 / static_cast<double>(c.n[0] * c.n[1] * c.n[2]);
      double err = max_scaled_difference(back, scale, u), mag = max_abs(u);
      err = global_max(err);
      mag = global_max(mag);
      EXPECT_LT(err / mag, 1e-14) << f.describe() << " " << c.n[0] << "x" << c.n[1] << "x"
                                  << c.n[2];
    }
}

// A cosine wave cos(2 pi (a i/Nx + b j/Ny + c k/Nz)) + m has exactly two non-zero r2c modes
// (+-(a,b,c), one stored when c > 0) of N/2 and the mean N m.
TEST(DistributedFft, KnownSignal) {
  const std::array<std::int64_t, 3> n{16, 12, 10};
  const int a = 3, b = -2, c = 4;
  const double m = 0.25;
  for (auto d : {Decomposition::slab, Decomposition::pencil}) {
    Options o;
    o.decomposition = d;
    DistributedFft f(comm(), n, o);
    RealField u = f.make_real("u");
    const std::int64_t bx = f.real_block().begin[0], by = f.real_block().begin[1];
    fill_wave(u, bx, by, n, a, b, c, m);
    SpectralField s = f.make_spectral("s");
    f.forward(u, s);
    auto h = Kokkos::create_mirror_view(s);
    Kokkos::deep_copy(h, s);
    const auto sb = f.spectral_block();
    const double total = static_cast<double>(n[0] * n[1] * n[2]);
    double err = 0;
    for (std::int64_t kz = 0; kz < sb.extent[2]; ++kz)
      for (std::int64_t ky = 0; ky < sb.extent[1]; ++ky)
        for (std::int64_t kx = 0; kx < sb.extent[0]; ++kx) {
          const std::int64_t gx = kx, gy = sb.begin[1] + ky, gz = sb.begin[2] + kz;
          std::complex<double> expect = 0;
          if (gx == 0 && gy == 0 && gz == 0) expect = total * m;
          if (gx == a && gy == (b + n[1]) % n[1] && gz == c) expect = total / 2;
          const auto v = h(kz, ky, kx);
          err = std::max(err, std::abs(std::complex<double>(v.real(), v.imag()) - expect));
        }
    EXPECT_LT(global_max(err) / total, 1e-14) << f.describe();
  }
}

// Slab and pencil decompositions give the serial transform of the whole grid to round-off.
TEST(DistributedFft, SlabAndPencilAgreeWithSerial) {
  for (const auto& c : cases()) {
    Options o;
    o.decomposition = c.d;
    DistributedFft f(comm(), c.n, o);
    const RealField u = fill(f);
    SpectralField s = f.make_spectral("s");
    f.forward(u, s);
    const auto [err, scale] = compare_with_serial(f, s, serial_transform(c.n));
    EXPECT_LT(err / scale, 1e-13) << f.describe() << " " << c.n[0] << "x" << c.n[1] << "x"
                                  << c.n[2];
    // forward() leaves its input alone; backward() too.
    SpectralField copy = f.make_spectral("copy");
    Kokkos::deep_copy(copy, s);
    RealField back = f.make_real("back");
    f.backward(s, back);
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), copy);
    bool same = true;
    for (std::size_t i = 0; i < hs.size(); ++i) same = same && hs.data()[i] == hc.data()[i];
    EXPECT_TRUE(same) << "backward() changed its input";
  }
}

TEST(DistributedFft, ProcessGrids) {
  EXPECT_EQ(choose_process_grid(4, {16, 16, 16}, Decomposition::automatic),
            (std::array<int, 2>{4, 1}));
  EXPECT_EQ(choose_process_grid(4, {16, 16, 16}, Decomposition::pencil),
            (std::array<int, 2>{2, 2}));
  EXPECT_EQ(choose_process_grid(2, {16, 16, 16}, Decomposition::pencil),
            (std::array<int, 2>{1, 2}));
  // Too few x planes for a slab of 8: auto falls back to pencils.
  EXPECT_EQ(choose_process_grid(8, {4, 16, 16}, Decomposition::automatic),
            (std::array<int, 2>{4, 2}));
  EXPECT_THROW((void)choose_process_grid(8, {4, 16, 16}, Decomposition::slab), InputError);
  EXPECT_THROW((void)choose_process_grid(4, {16, 16, 1}, Decomposition::pencil), InputError);
  EXPECT_THROW((void)choose_process_grid(4, {16, 16, 16}, Decomposition::automatic, {3, 1}),
               InputError);
}

namespace {

/// Kept by the box |m| <= kmax of Options::truncation (signed mode numbers, kz >= 0).
bool in_box(std::array<std::int64_t, 3> g, std::array<std::int64_t, 3> n,
            std::array<std::int64_t, 3> kmax) {
  for (int a = 0; a < 2; ++a) {
    const std::int64_t m = 2 * g[a] <= n[a] ? g[a] : n[a] - g[a];
    if (m > kmax[a]) return false;
  }
  return g[2] <= kmax[2];
}

}  // namespace

// The truncated transforms of a dealiased solver: forward_truncated() gives forward()'s modes
// inside the box; backward_truncated() of a spectrum that vanishes outside it gives backward()'s
// field and leaves its input alone. In any order of calls: the scratch that a forward or a full
// backward leaves behind (one rank: pruned plans) must not leak into the next truncated
// backward.
TEST(DistributedFft, TruncatedTransformsAgreeWithFullOnes) {
  for (const auto& c : cases())
    for (const std::int64_t q : {3, 2}) {
      Options o;
      o.decomposition = c.d;
      for (int a = 0; a < 3; ++a) o.truncation[a] = (c.n[a] - 1) / q;
      DistributedFft f(comm(), c.n, o);
      const std::string what = f.describe() + " " + std::to_string(c.n[0]) + "x" +
                               std::to_string(c.n[1]) + "x" + std::to_string(c.n[2]) +
                               " q=" + std::to_string(q);
      if (ranks() == 1) {
        EXPECT_NE(f.describe().find("dealiased lines skipped"), std::string::npos) << what;
      }
      const RealField u = fill(f);
      SpectralField full = f.make_spectral("full"), tr = f.make_spectral("tr");
      Kokkos::deep_copy(tr, Complex(7.0, -3.0));
      f.forward(u, full);
      f.forward_truncated(u, tr);
      auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), full);
      auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tr);
      const auto sb = f.spectral_block();
      double err = 0, mag = 0;
      // full inside the box, zero outside
      SpectralField masked = f.make_spectral("masked");
      auto hm = Kokkos::create_mirror_view(masked);
      for (std::int64_t kz = 0; kz < sb.extent[2]; ++kz)
        for (std::int64_t ky = 0; ky < sb.extent[1]; ++ky)
          for (std::int64_t kx = 0; kx < sb.extent[0]; ++kx) {
            const bool kept = in_box({kx, sb.begin[1] + ky, sb.begin[2] + kz}, c.n, o.truncation);
            const auto v = hf(kz, ky, kx);
            if (kept) {
              err = std::max(err, Kokkos::abs(ht(kz, ky, kx) - v));
              mag = std::max(mag, Kokkos::abs(v));
            }
            hm(kz, ky, kx) = kept ? v : Complex(0.0, 0.0);
          }
      EXPECT_LT(global_max(err) / global_max(mag), 1e-14) << "forward " << what;
      Kokkos::deep_copy(masked, hm);
      RealField expect = f.make_real("expect"), got = f.make_real("got");
      f.backward(masked, expect);
      const double scale = global_max(max_abs(expect));
      // After a forward (above), after a full backward (just now) and after a truncated one.
      for (int round = 0; round < 2; ++round) {
        f.backward_truncated(masked, got);
        EXPECT_LT(global_max(max_scaled_difference(got, 1.0, expect)) / scale, 1e-14)
            << "backward round " << round << " " << what;
      }
      f.forward_truncated(u, tr);
      f.backward_truncated(masked, got);
      EXPECT_LT(global_max(max_scaled_difference(got, 1.0, expect)) / scale, 1e-14)
          << "backward after a forward " << what;
      auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), masked);
      bool same = true;
      for (std::size_t i = 0; i < after.size(); ++i) same = same && after.data()[i] == hm.data()[i];
      EXPECT_TRUE(same) << "backward_truncated() changed its input " << what;
    }
}

// fused_pointwise() (one rank): the z transforms, a pointwise operation and the y transforms
// plane by plane give what the truncated transforms and the operation on whole fields give,
// on the kept modes, twice in a row (scratch left by the first call must not leak into the
// second), on grids whose planes are not a multiple of 32 bytes.
TEST(DistributedFft, FusedPointwiseAgreesWithSeparateTransforms) {
  for (const auto n :
       {std::array<std::int64_t, 3>{16, 16, 16}, std::array<std::int64_t, 3>{12, 10, 9},
        std::array<std::int64_t, 3>{16, 9, 8}}) {
    Options o;
    for (int a = 0; a < 3; ++a) o.truncation[a] = (n[a] - 1) / 3;
    DistributedFft f(comm(), n, o);
    if (ranks() > 1) {
      EXPECT_FALSE(f.fuses());
      continue;
    }
    ASSERT_TRUE(f.fuses()) << f.describe();
    // Three band-limited inputs: the truncated transforms of three fields.
    SpectralField in[3] = {f.make_spectral("a"), f.make_spectral("b"), f.make_spectral("c")};
    RealField r[3] = {fill(f), f.make_real("rb"), f.make_real("rc")};
    fill_wave(r[1], 0, 0, n, 1, 2, -1, 0.5);
    fill_wave(r[2], 0, 0, n, 2, -1, 1, -0.25);
    for (int c = 0; c < 3; ++c) f.forward_truncated(r[c], in[c]);
    // Mask: the inputs vanish outside the box, as the precondition says.
    const auto sb = f.spectral_block();
    for (auto& s : in) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
      for (std::int64_t kz = 0; kz < sb.extent[2]; ++kz)
        for (std::int64_t ky = 0; ky < sb.extent[1]; ++ky)
          for (std::int64_t kx = 0; kx < sb.extent[0]; ++kx)
            if (!in_box({kx, ky, kz}, n, o.truncation)) h(kz, ky, kx) = Complex(0.0, 0.0);
      Kokkos::deep_copy(s, h);
    }
    // Expected: back to the grid, f0 <- f0 f1 + f2, f1 <- f1 - f2 f2, then forward.
    RealField g[3] = {f.make_real("g0"), f.make_real("g1"), f.make_real("g2")};
    for (int c = 0; c < 3; ++c) f.backward_truncated(in[c], g[c]);
    auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g[0]);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g[1]);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g[2]);
    double largest = 0;
    for (std::size_t i = 0; i < h0.size(); ++i) {
      const double a = h0.data()[i], b = h1.data()[i], c = h2.data()[i];
      h0.data()[i] = a * b + c;
      h1.data()[i] = b - c * c;
      largest = std::max(largest, std::fabs(a));
    }
    Kokkos::deep_copy(g[0], h0);
    Kokkos::deep_copy(g[1], h1);
    SpectralField expect[2] = {f.make_spectral("e0"), f.make_spectral("e1")};
    for (int c = 0; c < 2; ++c) f.forward_truncated(g[c], expect[c]);
    const std::int64_t points = n[1] * n[2];
    for (int round = 0; round < 2; ++round) {
      SpectralField got[2] = {f.make_spectral("o0"), f.make_spectral("o1")};
      const double v = f.fused_pointwise(in, 3, got, 2, [=](double* const* p, std::int64_t) {
        double m = 0;
        for (std::int64_t i = 0; i < points; ++i) {
          const double a = p[0][i], b = p[1][i], c = p[2][i];
          p[0][i] = a * b + c;
          p[1][i] = b - c * c;
          m = std::max(m, std::fabs(a));
        }
        return m;
      });
      EXPECT_NEAR(v, largest, 1e-12 * largest) << "the largest value op returned";
      double err = 0, mag = 0;
      for (int c = 0; c < 2; ++c) {
        auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), expect[c]);
        auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got[c]);
        for (std::int64_t kz = 0; kz < sb.extent[2]; ++kz)
          for (std::int64_t ky = 0; ky < sb.extent[1]; ++ky)
            for (std::int64_t kx = 0; kx < sb.extent[0]; ++kx)
              if (in_box({kx, ky, kz}, n, o.truncation)) {
                err = std::max(err, Kokkos::abs(hg(kz, ky, kx) - he(kz, ky, kx)));
                mag = std::max(mag, Kokkos::abs(he(kz, ky, kx)));
              }
      }
      EXPECT_LT(err / mag, 1e-13) << "round " << round << " " << n[0] << "x" << n[1] << "x" << n[2];
    }
  }
}
