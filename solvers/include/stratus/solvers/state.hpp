// What a solver's state is made of, declared once at setup (in the manner of Parthenon's
// StateDescriptor): the driver saves it into checkpoints, restores it and sizes the checkpoint
// interval from this declaration; no solver writes or reads a checkpoint itself.
//
// Entries bind the solver's own members (the descriptor keeps pointers and callbacks: it must not
// outlive the solver). Restore order: the clock (step, time, dt from the checkpoint's info), the
// invariants, the values, the fields, the particles, then the solver's `on_restored` hook (state
// derived from what came back: ghosts, tables, the next time step). The dataset names are the
// checkpoint format (docs/file-formats.md): renaming an entry breaks old checkpoints, which the
// checkpoint.legacy_format test catches.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/grid_array.hpp"
#include "stratus/io/checkpoint.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stratus {

class StateDescriptor {
 public:
  /// How a declared value comes back from a checkpoint.
  enum class Restore {
    required,   ///< the checkpoint must hold it (InputError naming the file otherwise)
    optional,   ///< older checkpoints may lack it: the value set up by the solver stays
    same_size,  ///< required, and with as many values as the solver set up (a deck-fixed length)
  };

  /// What the checkpoint says of the run besides its state (root attributes, `stratus info`):
  /// the solver's name, its units ("lj", "" for dimensionless), the time step it reports, and
  /// its layout at a save ("2x1x1", "pencil-2x1"; for humans only).
  struct Identity {
    std::string solver;
    std::string units;
    const double* dt = nullptr;
    std::function<std::string()> layout;
  };
  void identity(Identity id);
  /// "AxBxC" of a process grid (the usual layout).
  static std::function<std::string()> grid_layout(const CartDecomposition& decomposition);

  /// The solver's clock: set from the checkpoint's info (step, time, dt) on restore; `time` and
  /// `dt` may be null where the solver derives them.
  void clock(std::int64_t* step, double* time = nullptr, double* dt = nullptr);

  /// Replicated values (the same on every rank), /state/NAME.
  void value(std::string name, double* v, Restore how = Restore::required);
  void value(std::string name, std::int64_t* v, Restore how = Restore::required);
  void values(std::string name, std::vector<double>* v, Restore how = Restore::required);
  void values(std::string name, std::vector<std::int64_t>* v, Restore how = Restore::required);

  /// A value the deck fixes (a grid's size, a box): saved, and compared on restore; a
  /// checkpoint that disagrees is refused: "PATH: WHAT AxBxC in the checkpoint, DxExF now".
  void invariant(std::string name, std::vector<std::int64_t> value, std::string what);
  void invariant(std::string name, std::vector<double> value, std::string what);
  /// Saved for readers of the file (and the particles' `place`), never restored (`get` is asked
  /// at each save: a process grid, a list kind).
  void record(std::string name, std::function<std::vector<std::int64_t>()> get);

  /// A grid field: this rank's `block` of a global array of `global` cells, read and written
  /// through `array` (the interior starts after `ghost` layers). `before_save` fills the array
  /// (a copy out of a packed state) after `array` was asked for it, `after_restore` stores it
  /// back; either may be empty.
  struct Field {
    std::string name;
    std::function<GridArray()> array;
    int ghost = 0;
    GridBlock block;
    std::array<std::int64_t, 3> global{};
    std::function<void()> before_save;
    std::function<void()> after_restore;
  };
  void field(Field f);

  /// Per-particle columns, /particles/NAME in global-id order. At a save, `ids` gives the global
  /// ids of this rank's rows and `real_values` / `int_values` one named column of those rows
  /// (the writer asks for one column at a time and drops it once written: a checkpoint never
  /// holds a second copy of the whole state). On restore each rank gets a block of the global
  /// rows (any rank count) and `place` puts them where they belong (it may route them to other
  /// ranks; it gets the reader for the recorded layout). Collective.
  using Column = io::ParticleSource::Column;
  struct Particles {
    const std::int64_t* n_global = nullptr;
    std::vector<Column> reals, ints;
    std::function<std::vector<std::int64_t>()> ids;
    std::function<std::vector<double>(const std::string&)> real_values;
    std::function<std::vector<std::int64_t>(const std::string&)> int_values;
    std::function<void(const io::CheckpointReader&, io::ParticleColumns&&)> place;
  };
  void particles(Particles p);

  /// Called last on restore, with the reader (for the log and any recorded layout).
  void on_restored(std::function<void(const io::CheckpointReader&)> hook);

  // --- The driver's side ---
  /// The checkpoint's info at `step` and `time`, written by the execution space `backend`.
  [[nodiscard]] io::CheckpointInfo info(std::int64_t step, double time, std::string backend) const;
  /// Writes every entry. Collective.
  void save(io::CheckpointWriter& out) const;
  /// Reads every entry back (the file was verified before, or its reads are checked as they
  /// come: io::CheckpointReader::verify_unread). Collective. Throws InputError naming the file
  /// for a checkpoint that does not fit the declaration.
  void restore(const io::CheckpointReader& in) const;
  /// The boxes of field and particle data that restore() reads on this rank.
  [[nodiscard]] std::vector<io::CheckpointReader::BoxRead> reads(
      const io::CheckpointReader& in) const;
  /// Bytes a checkpoint of this state holds (fields and particle columns; estimates the first
  /// checkpoint's cost).
  [[nodiscard]] std::uint64_t bytes() const;

 private:
  template <class T>
  struct Value {
    std::string name;
    std::vector<T>* many = nullptr;  // or one:
    T* one = nullptr;
    Restore how = Restore::required;
  };
  template <class T>
  struct Invariant {
    std::string name, what;
    std::vector<T> value;
  };
  struct Record {
    std::string name;
    std::function<std::vector<std::int64_t>()> get;
  };

  Identity identity_;
  std::int64_t* step_ = nullptr;
  double* time_ = nullptr;
  double* dt_ = nullptr;
  std::vector<Value<double>> reals_;
  std::vector<Value<std::int64_t>> ints_;
  std::vector<Invariant<double>> real_invariants_;
  std::vector<Invariant<std::int64_t>> int_invariants_;
  std::vector<Record> records_;
  std::vector<Field> fields_;
  std::vector<Particles> particles_;
  std::vector<std::function<void(const io::CheckpointReader&)>> restored_;
};

}  // namespace stratus
