// Pppm (pppm.hpp): parameters from the requested accuracy, the influence function, and the
// per-step solve on Stratus's distributed FFT.
#include "stratus/solvers/md/pppm.hpp"

#include "stratus/core/device.hpp"
#include "stratus/core/error.hpp"
#include "stratus/fft/distributed_fft.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace stratus::md {

namespace kmd = kernels::md;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Coefficients a_m^(P) of the ik-PPPM error estimate, P = 1 .. 7, m < P: Deserno and Holm,
/// J. Chem. Phys. 109 (1998) 7694, Table I (as LAMMPS's pppm.cpp also tabulates them).
double error_coefficient(int order, int m) {
  static const double a[8][7] = {
      {},
      {2.0 / 3.0},
      {1.0 / 50.0, 5.0 / 294.0},
      {1.0 / 588.0, 7.0 / 1440.0, 21.0 / 3872.0},
      {1.0 / 4320.0, 3.0 / 1936.0, 7601.0 / 2271360.0, 143.0 / 28800.0},
      {1.0 / 23232.0, 7601.0 / 13628160.0, 143.0 / 69120.0, 517231.0 / 106536960.0,
       106640677.0 / 11737571328.0},
      {691.0 / 68140800.0, 13.0 / 57600.0, 47021.0 / 35512320.0, 9694607.0 / 2095994880.0,
       733191589.0 / 59609088000.0, 326190917.0 / 11700633600.0},
      {1.0 / 345600.0, 3617.0 / 35512320.0, 745739.0 / 838397952.0, 56399353.0 / 12773376000.0,
       25091609.0 / 1560084480.0, 1755948832039.0 / 36229939200000.0,
       4887769399.0 / 37838389248.0}};
  return a[order][m];
}

/// True when n has no prime factor but 2, 3 and 5 (fast FFT sizes).
bool factorable(int n) {
  for (const int p : {2, 3, 5})
    while (n % p == 0) n /= p;
  return n == 1;
}

/// Sums a grid over the ranks (through a host copy where MPI cannot read device memory).
void allreduce_grid(MPI_Comm comm, const kmd::Grid3& grid) {
  Kokkos::fence();
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible) {
    MPI_Allreduce(MPI_IN_PLACE, grid.data(), static_cast<int>(grid.size()), MPI_DOUBLE, MPI_SUM,
                  comm);
  } else {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grid);
    MPI_Allreduce(MPI_IN_PLACE, h.data(), static_cast<int>(h.size()), MPI_DOUBLE, MPI_SUM, comm);
    Kokkos::deep_copy(grid, h);
  }
}

/// sin(x) / x.
double sinc(double x) { return std::abs(x) < 1e-12 ? 1.0 : std::sin(x) / x; }

/// The wavevector index of FFT position i of n points: i for i < n/2, i - n after (n/2 -> -n/2).
int frequency(std::int64_t i, std::int64_t n) { return static_cast<int>(2 * i < n ? i : i - n); }

}  // namespace

Pppm::Pppm(Context& ctx, const PppmSettings& settings, const Box& box, double cutoff, double qqrd2e,
           double two_charge_force, const ChargeSums& charges)
    : ctx_(ctx),
      order_(settings.order),
      cutoff_(cutoff),
      qqrd2e_(qqrd2e),
      two_charge_force_(two_charge_force),
      charges_(charges) {
  for (int d = 0; d < 3; ++d) length_[d] = box.length(d);
  volume_ = length_[0] * length_[1] * length_[2];
  if (!(charges_.qsqsum > 0))
    throw InputError(
        "md.kspace: the system has no charges (sum of q^2 is 0): PPPM has nothing "
        "to compute; take a pair style without a long-range part");
  const double accuracy = settings.accuracy * two_charge_force_;  // absolute, force units
  const double q2 = charges_.qsqsum * qqrd2e_;
  const auto natoms = static_cast<double>(charges_.natoms);
  // The Ewald parameter from the real-space error alone (Kolafa and Perram), as a start.
  g_ = settings.g_ewald;
  if (g_ <= 0) {
    g_ = accuracy * std::sqrt(natoms * cutoff_ * volume_) / (2.0 * q2);
    g_ = g_ >= 1.0 ? (1.35 - 0.15 * std::log(accuracy)) / cutoff_
                   : std::sqrt(-std::log(g_)) / cutoff_;
  }
  // The grid, per axis as LAMMPS's PPPM chooses it for ik differentiation (so that both codes
  // take the same grid for the same request): from n = L g + 1, add points while the error at
  // the previous spacing exceeds the accuracy (which ends one point past the first size that
  // meets it), then up to the next size of factors 2, 3 and 5.
  n_ = settings.mesh;
  if (n_[0] <= 0 || n_[1] <= 0 || n_[2] <= 0) {
    for (int d = 0; d < 3; ++d) {
      double h = 1.0 / g_;
      int n = static_cast<int>(length_[d] / h) + 1;
      for (double err = axis_error(h, length_[d]); err > accuracy; h = length_[d] / n) {
        err = axis_error(h, length_[d]);
        ++n;
        if (n > 4096)
          throw InputError(
              fmt::format("md.kspace.accuracy: {:g} needs more than 4096 PPPM grid "
                          "points along an axis for this system; ask for less",
                          settings.accuracy));
      }
      while (!factorable(n)) ++n;
      n_[d] = n;
    }
  }
  // Then g so that the real-space and k-space errors are equal (Newton's method).
  if (settings.g_ewald <= 0) {
    for (int it = 0; it < 100; ++it) {
      const double f0 = real_estimate() - kspace_estimate();
      if (std::abs(f0) < 1e-5 * accuracy) break;
      const double dg = 1e-6 * g_;
      const double g0 = g_;
      g_ = g0 + dg;
      const double f1 = real_estimate() - kspace_estimate();
      g_ = g0 - f0 * dg / (f1 - f0);
      if (!(g_ > 0) || !std::isfinite(g_)) {
        g_ = g0;
        break;
      }
    }
  }
  df_kspace_ = kspace_estimate();
  df_real_ = real_estimate();
  estimated_ = std::sqrt(df_kspace_ * df_kspace_ + df_real_ * df_real_) / two_charge_force_;

  fft::Options options;
  options.transport = device::choice(ctx).transport;
  fft_ = std::make_unique<fft::DistributedFft>(
      ctx.comm(), std::array<std::int64_t, 3>{n_[0], n_[1], n_[2]}, options);
  rho_ = kmd::Grid3("md::pppm_rho", n_[0], n_[1], n_[2]);
  ex_ = kmd::Grid3("md::pppm_ex", n_[0], n_[1], n_[2]);
  ey_ = kmd::Grid3("md::pppm_ey", n_[0], n_[1], n_[2]);
  ez_ = kmd::Grid3("md::pppm_ez", n_[0], n_[1], n_[2]);
  block_ = fft_->make_real("md::pppm_block");
  fx_ = fft_->make_real("md::pppm_fx");
  fy_ = fft_->make_real("md::pppm_fy");
  fz_ = fft_->make_real("md::pppm_fz");
  spectrum_ = fft_->make_spectral("md::pppm_spectrum");
  work_ = fft_->make_spectral("md::pppm_work");
  tabulate_influence();
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible) {
    const auto& rb = fft_->real_block();
    const std::int64_t plane = std::int64_t(n_[1]) * n_[2];
    const int whole = rb.begin[1] == 0 && rb.begin[2] == 0 && rb.extent[1] == n_[1] &&
                              rb.extent[2] == n_[2] && rb.extent[0] * plane < (1LL << 31)
                          ? 1
                          : 0;
    const int mine[3] = {whole, static_cast<int>(rb.begin[0] * plane),
                         static_cast<int>(rb.extent[0] * plane)};
    std::vector<int> all(3 * static_cast<std::size_t>(ctx.size()));
    MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, ctx.comm());
    slabs_ = true;
    std::int64_t next = 0;
    for (int r = 0; r < ctx.size(); ++r) {
      const int* a = &all[3 * static_cast<std::size_t>(r)];
      slabs_ = slabs_ && a[0] == 1 && a[1] == next;
      next += a[2];
      slab_begin_.push_back(a[1]);
      slab_count_.push_back(a[2]);
    }
    slabs_ = slabs_ && next == std::int64_t(n_[0]) * plane;
  }
}

Pppm::~Pppm() = default;

double Pppm::axis_error(double h, double length) const {
  double sum = 0;
  for (int m = 0; m < order_; ++m) sum += error_coefficient(order_, m) * std::pow(h * g_, 2.0 * m);
  const double q2 = charges_.qsqsum * qqrd2e_;
  return q2 * std::pow(h * g_, order_) *
         std::sqrt(g_ * length * std::sqrt(2.0 * kPi) * sum /
                   static_cast<double>(charges_.natoms)) /
         (length * length);
}

double Pppm::kspace_estimate() const {
  double s = 0;
  for (int d = 0; d < 3; ++d) {
    const double e = axis_error(length_[d] / n_[d], length_[d]);
    s += e * e;
  }
  return std::sqrt(s / 3.0);
}

double Pppm::real_estimate() const {
  const double q2 = charges_.qsqsum * qqrd2e_;
  return 2.0 * q2 * std::exp(-g_ * g_ * cutoff_ * cutoff_) /
         std::sqrt(static_cast<double>(charges_.natoms) * cutoff_ * volume_);
}

void Pppm::tabulate_influence() {
  // Per axis and spectral index: k, the aliases' q, U^2(q) = sinc(q h / 2)^2P and
  // exp(-q^2 / 4g^2) for |m| <= kPppmAlias, and the denominator's sum of U^2 to |m| <= 10; the
  // kernel combines them (kmd::optimal_influence).
  constexpr int kAlias = kmd::kPppmAlias, kAliasDenominator = 10;
  const auto& sb = fft_->spectral_block();
  const auto ext = sb.extent;
  if (influence_.extent(0) == 0)
    influence_ = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>("md::pppm_influence",
                                                                           ext[2], ext[1], ext[0]);
  const double inv4g2 = 0.25 / (g_ * g_);
  kmd::AliasTable q[3], u2[3], ex[3];
  kmd::AxisTable den[3];
  for (int d = 0; d < 3; ++d) {
    if (k_[d].extent(0) == 0) k_[d] = kmd::AxisTable("md::pppm_k", ext[d]);
    q[d] = kmd::AliasTable("md::pppm_alias_q", ext[d]);
    u2[d] = kmd::AliasTable("md::pppm_alias_u2", ext[d]);
    ex[d] = kmd::AliasTable("md::pppm_alias_exp", ext[d]);
    den[d] = kmd::AxisTable("md::pppm_denominator", ext[d]);
    auto hk = Kokkos::create_mirror_view(k_[d]);
    auto hq = Kokkos::create_mirror_view(q[d]);
    auto hu = Kokkos::create_mirror_view(u2[d]);
    auto he = Kokkos::create_mirror_view(ex[d]);
    auto hd = Kokkos::create_mirror_view(den[d]);
    const double h = length_[d] / n_[d];
    for (std::int64_t i = 0; i < ext[d]; ++i) {
      const std::int64_t global = sb.begin[d] + i;
      // kz runs over 0 .. Nz/2 (the r2c half), the others in FFT order.
      const int f = d == 2 ? static_cast<int>(global) : frequency(global, n_[d]);
      const double k = 2.0 * kPi * f / length_[d];
      hk(i) = k;
      double s = 0;
      for (int m = -kAliasDenominator; m <= kAliasDenominator; ++m)
        s += std::pow(sinc(0.5 * (k + 2.0 * kPi * m / h) * h), 2 * order_);
      hd(i) = s;
      for (int m = -kAlias; m <= kAlias; ++m) {
        const double qm = k + 2.0 * kPi * m / h;
        hq(i, m + kAlias) = qm;
        hu(i, m + kAlias) = std::pow(sinc(0.5 * qm * h), 2 * order_);
        he(i, m + kAlias) = std::exp(-inv4g2 * qm * qm);
      }
    }
    Kokkos::deep_copy(k_[d], hk);
    Kokkos::deep_copy(q[d], hq);
    Kokkos::deep_copy(u2[d], hu);
    Kokkos::deep_copy(ex[d], he);
    Kokkos::deep_copy(den[d], hd);
  }
  kmd::optimal_influence(k_, q, u2, ex, den, influence_);
}

void Pppm::set_box(const Box& box) {
  for (int d = 0; d < 3; ++d) length_[d] = box.length(d);
  volume_ = length_[0] * length_[1] * length_[2];
  tabulate_influence();
}

std::string Pppm::describe() const {
  return fmt::format(
      "PPPM order {}, grid {} x {} x {}, g_ewald {:.6g}, estimated relative force accuracy {:.3g} "
      "(k-space {:.3g}, real space {:.3g}); FFT {}",
      order_, n_[0], n_[1], n_[2], g_, estimated_, kspace_error(), real_error(), fft_->describe());
}

namespace {

/// Copies the FFT block of the global grid into `block` (or back: `to_global`, adding).
void copy_block(const kmd::Grid3& global, const kmd::Grid3& block, std::array<std::int64_t, 3> at,
                bool to_global) {
  const auto x0 = at[0], y0 = at[1], z0 = at[2];
  Kokkos::parallel_for(
      "md::pppm_block",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>(
          {0, 0, 0},
          {static_cast<std::int64_t>(block.extent(0)), static_cast<std::int64_t>(block.extent(1)),
           static_cast<std::int64_t>(block.extent(2))}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k) {
        if (to_global)
          global(x0 + i, y0 + j, z0 + k) = block(i, j, k);
        else
          block(i, j, k) = global(x0 + i, y0 + j, z0 + k);
      });
}

using Spectrum = Kokkos::View<Kokkos::complex<double>***, Kokkos::LayoutRight, DevMemSpace>;

kmd::SpectralSums spectral_sums(
    const Spectrum& f, const Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>& influence,
    const Kokkos::View<double*, DevMemSpace>& kx, const Kokkos::View<double*, DevMemSpace>& ky,
    const Kokkos::View<double*, DevMemSpace>& kz, std::int64_t z0, std::int64_t nz, double g) {
  kmd::SpectralSums sums;
  const double inv4g2 = 0.25 / (g * g);
  Kokkos::parallel_reduce(
      "md::pppm_energy",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>(
          {0, 0, 0},
          {static_cast<std::int64_t>(f.extent(0)), static_cast<std::int64_t>(f.extent(1)),
           static_cast<std::int64_t>(f.extent(2))}),
      KOKKOS_LAMBDA(const std::int64_t c, const std::int64_t b, const std::int64_t a,
                    kmd::SpectralSums& acc) {
        const std::int64_t kzi = z0 + c;
        const double weight = kzi == 0 || 2 * kzi == nz ? 1.0 : 2.0;
        const auto v = f(c, b, a);
        const double e = weight * influence(c, b, a) * (v.real() * v.real() + v.imag() * v.imag());
        const double k2 = kx(a) * kx(a) + ky(b) * ky(b) + kz(c) * kz(c);
        // The virial tensor of one k vector, E_k (delta_ab - 2 (1 + k^2 / (4 g^2)) k_a k_b / k^2)
        // (Essmann et al., J. Chem. Phys. 103 (1995) 8577, eq. 2.8), on its diagonal; its trace
        // is E_k (1 - k^2 / (2 g^2)). k = 0 holds no energy (G = 0).
        const double s = k2 > 0 ? 2.0 * (1.0 / k2 + inv4g2) : 0.0;
        acc.energy += e;
        acc.virial[0] += e * (1.0 - s * kx(a) * kx(a));
        acc.virial[1] += e * (1.0 - s * ky(b) * ky(b));
        acc.virial[2] += e * (1.0 - s * kz(c) * kz(c));
      },
      sums);
  return sums;
}

/// work = -i k_d G F / V (d = axis), the derivative zero at Nyquist indices.
void field_spectrum(const Spectrum& f, const Spectrum& work,
                    const Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>& influence,
                    const Kokkos::View<double*, DevMemSpace>& k, int axis,
                    std::array<std::int64_t, 3> begin, std::array<int, 3> n, double inv_volume) {
  const std::int64_t b0 = begin[axis];
  const int nn = n[axis];
  Kokkos::parallel_for(
      "md::pppm_field",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>(
          {0, 0, 0},
          {static_cast<std::int64_t>(f.extent(0)), static_cast<std::int64_t>(f.extent(1)),
           static_cast<std::int64_t>(f.extent(2))}),
      KOKKOS_LAMBDA(const std::int64_t c, const std::int64_t b, const std::int64_t a) {
        const std::int64_t i = axis == 0 ? a : (axis == 1 ? b : c);
        const bool nyquist = 2 * (b0 + i) == nn;
        const double kd = nyquist ? 0.0 : k(i);
        const double s = kd * influence(c, b, a) * inv_volume;
        const auto v = f(c, b, a);
        work(c, b, a) = Kokkos::complex<double>(s * v.imag(), -s * v.real());  // -i s v
      });
}

}  // namespace

Pppm::Result Pppm::compute(const kmd::Vectors& x, const kmd::Charges& q, int nlocal,
                           const kmd::Vectors& f, bool energy) {
  const Kokkos::Array<Real, 3> inv_h{n_[0] / length_[0], n_[1] / length_[1], n_[2] / length_[2]};
  Kokkos::deep_copy(rho_, 0.0);
  kmd::assign_charges(x, q, nlocal, order_, inv_h, rho_);
  const auto& rb = fft_->real_block();
  if (slabs_) {
    Kokkos::fence();
    MPI_Reduce_scatter(rho_.data(), block_.data(), slab_count_.data(), MPI_DOUBLE, MPI_SUM,
                       ctx_.comm());
  } else {
    allreduce_grid(ctx_.comm(), rho_);
    copy_block(rho_, block_, rb.begin, false);
  }
  fft_->forward(block_, spectrum_);
  const auto& sb = fft_->spectral_block();
  Result r;
  if (energy) {
    const kmd::SpectralSums s =
        spectral_sums(spectrum_, influence_, k_[0], k_[1], k_[2], sb.begin[2], n_[2], g_);
    double sums[4] = {s.energy, s.virial[0], s.virial[1], s.virial[2]};
    MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, ctx_.comm());
    const double background = -kPi * charges_.qsum * charges_.qsum / (2.0 * volume_ * g_ * g_);
    const double self = -g_ / std::sqrt(kPi) * charges_.qsqsum;
    r.energy = qqrd2e_ * (0.5 / volume_ * sums[0] + self + background);
    // The background energy scales as 1 / V: its virial is `background` on each diagonal
    // component (3 background in the trace).
    for (int a = 0; a < 3; ++a)
      r.virial[static_cast<std::size_t>(a)] = qqrd2e_ * (0.5 / volume_ * sums[1 + a] + background);
  }
  const kmd::Grid3* fields[3] = {&fx_, &fy_, &fz_};
  const kmd::Grid3* global[3] = {&ex_, &ey_, &ez_};
  for (int d = 0; d < 3; ++d) {
    field_spectrum(spectrum_, work_, influence_, k_[d], d, sb.begin, n_, 1.0 / volume_);
    fft_->backward(work_, *fields[d]);
    if (slabs_) {
      Kokkos::fence();
      MPI_Allgatherv(fields[d]->data(), slab_count_[static_cast<std::size_t>(ctx_.rank())],
                     MPI_DOUBLE, global[d]->data(), slab_count_.data(), slab_begin_.data(),
                     MPI_DOUBLE, ctx_.comm());
    } else {
      Kokkos::deep_copy(*global[d], 0.0);
      copy_block(*global[d], *fields[d], rb.begin, true);
    }
  }
  if (!slabs_)
    for (int d = 0; d < 3; ++d) allreduce_grid(ctx_.comm(), *global[d]);
  kmd::interpolate_forces(x, q, nlocal, order_, inv_h, qqrd2e_, ex_, ey_, ez_, f);
  return r;
}

}  // namespace stratus::md
