// H5MD 1.1 trajectories (https://www.nongnu.org/h5md/h5md.html) written in parallel.
//
// Layout (see docs/file-formats.md, format "h5md"): the common Stratus root attributes and
// /stratus/deck, then
//   /h5md                      @version = [1, 1]; author/@name; creator/@name, @version;
//                              modules/units (@version [1, 0], @system "SI") for physical units
//   /particles/all/box         @dimension = 3, @boundary = ["periodic", ...];
//                              edges: time-dependent, value (frames, 3, 3) diagonal matrix (a
//                              fixed box, but MDAnalysis reads only box/edges/value[frame])
//   /particles/all/position    time-dependent: value (frames, N, 3) float64, @unit = length
//   /particles/all/velocity    value (frames, N, 3) float64, @unit = "length time-1"
//   /particles/all/species     value (frames, N) int32: the atom type, 0-based
//   /particles/all/id          value (frames, N) int64: the global id (= the row)
//   /particles/all/image       value (frames, N, 3) int32: unwrapped = position + image * edge
//   /particles/all/NAME        one more element per extra column the writer was given (a
//                              per-atom property flagged for trajectories, e.g. charge):
//                              value (frames, N) or (frames, N, components), float64 or int64
// Every time-dependent element holds `value`, `step` (int64, frames) and `time` (float64,
// frames, @unit = time); step and time are one pair of datasets hard-linked into every element.
// Row r of every value is the atom with global id r, whatever the decomposition.
//
// A molecular system's topology, fixed during a run, is written once per file
// (write_connectivity), each kind only when the system has terms of it:
//   /connectivity/KIND         KIND = bonds, angles, dihedrals, impropers: int64 (terms, k),
//                              k = 2, 3, 4, 4 global ids (0-based, = the particle rows) per term,
//                              in LAMMPS's atom order (angle: apex in the middle; improper: as
//                              the data file); @particles_group: object reference to
//                              /particles/all (H5MD 1.1 "connectivity", tuples lists)
//   /parameters/stratus/connectivity/KIND/type
//                              int32 (terms): the 0-based type of row t of /connectivity/KIND
//   /parameters/stratus/connectivity/KIND/coefficients
//                              float64 (types, m): row T the numbers of the data file's Coeffs
//                              line of type T + 1, as read (degrees stay degrees); @style (e.g.
//                              "harmonic"), @section ("Bond Coeffs", ...)
// Each of these datasets also has a @description string. The charges and molecule ids a restart
// needs are the per-atom elements charge and molecule (extra columns, above).
// Terms are ordered by the id of the atom that stores them (a bond its first atom, the others
// their second, as LAMMPS does), then in the data file's order: a data file listed that way,
// as LAMMPS writes them, comes back in its own order. Bonds and angles held rigid by
// md.constraints are written as their cluster holds them (a bond centre-partner, an angle
// partner-centre-partner), after the centre's other terms. Every part of a trajectory
// (NAME.h5md, NAME.partNNNN.h5md) holds the connectivity: each part is a whole file.
// read_h5md_frame reads it back as a data file's Topology ([md.read_h5md] starts a run with it).
#pragma once

#include "stratus/core/scalar.hpp"
#include "stratus/io/lammps_data.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stratus::io {

/// A per-atom element of a trajectory beyond position, velocity, species, id and image: a
/// property such as a charge or a molecule id, written as /particles/all/NAME/value.
struct H5mdElement {
  std::string name;    ///< an HDF5 link name: not empty, no '/', not "." or a built-in name
  int components = 1;  ///< values per atom (1: value is (frames, N), else (frames, N, components))
  bool integer = false;  ///< int64 values, else float64
};

/// This rank's atoms of one frame in host memory, row i of every column the same atom (the
/// md solver copies them from the device: stratus::md::append_frame).
struct H5mdRows {
  std::span<const double> x, v;  ///< 3 per atom
  std::span<const int> type;
  std::span<const GlobalId> id;
  std::span<const int> image;  ///< 3 per atom
  /// One per extra element of the writer, in its order, `components` values per atom: `reals`
  /// for a float64 element, `integers` for an int64 one (the other one empty).
  struct Extra {
    std::span<const double> reals;
    std::span<const std::int64_t> integers;
  };
  std::vector<Extra> extras;
};

/// One kind of bonded term for /connectivity (H5mdWriter::write_connectivity): this rank's share
/// of the terms and, the same on every rank, the coefficients of every type.
struct H5mdTuples {
  std::string name;  ///< "bonds", "angles", "dihedrals" or "impropers" (h5md_tuple_width)
  std::vector<std::int64_t> atoms;   ///< width global ids (0-based) per term
  std::vector<std::int32_t> types;   ///< per term, 0-based
  std::vector<std::int64_t> owners;  ///< per term: the id of the atom that stores it (the order)
  std::int64_t total = -1;           ///< terms in the whole system, checked when >= 0
  std::string style;                 ///< the style's name, e.g. "harmonic"
  std::string section;  ///< the data file section of the coefficients, e.g. "Bond Coeffs"
  std::vector<std::vector<double>> coeffs;  ///< per type, its numbers as the Coeffs section holds
};

/// Atoms per term of the /connectivity dataset `name` (bonds 2, angles 3, dihedrals and
/// impropers 4), 0 for any other name.
int h5md_tuple_width(const std::string& name);

/// An H5MD 1.1 trajectory file, one frame appended per call, written collectively over `comm`.
class H5mdWriter {
 public:
  /// Creates (truncates) `path` (collective): the common Stratus layout (stratus_format "h5md",
  /// /stratus/deck = `resolved_deck`), the /h5md metadata and the /particles/all group for
  /// `natoms` atoms with global ids 0 .. natoms - 1 in an orthorhombic box [0, box_edges).
  /// `length_unit` and `time_unit` become `unit` attributes of the value and time datasets
  /// (H5MD units module, e.g. "nm" and "ps"; none when empty). Lennard-Jones reduced units
  /// ("sigma", "tau") are dimensionless for H5MD and readers refuse unit strings they cannot
  /// convert (MDAnalysis 2.4 even with convert_units=False): they are written as
  /// `reduced_unit` attributes instead. `boundary` holds "periodic" or "none" per axis.
  /// `extras` are the per-atom elements written besides the built-in ones (every append()
  /// passes their rows in this order).
  /// Throws RuntimeError if the file cannot be created or an argument is invalid (natoms < 1,
  /// an edge not positive and finite, a boundary not 3 of "periodic" / "none", an extra element
  /// whose name is empty, holds '/', is "." or "..", repeats or takes a built-in name, or whose
  /// components are not 1 to 64).
  H5mdWriter(MPI_Comm comm, const std::string& path, const std::string& resolved_deck,
             std::int64_t natoms, const std::array<double, 3>& box_edges,
             const std::string& length_unit, const std::string& time_unit,
             const std::vector<std::string>& boundary = {"periodic", "periodic", "periodic"},
             const std::string& author = "Stratus user",
             const std::vector<H5mdElement>& extras = {});
  ~H5mdWriter();
  H5mdWriter(const H5mdWriter&) = delete;
  H5mdWriter& operator=(const H5mdWriter&) = delete;

  /// Appends one frame (collective): rows [0, nlocal) of `rows` are this rank's owned
  /// atoms (any order, any split across ranks, nlocal may be 0), with one entry of
  /// `rows.extras` per extra element. Together the ranks must own every id in [0, natoms)
  /// exactly once, with finite real values; otherwise throws RuntimeError on every rank before
  /// anything is written (as it does when `rows.extras` does not match the extra elements). Atoms
  /// are redistributed by id (MPI_Alltoallv) so that each rank writes one contiguous block of rows;
  /// the file is flushed afterwards, so a run killed later still leaves every frame appended so far
  /// readable.
  void append(std::int64_t step, double time, const H5mdRows& rows, int nlocal);

  /// Writes the molecular topology (collective, at most once per file): for each entry of
  /// `kinds` with terms in the system, /connectivity/NAME and its types and coefficients (layout
  /// at the top of this file). Terms travel to the rank whose block of ids holds their owner
  /// (one ParticlePlan, as the atoms of a frame), are ordered there by owner (stable: each
  /// owner's terms in the order its rank gave them) and each rank writes its contiguous run of
  /// rows; rank 0 writes the coefficients. Throws RuntimeError on every rank, before anything is
  /// written, for an unknown name or a repeated one, arrays of the wrong length, an atom id or
  /// owner outside [0, natoms), a type without coefficients (or negative), coefficient rows of
  /// different lengths or a sum of terms other than `total`.
  void write_connectivity(const std::vector<H5mdTuples>& kinds);

  /// The box edges of the frames appended from now on (a box that changes: NPT). Throws
  /// RuntimeError for an edge that is not positive and finite.
  void set_edges(const std::array<double, 3>& edges);

  /// Flushes and closes (collective); a second close() does nothing, append() afterwards
  /// throws RuntimeError. Called by the destructor if not done before.
  void close();

  /// Frames appended so far.
  [[nodiscard]] std::int64_t frames() const noexcept { return frames_; }
  [[nodiscard]] std::int64_t natoms() const noexcept { return natoms_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  /// The datasets kept open between frames (closed by close()).
  enum Slot : int { kPosition, kVelocity, kSpecies, kId, kImage, kEdges, kStep, kTime, kSlots };

  MPI_Comm comm_;
  std::string path_;
  std::int64_t natoms_;
  std::array<double, 3> edges_;
  std::int64_t frames_ = 0;
  hid_t file_ = -1;
  std::array<hid_t, kSlots> datasets_{};
  /// Closes every open dataset (no error reported).
  void close_datasets() noexcept;
  /// The per-atom elements (built-in and extras) and the step and time datasets they share.
  void create_elements();

  std::vector<H5mdElement> extras_;
  std::vector<hid_t> extra_datasets_;  ///< one per extras_ entry
  bool connectivity_written_ = false;
};

/// Frame `frame` (negative: counted from the end, -1 the last) of particle group `group` of the
/// H5MD file `path`, as an initial configuration (collective over `comm`: rank 0 reads, every
/// rank gets the whole configuration). Needs position (time-dependent or fixed) and box/edges
/// (3 edges or a diagonal 3 x 3 matrix, fixed or per frame; box@boundary periodic when given);
/// takes id, species, image and velocity when present (defaults: id = row, species = first
/// type, image 0, no velocities). Ids and species count from `index_base` (0 in files Stratus
/// writes, 1 in files whose ids and types count from 1). `length_unit` is the run's: empty for
/// reduced units, where positions with a `unit` attribute are refused; else the position's
/// `unit` attribute must be that string (no conversion). The box starts at the origin.
/// Per-atom elements `charge` (float) and `molecule` (integer), when present, give the atoms'
/// charges and molecule ids (style full; atomic without either). A /connectivity group gives
/// the topology: its bonds, angles, dihedrals and impropers (ids counted from `index_base`, as
/// the id element) with their types and coefficients from /parameters/stratus/connectivity
/// (the layout at the top of this file; other names in /connectivity are ignored). Throws
/// InputError ("PATH: what is wrong", naming the HDF5 object, what was expected and found) on
/// every rank: a term of the wrong width, an id out of range or repeated within a term, a type
/// without coefficients, missing types or coefficients, ...
AtomConfiguration read_h5md_frame(MPI_Comm comm, const std::string& path, const std::string& group,
                                  std::int64_t frame, int index_base,
                                  const std::string& length_unit = "");

}  // namespace stratus::io
