#include "stratus/solvers/md/atom_exchange.hpp"

#include "atom_exchange_kernels.hpp"
#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace stratus::md {

namespace {

using detail::AxisGeometry;

constexpr std::array<const char*, 3> kAxisName{"x", "y", "z"};
// Tags per message kind, then 2 * axis + direction of travel (neighbor_exchange.hpp): the two
// messages between the same pair of ranks (two ranks on a periodic axis) never mix.
constexpr int kTagCounts = 4300, kTagMigrants = 4310, kTagGhostColumns = 4320, kTagPositions = 4330,
              kTagForces = 4340;
int tag(int base, int axis) { return base + 2 * axis; }

template <class V>
void ensure(V& view, std::int64_t n) {
  if (static_cast<std::int64_t>(view.extent(0)) >= n && view.data() != nullptr) return;
  Kokkos::realloc(view, static_cast<std::size_t>(n + n / 4 + 16));
}

// Runs `select(low, high)`, which fills both lists as far as they hold and returns the counts
// it wanted (low | high << 32), growing the lists and running it again when they were short.
template <class Select>
std::array<int, 2> select_rows(std::array<RowList, 2>& list, Select&& select) {
  while (true) {
    const std::int64_t packed = select(list[0], list[1]);
    const std::int64_t n0 = packed & detail::kLowMask, n1 = packed >> 32;
    if (n0 <= static_cast<std::int64_t>(list[0].extent(0)) &&
        n1 <= static_cast<std::int64_t>(list[1].extent(0))) {
      return {static_cast<int>(n0), static_cast<int>(n1)};
    }
    ensure(list[0], n0);
    ensure(list[1], n1);
  }
}

// Makes every rank throw the same RuntimeError when any rank found a bad atom (`bad` from
// wrap_and_check), naming the first bad atom of the lowest such rank. One Allreduce when all
// is well.
void agree_on_atoms(MPI_Comm comm, int rank, std::int64_t bad, const AtomData& atoms,
                    const Kokkos::Array<AxisGeometry, 3>& geo) {
  struct {
    int fine;
    int rank;
  } mine{bad == detail::kNoFailure ? 1 : 0, rank}, first{1, 0};
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, comm);
  if (first.fine != 0) return;
  struct {
    Real x[3];
    Real sub_lo, sub_hi, lo, hi;
    GlobalId id;
    int code;
  } report{};
  if (rank == first.rank) {
    const auto i = static_cast<int>(bad / 16);
    report.code = static_cast<int>(bad % 16);
    const auto x = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(atoms.x, std::make_pair(i, i + 1), Kokkos::ALL));
    const auto id = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(atoms.id, std::make_pair(i, i + 1)));
    for (int d = 0; d < 3; ++d) report.x[d] = x(0, d);
    report.id = id(0);
    const AxisGeometry& g = geo[report.code % 3];
    report.sub_lo = g.sub_lo;
    report.sub_hi = g.sub_hi;
    report.lo = g.lo;
    report.hi = g.hi;
  }
  MPI_Bcast(&report, sizeof(report), MPI_BYTE, first.rank, comm);
  const char* axis = kAxisName[report.code % 3];
  const std::string where = fmt::format("atom {} at ({}, {}, {}) on rank {}", report.id,
                                        report.x[0], report.x[1], report.x[2], first.rank);
  switch (report.code / 3) {
    case 0:
      throw RuntimeError(fmt::format(
          "{} has a non-finite or runaway coordinate along {}: the simulation blew up (time "
          "step too large, overlapping atoms?)",
          where, axis));
    case 1:
      throw RuntimeError(fmt::format(
          "{} left the box through the non-periodic {} wall (the box spans [{}, {}) along {}): "
          "atoms must stay inside a non-periodic box",
          where, axis, report.lo, report.hi, axis));
    default:
      throw RuntimeError(fmt::format(
          "{} moved more than one subdomain along {} since the last migration (the rank owns "
          "[{}, {}) along {}): the time step is too large or atoms move too fast; migrate "
          "more often",
          where, axis, report.sub_lo, report.sub_hi, axis));
  }
}

}  // namespace

AtomExchange::AtomExchange(const CartDecomposition& decomposition, const Box& global,
                           Real ghost_cutoff, MpiTransport transport)
    : decomposition_(decomposition),
      global_(global),
      local_(decomposition.local_box(global)),
      cutoff_(ghost_cutoff),
      migrants_("stratus::md::AtomExchange::migrants", transport),
      ghost_columns_("stratus::md::AtomExchange::ghost_columns", transport) {
  for (int a = 0; a < 3; ++a) {
    plan_[a].send_x =
        MpiBuffer<Real>(fmt::format("stratus::md::AtomExchange::{}.send", kAxisName[a]), transport);
    plan_[a].recv_x =
        MpiBuffer<Real>(fmt::format("stratus::md::AtomExchange::{}.recv", kAxisName[a]), transport);
  }
  if (!(ghost_cutoff >= 0) || !std::isfinite(ghost_cutoff)) {
    throw InputError(fmt::format("the ghost cutoff (cutoff + skin) {} must be >= 0", ghost_cutoff));
  }
  for (int a = 0; a < 3; ++a) {
    neighbor_[a].comm = decomposition.comm();
    for (int s = 0; s < 2; ++s) neighbor_[a].rank[s] = decomposition.neighbor(a, s == 0 ? -1 : 1);
  }
  check_box(global);
}

void AtomExchange::check_box(const Box& global) const {
  for (int a = 0; a < 3; ++a) {
    const Real length = global.length(a);
    if (!(length > 0) || !std::isfinite(length)) {
      throw InputError(fmt::format("the box spans [{}, {}) along {}: its length must be > 0",
                                   global.lo[a], global.hi[a], kAxisName[a]));
    }
    const int d = decomposition_.dims()[a];
    if (!decomposition_.periodic()[a] && d == 1) continue;  // no ghosts along this axis
    // The narrowest block, the same on every rank: all ranks agree on the verdict.
    Real width = length;
    for (int c = 0; c < d; ++c) {
      width = std::min(width, detail::block_edge(global.lo[a], global.hi[a], d, c + 1) -
                                  detail::block_edge(global.lo[a], global.hi[a], d, c));
    }
    if (width < cutoff_) {
      const auto fit = static_cast<long long>(std::floor(length / cutoff_));
      throw InputError(fmt::format(
          "the subdomains are {:.6g} wide along {} ({} ranks over a box of length {:.6g}), "
          "narrower than the ghost cutoff (cutoff + skin) {:.6g}: ghosts come from the adjacent "
          "rank only, so {}; use fewer ranks along {}, a larger box or a shorter cutoff",
          width, kAxisName[a], d, length, cutoff_,
          fit == 0   ? std::string("the box itself is too short for any rank count")
          : fit == 1 ? fmt::format("only 1 rank fits along {}", kAxisName[a])
                     : fmt::format("at most {} ranks fit along {}", fit, kAxisName[a]),
          kAxisName[a]));
    }
  }
}

void AtomExchange::set_box(const Box& global) {
  check_box(global);
  global_ = global;
  local_ = decomposition_.local_box(global);
  for (int a = 0; a < 3; ++a) {
    plan_[a].shift = periodic_shift(a);
  }
}

std::array<Real, 2> AtomExchange::periodic_shift(int a) const {
  const bool periodic = decomposition_.periodic()[a];
  const int c = decomposition_.coords()[a], d = decomposition_.dims()[a];
  return {periodic && c == 0 ? global_.length(a) : 0,
          periodic && c == d - 1 ? -global_.length(a) : 0};
}

std::int64_t AtomExchange::update_bytes() const noexcept {
  std::int64_t bytes = 0;
  for (const AxisPlan& p : plan_) {
    if (!p.active || p.self) continue;
    for (int s = 0; s < 2; ++s)
      bytes += 3 * sizeof(Real) * static_cast<std::int64_t>(p.rows.send.count[s]);
  }
  return bytes;
}

void AtomExchange::migrate(AtomData& atoms) {
  Kokkos::Profiling::pushRegion("stratus::md::AtomExchange::migrate");
  atoms.nghost = 0;
  planned_nlocal_ = -1;
  planned_nghost_ = 0;
  const MPI_Comm comm = decomposition_.comm();
  const auto geo = detail::make_geometry(decomposition_, global_);
  agree_on_atoms(comm, decomposition_.rank(), detail::wrap_and_check(atoms, geo), atoms, geo);

  for (int a = 0; a < 3; ++a) {
    if (decomposition_.dims()[a] == 1) continue;  // everything is in this rank's block
    NeighborPlan& plan = migration_;
    plan.neighbors = neighbor_[a];
    plan.send.count = select_rows(plan.send.list, [&](RowList low, RowList high) {
      return detail::select_migrants(atoms.x, atoms.nlocal, a, geo[a], low, high);
    });
    migrants_.pack(atoms.columns, Travel::migrate, plan);
    // The atoms that stay fill the slots of those that leave.
    const int leaving = plan.send.rows(), n_stay = atoms.nlocal - leaving;
    ensure(holes_, leaving);
    ensure(fillers_, leaving);
    const int moves =
        detail::find_compaction(atoms.x, atoms.nlocal, n_stay, a, geo[a], holes_, fillers_);
    atoms.columns.move_rows(Travel::migrate, fillers_, holes_, moves);

    plan.recv_count = exchange_counts(plan.neighbors, tag(kTagCounts, a), plan.send.count);
    atoms.nlocal = n_stay;
    atoms.reserve(n_stay + plan.received());
    migrants_.transfer(atoms.columns, Travel::migrate, plan, tag(kTagMigrants, a), n_stay);
    atoms.nlocal = n_stay + plan.received();
  }
  DevExecSpace().fence();
  Kokkos::Profiling::popRegion();
}

void AtomExchange::build_ghosts(AtomData& atoms) {
  Kokkos::Profiling::pushRegion("stratus::md::AtomExchange::build_ghosts");
  atoms.nghost = 0;
  planned_nlocal_ = -1;
  planned_nghost_ = 0;
  const int me = decomposition_.rank();
  // Owned atoms have no side; their rows may hold a former ghost's.
  Kokkos::deep_copy(Kokkos::subview(atoms.ghost_side, std::make_pair(0, atoms.nlocal)),
                    std::uint8_t{0});
  for (int a = 0; a < 3; ++a) {
    AxisPlan& p = plan_[a];
    NeighborPlan& rows = p.rows;
    const std::array<int, 2>& nb = neighbor_[a].rank;
    rows.neighbors = neighbor_[a];
    p.active = nb[0] != MPI_PROC_NULL || nb[1] != MPI_PROC_NULL;
    p.self = rows.self(me);
    rows.send.count = {0, 0};
    rows.recv_count = {0, 0};
    p.recv_begin = atoms.nall();
    if (!p.active) continue;
    // Crossing the global boundary of a periodic axis makes a ghost an image one box away.
    p.shift = periodic_shift(a);

    // Owned atoms and the ghosts of earlier axes near either face.
    rows.send.count = select_rows(rows.send.list, [&](RowList low, RowList high) {
      return detail::select_ghosts(atoms.x, atoms.nall(), a, nb[0] != MPI_PROC_NULL,
                                   local_.lo[a] + cutoff_, nb[1] != MPI_PROC_NULL,
                                   local_.hi[a] - cutoff_, low, high);
    });
    const int n0 = rows.send.count[0], n1 = rows.send.count[1];
    // From ourselves, the low side receives what we send up, and vice versa.
    rows.recv_count = p.self ? std::array<int, 2>{n1, n0}
                             : exchange_counts(rows.neighbors, tag(kTagCounts, a), rows.send.count);
    const int received = rows.received();
    message_bytes(3 * std::int64_t{std::max(n0 + n1, received)}, sizeof(Real));

    // The ghost columns (ids, types, ...) travel once, here; positions as in every update.
    if (!p.self) {  // a rank that is its own neighbour copies rows directly
      p.send_x.reserve(3 * static_cast<std::size_t>(n0 + n1));
      p.recv_x.reserve(3 * static_cast<std::size_t>(received));  // also the ghosts' forces
    }
    atoms.reserve(p.recv_begin + received);
    ghost_columns_.pack(atoms.columns, Travel::ghost, rows);
    ghost_columns_.transfer(atoms.columns, Travel::ghost, rows, tag(kTagGhostColumns, a),
                            p.recv_begin);
    detail::mark_ghost_sides(atoms.ghost_side, p.recv_begin, rows.recv_count[0],
                             rows.recv_count[1]);
    atoms.nghost += received;
    exchange_positions(atoms.x, a, true);
  }
  planned_nlocal_ = atoms.nlocal;
  planned_nghost_ = atoms.nghost;
  DevExecSpace().fence();
  Kokkos::Profiling::popRegion();
}

void AtomExchange::check_plan(const AtomData& atoms, const char* what) const {
  if (planned_nlocal_ < 0) {
    throw RuntimeError(fmt::format(
        "AtomExchange::{}: no ghost plan; call build_ghosts first (migrate drops it)", what));
  }
  if (atoms.nlocal != planned_nlocal_ || atoms.nghost != planned_nghost_) {
    throw RuntimeError(fmt::format(
        "AtomExchange::{}: the atoms ({} owned, {} ghosts) do not match the ghost plan ({} "
        "owned, {} ghosts); call build_ghosts again",
        what, atoms.nlocal, atoms.nghost, planned_nlocal_, planned_nghost_));
  }
}

void AtomExchange::update_ghosts(AtomData& atoms) { update_ghost_rows(atoms, atoms.x, true); }

void AtomExchange::update_ghost_rows(const AtomData& atoms, const Vectors& rows, bool shift) {
  check_plan(atoms, "update_ghosts");
  Kokkos::Profiling::pushRegion("stratus::md::AtomExchange::update_ghosts");
  for (int a = 0; a < 3; ++a) exchange_positions(rows, a, shift);
  DevExecSpace().fence();
  Kokkos::Profiling::popRegion();
}

void AtomExchange::reverse_forces(AtomData& atoms) { reverse_rows(atoms, atoms.f); }

void AtomExchange::reverse_rows(const AtomData& atoms, const Vectors& rows) {
  check_plan(atoms, "reverse_forces");
  Kokkos::Profiling::pushRegion("stratus::md::AtomExchange::reverse_forces");
  for (int a = 3; a-- > 0;) return_forces(rows, a);
  DevExecSpace().fence();
  Kokkos::Profiling::popRegion();
}

void AtomExchange::exchange_positions(const Vectors& x, int axis, bool shift) {
  const AxisPlan& p = plan_[axis];
  if (!p.active) return;
  const RowParts& send = p.rows.send;
  const int n0 = send.count[0], n1 = send.count[1];
  const int r0 = p.rows.recv_count[0], r1 = p.rows.recv_count[1];
  if (p.self) {  // the ghosts from "below" are the images of what we send up, and vice versa
    detail::copy_ghost_positions(x, axis, send.list[0], n0, shift ? p.shift[0] : Real(0),
                                 send.list[1], n1, shift ? p.shift[1] : Real(0), p.recv_begin);
    return;
  }
  detail::pack_positions(x, axis, send.list[0], n0, shift ? p.shift[0] : Real(0), send.list[1], n1,
                         shift ? p.shift[1] : Real(0), p.send_x.device());
  exchange_buffers(p.rows.neighbors, tag(kTagPositions, axis), p.send_x,
                   {0, 3 * static_cast<std::size_t>(n0)}, {3 * n0, 3 * n1}, p.recv_x,
                   {3 * r0, 3 * r1});
  detail::unpack_positions(x, p.recv_begin, r0 + r1, r0, 0, r0, p.recv_x.device());
}

void AtomExchange::return_forces(const Vectors& f, int axis) {
  AxisPlan& p = plan_[axis];
  if (!p.active) return;
  const RowParts& send = p.rows.send;
  const int n0 = send.count[0], n1 = send.count[1];
  const int r0 = p.rows.recv_count[0], r1 = p.rows.recv_count[1];
  // The ghosts' rows, as received: r0 from the low neighbour, then r1 from the high one. Each
  // part goes back where it came from; what comes back is for the atoms we sent, low side first.
  if (p.self) {  // the ghosts from "below" are the images of what we sent up, and vice versa
    detail::add_ghost_rows(f, send.list[1], n1, p.recv_begin);
    detail::add_ghost_rows(f, send.list[0], n0, p.recv_begin + r0);
    return;
  }
  detail::pack_rows(f, p.recv_begin, r0 + r1, p.recv_x.device());
  exchange_buffers(p.rows.neighbors, tag(kTagForces, axis), p.recv_x,
                   {0, 3 * static_cast<std::size_t>(r0)}, {3 * r0, 3 * r1}, p.send_x,
                   {3 * n0, 3 * n1});
  // Two passes: an atom near both faces of a thin subdomain is in both lists.
  detail::add_rows(f, send.list[0], n0, p.send_x.device(), 0);
  detail::add_rows(f, send.list[1], n1, p.send_x.device(), 3 * n0);
}

}  // namespace stratus::md
