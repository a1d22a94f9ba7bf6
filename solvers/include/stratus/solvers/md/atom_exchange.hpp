// MPI communication of the MD solver: migration of owned atoms to the rank whose subdomain holds
// them, and ghost atoms (copies from the neighbours and periodic images) within the ghost
// cutoff of this rank's subdomain. Planned by build_ghosts, executed every step by
// update_ghosts.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/mpi_buffer.hpp"
#include "stratus/core/neighbor_exchange.hpp"
#include "stratus/core/types.hpp"
#include "stratus/solvers/md/atoms.hpp"

#include <array>
#include <cstdint>

namespace stratus::md {

/// Moves atoms between the subdomains of a CartDecomposition and keeps ghost atoms.
///
/// The geometry is MD's (which atom goes where); what travels is generic: migration carries
/// every column of `AtomData::columns` flagged `migrate`, ghost building every column flagged
/// `ghost` (one NeighborPlan per axis, executed by a ColumnExchange), so a new per-atom
/// property needs no code here. Ghost positions and the reverse force sums have their own
/// paths: they run every step and positions are shifted across periodic boundaries.
///
/// Axes are handled one after the other (x, then y, then z), each with the low and the high
/// neighbour; a ghost received on an earlier axis is forwarded on later ones, so edges and
/// corners are covered. Buffers live on the device, are filled and emptied by kernels, and MPI
/// reads them there or through host copies, as `transport` says (where the neighbour is this rank,
/// ghosts are unpacked straight from the send buffer, without MPI). Every call is collective over
/// the decomposition's communicator; the decomposition must outlive this object.
///
/// Typical use: migrate + build_ghosts when the neighbour list is rebuilt, update_ghosts on
/// every other step.
class AtomExchange {
 public:
  /// Plans nothing yet. Throws InputError when a subdomain is narrower than `ghost_cutoff`
  /// (cutoff + skin) along an axis that exchanges ghosts (periodic, or split over several
  /// ranks): ghosts come from the adjacent neighbour only. `global` is the whole box.
  AtomExchange(const CartDecomposition& decomposition, const Box& global, Real ghost_cutoff,
               MpiTransport transport);

  /// Sends owned atoms that are outside this rank's subdomain to their owners (every `migrate`
  /// column travels: x, v, type, id, image and any added one; f does not). Positions on periodic
  /// axes are first wrapped into [lo, hi) of the global box, counting the box lengths moved in
  /// `image` (an atom exactly at hi goes to lo). Throws RuntimeError, on every rank and with the
  /// same message, when an atom moved more than one subdomain along an axis, left the box through a
  /// non-periodic wall (outside [lo, hi)) or has a non-finite position; the message names the
  /// atom's id and position. Owned atoms keep no particular order. Drops all ghosts (nghost = 0)
  /// and the ghost plan.
  void migrate(AtomData& atoms);

  /// Plans and builds the ghosts: along each axis, atoms (owned, and ghosts of earlier axes)
  /// with x < sub_lo + ghost_cutoff go to the low neighbour and those with x >= sub_hi -
  /// ghost_cutoff to the high one, shifted by +-box length when crossing a periodic boundary.
  /// With one rank on a periodic axis the neighbour is this rank (periodic images). Faces on a
  /// non-periodic wall send nothing. Ghosts get x and every `ghost` column (type, id and any
  /// added one); replaces any previous ghosts.
  void build_ghosts(AtomData& atoms);

  /// Refreshes ghost positions from their owners with the plan of the last build_ghosts (same
  /// atoms, same order, same shifts). Call every step between rebuilds; throws RuntimeError
  /// when nlocal or nghost differ from the plan (e.g. after migrate).
  void update_ghosts(AtomData& atoms);

  /// The reverse of update_ghosts, for forces: adds each ghost's row of atoms.f to the atom it
  /// is a copy of (an owned atom here or on a neighbour; a ghost of an earlier axis passes it
  /// on, so ghost rows are meaningless afterwards), axes in the reverse order of the plan. For pair
  /// forces computed once per pair ("Newton on" half lists, where a ghost holds the reactions
  /// of the pairs listed on this rank). The sums run in plan order: deterministic. Throws
  /// RuntimeError as update_ghosts does.
  void reverse_forces(AtomData& atoms);

  /// update_ghosts for another per-atom array of 3 values (`rows`, at least nall rows): ghost
  /// rows get their owners' rows, shifted across periodic boundaries as positions are when
  /// `shift` (predicted positions), unshifted otherwise (velocities).
  void update_ghost_rows(const AtomData& atoms, const kernels::md::Vectors& rows, bool shift);
  /// reverse_forces for another per-atom array of 3 values (constraint forces).
  void reverse_rows(const AtomData& atoms, const kernels::md::Vectors& rows);

  /// A new global box (a barostat's step): the subdomains rescale with it and the ghosts'
  /// periodic shifts take its lengths, so that update_ghosts places the ghosts of the current
  /// plan in the new box. Throws InputError, as the constructor does, when a subdomain would be
  /// narrower than the ghost cutoff.
  void set_box(const Box& global);

  /// Number of ghosts of the current plan (0 before build_ghosts).
  [[nodiscard]] int ghost_count() const noexcept { return planned_nghost_; }
  /// Bytes this rank sends through MPI per update_ghosts (device copies to itself excluded).
  [[nodiscard]] std::int64_t update_bytes() const noexcept;
  [[nodiscard]] Real ghost_cutoff() const noexcept { return cutoff_; }
  [[nodiscard]] const Box& global_box() const noexcept { return global_; }
  /// This rank's subdomain.
  [[nodiscard]] const Box& local_box() const noexcept { return local_; }

 private:
  const CartDecomposition& decomposition_;
  Box global_;
  Box local_;
  Real cutoff_;
  std::array<Neighbors, 3> neighbor_{};  // per axis

  // Migration along the current axis (lists grow only), its buffers, and the compaction moves.
  NeighborPlan migration_;
  ColumnExchange migrants_;
  RowList holes_, fillers_;

  // Ghost plan per axis: atoms to send per side and how many come back (`rows`), and the shift
  // applied to the positions.
  struct AxisPlan {
    bool active = false;  // a neighbour on either side
    NeighborPlan rows;
    std::array<Real, 2> shift{0, 0};
    int recv_begin = 0;  // ghosts from the low neighbour, then from the high one, start here
    bool self = false;   // both neighbours are this rank: no MPI, no staging
    MpiBuffer<Real> send_x, recv_x;  // 3 Reals per atom, both sides back to back (also forces)
  };
  std::array<AxisPlan, 3> plan_;
  ColumnExchange ghost_columns_;  // what a new ghost gets besides its position

  // InputError for a box that is not finite and positive or whose subdomains are narrower than
  // the ghost cutoff along an axis that exchanges ghosts.
  void check_box(const Box& global) const;
  // The shifts of ghosts sent to the low and the high neighbour along `axis`: +-length across
  // a periodic boundary, else 0.
  [[nodiscard]] std::array<Real, 2> periodic_shift(int axis) const;
  // Sends the rows (positions: shifted) of axis `axis` of the plan into the ghosts' rows.
  void exchange_positions(const kernels::md::Vectors& x, int axis, bool shift);
  // Sends the ghosts' rows of axis `axis` back and adds them to the atoms they copy.
  void return_forces(const kernels::md::Vectors& f, int axis);
  // Throws unless a plan exists and matches the atoms (`what` names the caller).
  void check_plan(const AtomData& atoms, const char* what) const;
  int planned_nlocal_ = -1;  // -1: no plan
  int planned_nghost_ = 0;
};

}  // namespace stratus::md
