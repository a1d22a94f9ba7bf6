// Checkpoint files: one HDF5 file per checkpoint, written collectively through MPI-IO, with a
// layout that does not depend on the decomposition (docs/checkpointing.md,
// docs/file-formats.md).
//
//   /                       common Stratus attributes (stratus_format = "checkpoint") plus
//                           solver, step, time, dt (for humans and `stratus info`) and, written
//                           last, checkpoint_complete = 1
//   /stratus/deck           the resolved deck
//   /checkpoint/manifest    every dataset of the file with its type and shape, and the deck's
//                           hash (checksummed)
//   /state/NAME             small values: step, time, dt, thermostat and integrator state, ...
//   /particles/NAME         (N, ncomp) per-particle data in global-id order
//   /fields/NAME            (nx, ny, nz) global grid arrays
//
// Integrity: every block that a rank writes (its rows of a particle dataset, its box of a field,
// a state dataset) has a 64-bit checksum in the manifest, and the manifest has its own in the
// root attribute manifest_checksum, written with the completion marker. verify() reads every
// block back and compares. (HDF5's Fletcher32 filter would do the same job at a third of the
// write bandwidth: it forces chunked, filtered, collective I/O.) Files are written as
// NAME.partial, flushed, fsync'ed and renamed: a file with the final name is complete; readers
// still check the marker and every checksum.
//
// Parts: a run over several hosts with a node-local level writes each checkpoint as one part
// per host, NAME.stepS.partKofH.h5, each written by that host's ranks only (its own file on
// its own disk). A part holds only the blocks of its host's ranks, compactly: each particle and
// field dataset is 1D, the blocks one after another, and the manifest gives each block's global
// box and its offset ("block ... @OFFSET"), the global shapes, and "part K H ID" (ID the same
// random 64-bit value in every part of one checkpoint). A reader given all H parts assembles
// any box from their blocks, at any rank count: the format still does not depend on the
// decomposition, and the parts together are the size of one whole checkpoint.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/grid_array.hpp"
#include "stratus/core/scalar.hpp"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stratus::io {

/// Version of the checkpoint layout; a reader refuses other versions.
inline constexpr int kCheckpointFormatVersion = 1;

/// Per-particle columns of this rank: ids[i] is the global id (0 <= id < n_global) of row i;
/// each column holds ncomp values per row.
struct ParticleColumns {
  struct Reals {
    std::string name;
    int ncomp = 1;
    std::vector<double> values;
  };
  struct Ints {
    std::string name;
    int ncomp = 1;
    std::vector<std::int64_t> values;
  };
  std::int64_t n_global = 0;
  std::vector<std::int64_t> ids;
  std::vector<Reals> reals;
  std::vector<Ints> ints;

  [[nodiscard]] std::size_t rows() const noexcept { return ids.size(); }
  [[nodiscard]] const Reals& real(const std::string& name) const;
  [[nodiscard]] const Ints& integer(const std::string& name) const;
};

/// This rank's particle rows for a streaming write: the ids, and each column produced when the
/// writer gets to it and dropped once written, so that a checkpoint holds at most one column's
/// copy beside the state (not a second copy of every column). The values of a column with
/// `ncomp` components are rows() * ncomp numbers, row-major, in the order of `ids`.
struct ParticleSource {
  struct Column {
    std::string name;
    int ncomp = 1;
  };
  std::int64_t n_global = 0;
  std::vector<std::int64_t> ids;
  std::vector<Column> reals, ints;
  std::function<std::vector<double>(const std::string& name)> real_values;
  std::function<std::vector<std::int64_t>(const std::string& name)> int_values;
};

/// Sends row i of `columns` to rank dest[i] (Alltoallv over `comm`); returns what this rank
/// received, in rank order then in the senders' order. Collective.
ParticleColumns route_particles(MPI_Comm comm, const ParticleColumns& columns,
                                const std::vector<int>& dest);

/// The block of global rows [first, first + count) that rank `rank` of `ranks` owns when
/// n_global rows are split evenly (used for file I/O of particle data).
struct RowBlock {
  std::int64_t first = 0, count = 0;
};
RowBlock row_block(std::int64_t n_global, int rank, int ranks);
/// The rank whose row_block() holds global row `row` (0 <= row < n_global).
int row_owner(std::int64_t n_global, int ranks, std::int64_t row);

/// What a checkpoint says about itself (root attributes and /state).
struct CheckpointInfo {
  std::string solver;
  std::int64_t step = 0;
  double time = 0;
  double dt = 0;
  std::string units;          ///< e.g. "lj"
  std::string decomposition;  ///< e.g. "2x1x1" (for information only)
  std::string backend;        ///< Kokkos execution space that wrote it
};

/// Which part of a checkpoint a file is: part `index` of `count` (count 1: the whole
/// checkpoint in one file), `id` shared by the parts of one checkpoint.
struct CheckpointPart {
  int index = 0, count = 1;
  std::uint64_t id = 0;
  [[nodiscard]] bool whole() const noexcept { return count == 1; }
};

/// Writes one checkpoint. Collective over `comm` for every call.
class CheckpointWriter {
 public:
  /// Creates `path` + ".partial" and writes the common layout and `info`. Throws RuntimeError
  /// naming the file when it cannot be created.
  CheckpointWriter(MPI_Comm comm, std::string path, const std::string& resolved_deck,
                   const CheckpointInfo& info);
  /// One part of a checkpoint: `file_comm` (a subset of `comm`, e.g. one host's ranks) writes
  /// `path`, which holds the blocks of its ranks; particles are still placed by id over all of
  /// `comm`. Every rank of `comm` calls every method; failures are agreed over `comm`.
  CheckpointWriter(MPI_Comm comm, MPI_Comm file_comm, CheckpointPart part, std::string path,
                   const std::string& resolved_deck, const CheckpointInfo& info);
  /// Without commit(): closes and deletes the partial file (nothing is left half-written).
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  /// /state/NAME: the same values on every rank (rank 0 writes them).
  void put(const std::string& name, const std::vector<double>& values);
  void put(const std::string& name, const std::vector<std::int64_t>& values);
  void put(const std::string& name, double value) { put(name, std::vector<double>{value}); }
  void put(const std::string& name, std::int64_t value) {
    put(name, std::vector<std::int64_t>{value});
  }

  /// /particles/NAME for every column, rows in global-id order. Every id of 0..n_global-1 must
  /// appear exactly once over all ranks, and real values must be finite (RuntimeError
  /// otherwise). Columns are asked for, routed and written one at a time.
  void write_particles(ParticleSource source);
  /// The same for columns already in memory.
  void write_particles(const ParticleColumns& columns);

  /// /fields/NAME: the interior of `field` as this rank's block of the global array.
  void write_field(const std::string& name, const GridArray& field, int ghost,
                   const GridBlock& block, std::array<std::int64_t, 3> global_cells);

  /// Writes the manifest and the completion marker, closes, fsyncs, renames NAME.partial to
  /// NAME and fsyncs the directory. Returns the bytes written (of all parts). On failure the
  /// partial file is removed and RuntimeError names the file and the reason (on every rank).
  std::uint64_t commit();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  void discard() noexcept;
  [[nodiscard]] int file_rank() const;
  MPI_Comm comm_, file_comm_;
  CheckpointPart part_;
  std::string path_, partial_;
  std::int64_t file_ = -1;             // hid_t
  std::vector<std::string> manifest_;  // rank 0's lines (datasets, info)
  std::vector<std::string> blocks_;    // this rank's block checksum lines
  std::uint64_t deck_hash_ = 0;
  bool committed_ = false;
};

namespace detail {
struct CheckpointFile;
}

/// Reads one checkpoint. Collective over `comm` for every call.
class CheckpointReader {
 public:
  /// Opens `path` and checks that it is a complete Stratus checkpoint of a known version.
  /// Throws InputError "<path>: <why>" otherwise (on every rank).
  CheckpointReader(MPI_Comm comm, std::string path);
  /// Opens the parts of one checkpoint (any order; one path: a whole checkpoint). They must be
  /// all the parts of the same checkpoint (same id, count and layout), and together cover
  /// every value. With `one_part`, `paths` is a single part checked on its own (its blocks
  /// only): how the ranks of one host verify the part they wrote.
  CheckpointReader(MPI_Comm comm, std::vector<std::string> paths, bool one_part = false);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  /// Reads every block of every dataset of the manifest (each rank a share) and compares its
  /// checksum; checks the shapes. Throws InputError naming the first damaged dataset.
  void verify();

  /// A box of a dataset that a restore reads: start and count along each axis.
  struct BoxRead {
    std::string dataset;  ///< "/fields/NAME", "/particles/NAME"
    std::vector<std::uint64_t> start, count;
  };
  /// The boxes read_particles reads on this rank for these columns (absent ones left out).
  [[nodiscard]] std::vector<BoxRead> particle_reads(const std::vector<std::string>& names) const;
  /// A restore in one pass over the file. `reads` are the boxes of particle and field data that
  /// this rank's restore will read. When every rank's reads are whole blocks of the file (the
  /// layout that wrote it), this verifies the shapes and every block that no rank reads, arms
  /// the check of the others as they are read (read_field and read_particles then compare the
  /// bytes they read with the block's checksum before they return; a mismatch is an InputError
  /// on every rank) and returns true: call finish_one_pass() after the restore. Otherwise it
  /// verifies everything (verify()) and returns false. Collective.
  bool verify_unread(const std::vector<BoxRead>& reads);
  /// Verifies the armed blocks that the restore did not read. Collective; InputError as
  /// verify().
  void finish_one_pass();

  [[nodiscard]] const CheckpointInfo& info() const noexcept { return info_; }
  [[nodiscard]] const std::string& deck_text() const noexcept { return deck_; }
  /// The checkpoint's file; for parts, the first part's name with " (+N parts)".
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Every file of the checkpoint, in part order.
  [[nodiscard]] std::vector<std::string> paths() const;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

  [[nodiscard]] bool has(const std::string& name) const;  ///< /state/NAME exists
  [[nodiscard]] std::vector<double> reals(const std::string& name) const;
  [[nodiscard]] std::vector<std::int64_t> ints(const std::string& name) const;
  [[nodiscard]] double real(const std::string& name) const;
  [[nodiscard]] std::int64_t integer(const std::string& name) const;

  /// Number of particles (rows of /particles/*); 0 when the file has none.
  [[nodiscard]] std::int64_t particle_count() const;
  /// This rank's row_block() of the named particle columns (ids are the global row indices).
  [[nodiscard]] ParticleColumns read_particles(const std::vector<std::string>& reals,
                                               const std::vector<std::string>& ints) const;
  /// Reads this rank's block of /fields/NAME into the interior of `field`.
  void read_field(const std::string& name, const GridArray& field, int ghost,
                  const GridBlock& block, std::array<std::int64_t, 3> global_cells) const;

 private:
  /// Reads the box (start, count) of dataset `name` into `out` (C order), assembled from the
  /// blocks of every part that overlaps it. Throws InputError naming the file.
  void read_box(const std::string& name, bool real, const std::vector<std::uint64_t>& start,
                const std::vector<std::uint64_t>& count, void* out) const;

  /// Blocks of every file of the checkpoint.
  [[nodiscard]] std::size_t block_count() const;
  /// Index of the block (over every file's blocks, in file then manifest order) that is the
  /// box (start, count) of `dataset`; -1 when none is.
  [[nodiscard]] std::int64_t block_of(const std::string& dataset,
                                      const std::vector<std::uint64_t>& start,
                                      const std::vector<std::uint64_t>& count) const;
  /// Reads and checks the blocks whose index has `pick` set, dealt out over the ranks when
  /// `deal`, else each rank its own; with `shapes`, first every dataset's shape. Collective.
  void verify_blocks(const std::vector<char>& pick, bool deal, bool shapes);
  /// One-pass restore: whether reads are checked as they come; then the check of block
  /// `block` (-1: none) against the checksum `sum` of the bytes read, or this rank's read
  /// `failure`, agreed over the ranks (every rank calls it for every read while armed).
  [[nodiscard]] bool armed() const noexcept { return !armed_.empty(); }
  void check_read(std::int64_t block, std::uint64_t sum, const std::string& dataset,
                  std::string failure) const;

  MPI_Comm comm_;
  std::string path_;
  std::vector<std::shared_ptr<const detail::CheckpointFile>> files_;  // part order
  std::vector<char> armed_;         // blocks this rank checks as it reads them (one pass)
  mutable std::vector<char> read_;  // armed blocks read and checked
  CheckpointInfo info_;
  std::string deck_;
  std::uint64_t bytes_ = 0;
};

/// The checkpoint checksum, fed in pieces: the result depends only on the concatenated bytes.
/// 64 bits, four multiply-xor lanes over 8-byte little-endian words (any changed word changes
/// the result), about memory speed.
class Checksum64 {
 public:
  void update(const void* data, std::size_t bytes);
  [[nodiscard]] std::uint64_t value() const;

 private:
  std::uint64_t lane_[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
                            0xc2b2ae3d27d4eb4full};
  unsigned char carry_[32] = {};
  std::size_t carried_ = 0;
  std::uint64_t total_ = 0;
};

/// Checksum64 of `bytes` bytes at `data`.
std::uint64_t checksum64(const void* data, std::size_t bytes);
inline std::uint64_t checksum64(const std::string& text) {
  return checksum64(text.data(), text.size());
}

/// The files of the checkpoint `path` belongs to: every part when it is one of several
/// (NAME.stepS.partKofH.h5: its sibling parts in the same directory), else just `path`.
std::vector<std::string> checkpoint_files(const std::string& path);

/// The checkpoints of one run in one directory: DIR/NAME.stepSSSSSSSSSSSS.h5.
class CheckpointStore {
 public:
  CheckpointStore(std::string dir, std::string run_name);

  struct Entry {
    std::int64_t step = 0;
    std::string path;
    int part = 0, parts = 1;  ///< part `part` of `parts` (1: a whole checkpoint)
  };
  /// Checkpoint files present (whole ones and parts), newest (highest step) first. Serial
  /// (call on one rank and broadcast, or on every rank of a shared file system).
  [[nodiscard]] std::vector<Entry> list() const;
  /// Leftover NAME.*.h5.partial files of this run (a write that never finished).
  [[nodiscard]] std::vector<std::string> partials() const;
  [[nodiscard]] std::string path_for(std::int64_t step) const;
  /// Part `part` of `parts` of step `step` (path_for(step) when parts is 1).
  [[nodiscard]] std::string path_for(std::int64_t step, int part, int parts) const;
  /// The entry a file name describes (any directory), or nothing when it is not one of this
  /// run's checkpoint names.
  [[nodiscard]] std::optional<Entry> parse(const std::string& path) const;
  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }

 private:
  std::string dir_, name_;
};

}  // namespace stratus::io
