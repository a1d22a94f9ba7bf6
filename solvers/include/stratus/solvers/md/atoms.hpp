// The atoms of one rank, on the device.
#pragma once

#include "stratus/core/particle_columns.hpp"
#include "stratus/kernels/md/types.hpp"

#include <string>

namespace stratus::md {

using kernels::md::GhostSides;
using kernels::md::Ids;
using kernels::md::Images;
using kernels::md::Types;
using kernels::md::Vectors;

/// Owned atoms are [0, nlocal); ghosts follow at [nlocal, nlocal + nghost). Arrays are sized by
/// `capacity()` >= nlocal + nghost and grown by reserve().
///
/// Every per-atom array is a column of `columns`, with flags saying where it goes: the typed
/// members below (which kernels use directly) are attached there, and add_column() declares
/// more. Migration carries every `migrate` column, ghost building every `ghost` column, with no
/// other code to write. Ghosts get x (through the exchange's own path, shifted across periodic
/// boundaries), type, id and ghost_side; v, f and image of a ghost are meaningless.
struct AtomData {
  Vectors x{"md::x", 0};
  Vectors v{"md::v", 0};
  Vectors f{"md::f", 0};
  Types type{"md::type", 0};
  Ids id{"md::id", 0};
  Images image{"md::image", 0};
  /// Each ghost's side of the subdomain (kernels::md::GhostSides), set by the ghost plan; 0 for
  /// owned atoms once build_ghosts has run.
  GhostSides ghost_side{"md::ghost_side", 0};
  /// Charges: a column only after attach_charges() (charged pair styles); empty otherwise.
  kernels::md::Charges q{"md::q", 0};
  int nlocal = 0;
  int nghost = 0;
  /// All of the above and every added column. Resizing goes through here (reserve()), which
  /// reallocates the members themselves: they are never stale.
  ParticleColumns columns;

  AtomData() {
    // x migrates; ghost positions travel by AtomExchange's own (shifted) path, not as a copy.
    columns.attach("position", x, {.migrate = true, .checkpoint = true, .trajectory = true});
    columns.attach("velocity", v,
                   {.migrate = true, .checkpoint = true, .trajectory = true, .owned_only = true});
    columns.attach("force", f, {.checkpoint = true});
    columns.attach("type", type,
                   {.migrate = true, .ghost = true, .checkpoint = true, .trajectory = true});
    columns.attach("id", id,
                   {.migrate = true, .ghost = true, .checkpoint = true, .trajectory = true});
    columns.attach("image", image,
                   {.migrate = true, .checkpoint = true, .trajectory = true, .owned_only = true});
    // Travels with a ghost (forwarded ones keep the side of their first hop); build_ghosts sets it.
    columns.attach("ghost_side", ghost_side, {.ghost = true});
  }
  // The columns point at the members: an AtomData stays where it was made.
  AtomData(const AtomData&) = delete;
  AtomData& operator=(const AtomData&) = delete;

  /// Makes q a column ("charge": migrates, goes to ghosts, checkpointed, in trajectories).
  void attach_charges() {
    columns.attach("charge", q,
                   {.migrate = true, .ghost = true, .checkpoint = true, .trajectory = true});
  }

  [[nodiscard]] int capacity() const { return static_cast<int>(x.extent(0)); }
  [[nodiscard]] int nall() const { return nlocal + nghost; }

  /// Declares a per-atom property of `N` values of `T` (any trivially copyable type), zero in
  /// every row; `flags` say whether it migrates, goes to ghosts, is checkpointed or written to
  /// trajectories. Returns its View, which a later reserve() replaces: fetch it again with
  /// column() after one. Throws RuntimeError when the name is taken.
  template <class T, int N = 1>
  ColumnView<T, N> add_column(std::string name, ColumnFlags flags) {
    return columns.add<T, N>(std::move(name), flags);
  }
  /// The current View of an added column; throws RuntimeError for an unknown name or another
  /// type or width.
  template <class T, int N = 1>
  [[nodiscard]] ColumnView<T, N> column(const std::string& name) const {
    return columns.view<T, N>(name);
  }

  /// Grows every column, added ones included, to at least `n` rows (with a sixteenth more: the
  /// count of atoms and ghosts of a rank moves by little between builds), keeping the first
  /// nall() rows (nlocal of the `owned_only` columns, v and image). Rows past those are not
  /// touched until written: the margin and the ghosts' velocities cost no memory. Never shrinks.
  void reserve(int n) {
    if (n <= capacity()) return;
    columns.resize(n + n / 16 + 16, nlocal, nall());
  }
};

}  // namespace stratus::md
