// The deck sections of the spectral solver ([spectral] and its subsections).
#include "stratus/solvers/spectral.hpp"

namespace stratus {

namespace {

/// [spectral], [spectral.time], [spectral.forcing]: the grid, the equations and the time stepping.
void declare_equations(Schema& schema) {
  auto& s =
      schema.section("spectral",
                     "Pseudo-spectral incompressible Navier-Stokes on a periodic 2D or 3D box "
                     "(docs/cfd-spectral.md).",
                     "spectral");
  s.add_int_list("points",
                 "Grid points (Fourier modes) along x, y and z; two entries for a 2D box. Any "
                 "sizes; FFTs are fastest for products of small primes.")
      .at_least(1);
  s.add_real_list("box", "Box lengths along each axis; [] for 2 pi on every axis.")
      .positive()
      .unit("length")
      .set_default(std::vector<double>{});
  s.add_real_list("origin",
                  "Coordinates of grid point (0, 0, 0) (initial conditions and snapshots); [] "
                  "for the origin.")
      .unit("length")
      .set_default(std::vector<double>{});
  s.add_real("viscosity", "Kinematic viscosity nu.").positive().unit("length^2/time");
  s.add_string("nonlinear",
               "Form of the nonlinear term: rotational (u x omega; 9 FFTs a stage in 3D) or "
               "skew (1/2 (u.grad u + div(u u)); 24 FFTs a stage in 3D).")
      .one_of({"rotational", "skew"})
      .set_default(std::string("rotational"));
  s.add_string("dealias",
               "two_thirds: modes with |m| >= N/3 on some axis are dropped (Orszag's 2/3 rule); "
               "none: only the Nyquist modes are.")
      .one_of({"two_thirds", "none"})
      .set_default(std::string("two_thirds"));

  auto& t = schema.section("spectral.time", "Time stepping.", "spectral");
  t.add_string("scheme",
               "Low-storage Runge-Kutta with an integrating factor for viscosity: rk3 "
               "(Williamson, 3 stages) or rk4 (Carpenter-Kennedy, 5 stages).")
      .one_of({"rk3", "rk4"})
      .set_default(std::string("rk4"));
  t.add_real("dt", "Fixed time step; 0 chooses it every step from `cfl`.")
      .at_least(0.0)
      .unit("time")
      .set_default(0.0);
  t.add_real("cfl",
             "Target advective CFL number dt max(|u|/dx + |v|/dy + |w|/dz) when dt = 0 "
             "(one global reduction a step).")
      .positive()
      .set_default(0.5);
  t.add_real("dt_max", "Largest time step when dt = 0 (0: no limit).")
      .at_least(0.0)
      .unit("time")
      .set_default(0.0);

  auto& f = schema.section("spectral.forcing", "Forcing.", "spectral");
  f.add_string("type",
               "none; kolmogorov: f_x = amplitude sin(k_f y), k_f = mode 2 pi / L_y; linear: f = "
               "c u on every mode with c set each stage so that the injection rate stays "
               "`injection` (Lundgren); band: the same on the modes with |k| in `band`.")
      .one_of({"none", "kolmogorov", "linear", "band"})
      .set_default(std::string("none"));
  f.add_real("amplitude", "Amplitude F of the Kolmogorov forcing.")
      .unit("length/time^2")
      .set_default(1.0);
  f.add_int("mode", "Mode number of the Kolmogorov forcing along y.")
      .at_least(1)
      .set_default(std::int64_t{1});
  f.add_real("injection", "Energy injection rate of linear and band forcing.")
      .positive()
      .unit("length^2/time^3")
      .set_default(0.1);
  f.add_real_list("band", "Wavenumber range [k_lo, k_hi] of band forcing.")
      .list_length(2)
      .at_least(0.0)
      .unit("1/length")
      .set_default(std::vector<double>{1.0, 2.5});
}

/// [spectral.initial]: the initial velocity.
void declare_initial(Schema& schema) {
  auto& i =
      schema.section("spectral.initial", "Initial velocity (projected and dealiased).", "spectral");
  i.add_string("type",
               "taylor_green: u = U sin(kx x) cos(ky y) cos(kz z), v = -U cos(kx x) sin(ky y) "
               "cos(kz z), w = 0 (2D: without the z factor); abc: the ABC flow with "
               "coefficients `abc` and wave number 2 pi modes[0] / L_x (3D, cubic box); random: "
               "a solenoidal field with E(k) ~ k^4 exp(-2 (k/peak)^2) scaled to `energy`, the "
               "same for a seed at any rank count; file: u, v, w from a Stratus field file.")
      .one_of({"taylor_green", "abc", "random", "file"})
      .set_default(std::string("taylor_green"));
  i.add_real("amplitude", "Velocity amplitude U of the Taylor-Green vortex.")
      .unit("length/time")
      .set_default(1.0);
  i.add_int_list("modes", "Mode numbers (kx, ky, kz in units of 2 pi / L) of Taylor-Green and ABC.")
      .list_length(3)
      .at_least(1)
      .set_default(std::vector<std::int64_t>{1, 1, 1});
  i.add_real_list("abc", "Coefficients A, B, C of the ABC flow.")
      .list_length(3)
      .set_default(std::vector<double>{1.0, 1.0, 1.0});
  i.add_real("energy", "Kinetic energy 1/2 <|u|^2> of the random field.")
      .positive()
      .unit("length^2/time^2")
      .set_default(0.5);
  i.add_real("peak", "Wavenumber of the peak of the random field's spectrum.")
      .positive()
      .unit("1/length")
      .set_default(4.0);
  i.add_int("seed", "Seed of the random field.").at_least(0).set_default(std::int64_t{1});
  i.add_string("file",
               "Stratus field file (a snapshot of this solver) with /fields/u, v and w of the "
               "deck's grid.")
      .set_default(std::string());
}

/// [spectral.fft] and [spectral.output].
void declare_numerics_and_output(Schema& schema) {
  auto& x = schema.section("spectral.fft", "Distributed FFTs (docs/cfd-spectral.md).", "spectral")
                .may_change_on_restart();
  x.add_string("decomposition",
               "slab (one all-to-all a transform), pencil (two, more ranks possible) or auto "
               "(a slab when the grid allows one).")
      .one_of({"auto", "slab", "pencil"})
      .set_default(std::string("auto"));
  x.add_int_list("process_grid", "P1 x P2 ranks (x split over P1, y over P2); [0, 0]: automatic.")
      .list_length(2)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{0, 0});
  x.add_string("backend", "FFT library: auto (cufft in CUDA builds, else fftw3), fftw3 or cufft.")
      .one_of({"auto", "fftw3", "cufft"})
      .set_default(std::string("auto"));
  x.add_string("planner",
               "FFTW planning: estimate (instant) or measure (about a second, faster transforms).")
      .one_of({"estimate", "measure"})
      .set_default(std::string("measure"));
  x.add_string("plans",
               "auto: on one rank, whole 3D transforms with no transpose where the library has "
               "them (FFTW), and the step's transforms skip the lines of dealiased modes, with "
               "u x omega formed between them plane by plane; lines: batched 1D transforms and "
               "transposes at any rank count, the only form before 2026-12-06 (it reproduces "
               "runs of earlier versions bit for bit with one thread per rank).")
      .one_of({"auto", "lines"})
      .set_default(std::string("auto"));

  auto& o = schema.section("spectral.output", "Diagnostics, spectra and snapshots.", "spectral")
                .may_change_on_restart();
  o.add_int("diag_every",
            "Diagnostics (log and NAME.diag.csv) every this many steps (0: first and last).")
      .at_least(0)
      .set_default(std::int64_t{10});
  o.add_int("spectrum_every",
            "Energy spectrum E(k) to NAME.spectrum.csv and NAME.spectra.h5 every this many "
            "steps (0: none).")
      .at_least(0)
      .set_default(std::int64_t{0});
  o.add_int("snapshot_every",
            "Velocity and vorticity to NAME.fields.STEP.h5 (series NAME.xmf for ParaView) "
            "every this many steps (0: none).")
      .at_least(0)
      .set_default(std::int64_t{0});
  o.add_bool("pressure",
             "Add the pressure p (mean 0 for p + |u|^2/2) to the snapshots (4 more FFTs each).")
      .set_default(false);
  o.add_bool("fft_timing",
             "At the end, time the FFTs of one step standalone and log the share of the step "
             "spent outside them (bench/spectral_step.sh).")
      .set_default(false);
}

}  // namespace

void SpectralConfig::declare(Schema& schema) {
  declare_equations(schema);
  declare_initial(schema);
  declare_numerics_and_output(schema);
}

}  // namespace stratus
