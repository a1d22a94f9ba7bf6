// The euler solver's deck sections: [euler], [euler.boundary], [euler.viscosity] and
// [euler.initial] (docs/input-reference.md is generated from them).
#include "euler_names.hpp"
#include "stratus/solvers/euler.hpp"

#include <fmt/format.h>

namespace stratus {

using euler_names::kFaces;
using euler_names::kProblems;

namespace {

/// [euler]: the grid, the gas and the scheme.
void declare_scheme(Schema& schema) {
  auto& e = schema.section(
      "euler",
      "Compressible Euler / Navier-Stokes equations of an ideal gas, finite volumes on a uniform "
      "grid (docs/cfd-euler.md). An axis with 1 cell is inactive: 1D and 2D runs.",
      "euler");
  e.add_int_list("cells", "Grid cells along x, y and z (1 on an unused axis).")
      .list_length(3)
      .at_least(1);
  e.add_real_list("box_lo", "Low corner of the box.")
      .list_length(3)
      .unit("length")
      .set_default(std::vector<double>{0.0, 0.0, 0.0});
  e.add_real_list("box_hi", "High corner of the box (each > box_lo).")
      .list_length(3)
      .unit("length")
      .set_default(std::vector<double>{1.0, 1.0, 1.0});
  e.add_real("gamma", "Ratio of specific heats of the ideal gas.")
      .greater_than(1.0)
      .set_default(1.4);
  e.add_real("cfl",
             "Courant number: dt = cfl / max(sum_a (|u_a| + c) / dx_a + viscous term), the sum "
             "over the active axes (Athena++'s C per direction is about cfl / dimensions). The "
             "default is the largest found safe by bench/euler_cfl_sweep.sh with a margin (every "
             "scheme and shipped problem ran stably at 1.0): see docs/cfd-euler.md.")
      .greater_than(0.0)
      .at_most(1.0)
      .set_default(0.8);
  e.add_real("t_end",
             "Simulated time at which the run ends (the last step is shortened to reach it); 0: "
             "run.steps only. run.steps stays an upper bound.")
      .at_least(0.0)
      .unit("time")
      .set_default(0.0)
      .may_change_on_restart();  // like run.steps, only where to stop
  e.add_string("integrator",
               "Time integrator: rk2 (SSP Heun), rk3 (SSP Shu-Osher) or rk4 (classical, for "
               "smooth flows).")
      .one_of({"rk2", "rk3", "rk4"})
      .set_default(std::string("rk3"));
  e.add_string("reconstruction",
               "Face values: first_order, plm (piecewise linear, primitive variables), weno5 "
               "(Jiang-Shu) or weno5z (WENO-Z), both on conserved variables.")
      .one_of({"first_order", "plm", "weno5", "weno5z"})
      .set_default(std::string("plm"));
  e.add_string("limiter", "Slope limiter of plm.")
      .one_of({"minmod", "mc", "van_leer"})
      .set_default(std::string("mc"));
  e.add_string("riemann", "Riemann solver.")
      .one_of({"hllc", "hlle", "rusanov"})
      .set_default(std::string("hllc"));
  e.add_bool("fourth_order",
             "With weno5/weno5z on a 2D or 3D grid: fluxes from point values at face centres "
             "and averaged over faces (h^2/24 transverse corrections): fourth order in smooth "
             "flow instead of second.")
      .set_default(false);
  e.add_int_list("ranks", "MPI ranks along x, y and z; 0 lets MPI_Dims_create choose.")
      .list_length(3)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{0, 0, 0});
  e.add_int("log_every", "Log and write totals every this many steps (0: first and last only).")
      .at_least(0)
      .set_default(std::int64_t{10})
      .may_change_on_restart();
  e.add_real("field_interval",
             "Write a field file every this much simulated time (0: at the start and the end).")
      .at_least(0.0)
      .unit("time")
      .set_default(0.0)
      .may_change_on_restart();
  e.add_bool("write_fields", "Write field files and their XDMF index.")
      .set_default(true)
      .may_change_on_restart();
}

/// [euler.boundary], [euler.viscosity] and [euler.initial].
void declare_boundaries_and_initial(Schema& schema) {
  auto& b = schema.section("euler.boundary",
                           "Boundary condition of each face: periodic (both faces of an axis), "
                           "outflow (zero gradient), reflecting (wall) or inflow (fixed state).",
                           "euler");
  for (const auto& f : kFaces)
    b.add_string(f, "Boundary of face " + f + ".")
        .one_of({"periodic", "outflow", "reflecting", "inflow"})
        .set_default(std::string("periodic"));
  b.add_real_list("inflow", "Primitive state (rho, u, v, w, p) of every inflow face.")
      .list_length(5)
      .set_default(std::vector<double>{1.0, 0.0, 0.0, 0.0, 1.0});

  auto& v = schema.section(
      "euler.viscosity",
      "Navier-Stokes terms: viscosity mu(T) and heat conduction k = mu c_p / Pr, with "
      "T = p / (rho R) and c_p = gamma R / (gamma - 1).",
      "euler");
  v.add_string("model",
               "none (Euler), constant (mu = mu) or sutherland (mu (T/T_ref)^1.5 (T_ref + S) / "
               "(T + S)).")
      .one_of({"none", "constant", "sutherland"})
      .set_default(std::string("none"));
  v.add_real("mu", "Dynamic viscosity (at T_ref for sutherland).")
      .at_least(0.0)
      .unit("mass/(length time)")
      .set_default(0.0);
  v.add_real("prandtl", "Prandtl number.").positive().set_default(0.72);
  v.add_real("gas_constant", "Specific gas constant R.").positive().set_default(1.0);
  v.add_real("t_ref", "Reference temperature of Sutherland's law.").positive().set_default(1.0);
  v.add_real("sutherland",
             "Sutherland constant S (a temperature; air: 110.4 K / 273.15 K * T_ref).")
      .positive()
      .set_default(0.4042);

  auto& i = schema.section(
      "euler.initial",
      "Initial condition. Keys other than `problem` apply to some problems only (each says "
      "which); setting one the problem does not read is an error.",
      "euler");
  i.add_string("problem",
               "riemann (Sod, Lax, ...), shu_osher, riemann2d, kelvin_helmholtz, "
               "isentropic_vortex, sedov or taylor_green.")
      .one_of(kProblems);
  i.add_real_list("left", "riemann, shu_osher: primitive state (rho, u, v, w, p) for x < x0.")
      .list_length(5)
      .set_default(std::vector<double>{1.0, 0.0, 0.0, 0.0, 1.0});
  i.add_real_list("right",
                  "riemann, shu_osher: state for x >= x0 (shu_osher: its density is multiplied "
                  "by 1 + amplitude sin(wavenumber x)).")
      .list_length(5)
      .set_default(std::vector<double>{0.125, 0.0, 0.0, 0.0, 0.1});
  i.add_real("x0", "riemann, shu_osher: position of the initial discontinuity.")
      .unit("length")
      .set_default(0.5);
  i.add_real("amplitude",
             "shu_osher: density perturbation; kelvin_helmholtz: amplitude of the seeded v.")
      .set_default(0.2);
  i.add_real("wavenumber", "shu_osher: wavenumber of the density perturbation.")
      .unit("1/length")
      .set_default(5.0);
  i.add_real_list("centre",
                  "riemann2d: the corner of the quadrants; isentropic_vortex: vortex centre; "
                  "sedov: blast centre. Empty list: the box centre.")
      .unit("length")
      .set_default(std::vector<double>{});
  for (const char* q : {"upper_right", "upper_left", "lower_left", "lower_right"})
    i.add_real_list(q, fmt::format("riemann2d: primitive state of the {} quadrant.", q))
        .list_length(5)
        .set_default(std::vector<double>{1.0, 0.0, 0.0, 0.0, 1.0});
  i.add_real_list("velocity", "isentropic_vortex: background velocity.")
      .list_length(3)
      .unit("length/time")
      .set_default(std::vector<double>{1.0, 1.0, 0.0});
  i.add_real("strength", "isentropic_vortex: vortex strength beta.").set_default(5.0);
  i.add_real("energy", "sedov: energy deposited.").positive().set_default(1.0);
  i.add_real("radius",
             "sedov: radius of the deposit (cells whose centre lies inside share the energy).")
      .positive()
      .unit("length")
      .set_default(0.05);
  i.add_real("ambient_pressure", "sedov: pressure of the cold gas.").positive().set_default(1e-5);
  i.add_real("mach", "taylor_green: Mach number V0 / c0 (V0 = rho0 = 1).")
      .positive()
      .set_default(0.1);
}

}  // namespace

void EulerConfig::declare(Schema& schema) {
  declare_scheme(schema);
  declare_boundaries_and_initial(schema);
}

}  // namespace stratus
