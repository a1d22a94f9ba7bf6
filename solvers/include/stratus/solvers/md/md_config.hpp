// The MD solver's configuration as typed values: every [md...] key of md_schema.cpp read once,
// checked where the schema cannot (type numbers against md.masses, one pair coefficient per
// pair of types, one initial configuration), and turned into enums and tables. The solver holds
// an MdConfig, never the deck.
#pragma once

#include "stratus/io/deck.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/md/units.hpp"
#include "stratus/solvers/solver.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stratus::md {

enum class LatticeStyle { fcc, bcc, sc };
enum class PairStyle { lj_cut };
enum class Integrator { nve, langevin, nvt };
/// md.neighbor.list: automatic is half (double) or cluster (mixed) on host backends, full on GPUs.
enum class NeighborListKind { automatic, full, half, cluster };
/// md.precision: the compute type of the pair interactions (double, or float in "mixed").
enum class Precision { full_double, mixed };

struct MdConfig {
  Units units;  ///< md.units; every other value is in these units
  double timestep = 0;
  std::vector<double> masses;  ///< per type; the number of types is its length
  std::array<int, 3> ranks{};  ///< process grid; 0: MPI_Dims_create chooses that axis

  /// Where the initial atoms come from: exactly one of [md.lattice], [md.read_data] and
  /// [md.read_h5md].
  enum class Source { lattice, lammps_data, h5md };
  Source source = Source::lattice;
  struct Lattice {
    LatticeStyle style = LatticeStyle::fcc;
    double density = 0;
    std::vector<std::int64_t> cells;
    int type = 0;  ///< 0-based, checked against md.masses
  } lattice;
  std::string file;  ///< md.read_data.file or md.read_h5md.file
  struct H5mdFrame {
    std::string group;
    std::int64_t frame = -1;
    int index_base = 0;
  } h5md;
  /// [md.velocity]: velocities drawn at setup; absent: the file's velocities (or zero).
  struct Velocity {
    double temperature = 0;
    std::uint64_t seed = 0;
  };
  std::optional<Velocity> velocity;

  struct Pair {
    PairStyle style = PairStyle::lj_cut;
    /// Per pair of types (row-major, ntypes x ntypes, symmetric): every [[md.pair.coeff]] with
    /// its cutoff (md.pair.cutoff where the coefficient gives 0).
    std::vector<double> epsilon, sigma, cutoff;
    double cutoff_max = 0;
    bool shift = false;
    bool tail = false;
  } pair;

  struct Neighbor {
    double skin = 0;
    NeighborListKind list = NeighborListKind::automatic;
    std::int64_t every = 0;  ///< 0: when an atom moved more than half the skin
  } neighbor;
  Precision precision = Precision::full_double;

  struct Thermostat {
    Integrator style = Integrator::nve;
    double temperature = 0;
    double damping = 0;  ///< 1/gamma (langevin), chain period (nvt)
    int chain = 0;
    std::uint64_t seed = 0;  ///< Langevin noise
  } integrator;

  std::int64_t thermo_every = 0;
  std::int64_t trajectory_every = 0;
  io::OutputPaths output;
  std::string deck_toml;  ///< the resolved deck, stored in every trajectory part

  [[nodiscard]] int ntypes() const noexcept { return static_cast<int>(masses.size()); }

  /// Reads and checks every [md...] key; DeckError naming the key where the deck is
  /// inconsistent.
  static MdConfig from(const io::Deck& deck);
  /// Declares [md] and its subsections.
  static void declare(Schema& schema);
  /// Position, velocity, force, type, id and image: 96 bytes an atom, for a lattice (atoms from
  /// a file: 0, known at set-up).
  [[nodiscard]] MemoryNeed memory() const;
};

}  // namespace stratus::md
