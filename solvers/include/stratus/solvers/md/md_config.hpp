// The MD solver's configuration as typed values: every [md...] key of md_schema.cpp read once,
// checked where the schema cannot (type numbers against md.masses, one pair coefficient per
// pair of types, one initial configuration), and turned into enums and tables. The solver holds
// an MdConfig, never the deck.
#pragma once

#include "stratus/io/deck.hpp"
#include "stratus/io/lammps_data.hpp"
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
/// md.pair.style. coul_long: the real-space Ewald Coulomb term alone (no Lennard-Jones), run by
/// the lj/cut/coul/long kernel with epsilon 0 (tabulate).
enum class PairStyle { lj_cut, lj_cut_coul_cut, lj_cut_coul_long, coul_long };
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
    /// Per pair of types (row-major, ntypes x ntypes, symmetric), made by tabulate(): the data
    /// file's Pair Coeffs, then every [[md.pair.coeff]], then md.pair.mix for pairs of different
    /// types that neither gives; each with its cutoff (md.pair.cutoff where none is given).
    std::vector<double> epsilon, sigma, cutoff;
    double cutoff_max = 0;
    double global_cutoff = 0;
    /// The Coulomb term's cutoff: md.pair.coulomb_cutoff if > 0, else md.pair.cutoff.
    double coulomb_cutoff = 0;
    bool shift = false;
    bool tail = false;
    enum class Mix { geometric, arithmetic } mix = Mix::geometric;
    /// The deck's [[md.pair.coeff]] as given (0-based types; cutoff 0: the global one).
    struct Entry {
      int i = 0, j = 0;
      double epsilon = 0, sigma = 0, cutoff = 0;
      std::string key;  ///< "md.pair.coeff[k]."
    };
    std::vector<Entry> entries;
    [[nodiscard]] bool tabulated() const noexcept { return !epsilon.empty(); }
    [[nodiscard]] bool charged() const noexcept { return style != PairStyle::lj_cut; }
    /// Whether the style is the real-space part of an Ewald sum, whose reciprocal part is
    /// [md.kspace] (PPPM): lj/cut/coul/long and coul/long.
    [[nodiscard]] bool long_range() const noexcept {
      return style == PairStyle::lj_cut_coul_long || style == PairStyle::coul_long;
    }
    /// Whether the style has a Lennard-Jones term (and so takes coefficients): all but
    /// coul/long.
    [[nodiscard]] bool lennard_jones() const noexcept { return style != PairStyle::coul_long; }
    /// Fills the tables for `ntypes` types from `file` (a data file's Pair Coeffs or PairIJ
    /// Coeffs section, or null), the deck's entries (which take precedence) and mixing. Throws
    /// DeckError naming the key (or InputError naming the file's line) for a type out of range,
    /// a pair given twice in the deck, a row that is not "epsilon sigma [cutoff]", or a type
    /// with no coefficients at all. `types_from` names what set ntypes, for messages. For
    /// coul/long: epsilon 0, sigma 1 and the Coulomb cutoff for every pair (the Coulomb term
    /// alone); a deck entry or a file section is refused (they have no meaning there).
    void tabulate(int ntypes, const io::CoeffSection* file, const std::string& file_path,
                  const io::Deck& deck, const std::string& types_from);
  } pair;

  /// [md.kspace]: long-range electrostatics (lj/cut/coul/long and coul/long need it, and only
  /// they take it).
  struct Kspace {
    bool pppm = false;
    double accuracy = 1e-5;  ///< relative force accuracy
    int order = 5;
    std::array<int, 3> mesh{0, 0, 0};
    double g_ewald = 0;
    bool allow_charged = false;  ///< a net charge is refused unless this is set
  } kspace;

  /// [md.constraints]: rigid bonds and angles.
  enum class ConstraintStyle { none, shake, rattle };
  struct Constraints {
    ConstraintStyle style = ConstraintStyle::none;
    std::vector<std::int64_t> bond_types, angle_types;  ///< 1-based, as in the deck
    double tolerance = 1e-4;
    int iterations = 20;
  } constraints;

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

  /// [md.barostat] (NPT).
  struct Barostat {
    enum class Style { none, iso, aniso } style = Style::none;
    double pressure = 0;  ///< in md.units's pressure
    double damping = 0;
    int chain = 3;
  } barostat;
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
