// MdConfig::from: the [md...] sections of a checked deck as typed values (md_config.hpp).
#include "stratus/solvers/md/md_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace stratus::md {

namespace {

/// coul/long has no Lennard-Jones term: the keys that only shape it are refused rather than
/// ignored, and its one cutoff is the Coulomb cutoff.
void refuse_lj_keys(const io::Deck& deck, const MdConfig::Pair& p) {
  const std::string style =
      "md.pair.style = \"coul/long\" (the Coulomb term alone, no Lennard-Jones)";
  if (!p.entries.empty())
    throw deck.error_at(
        p.entries.front().key + "types",
        fmt::format("{} takes no pair coefficients: expected no [[md.pair.coeff]], found {} "
                    "(types [{}, {}]); take lj/cut/coul/long for Lennard-Jones plus Coulomb",
                    style, p.entries.size(), p.entries.front().i + 1, p.entries.front().j + 1));
  if (p.tail)
    throw deck.error_at("md.pair.tail",
                        fmt::format("{} has no Lennard-Jones tail to correct: expected "
                                    "md.pair.tail = false, found true",
                                    style));
  if (p.shift)
    throw deck.error_at("md.pair.shift",
                        fmt::format("{} is not shifted (its real-space term erfc(g r) / r is "
                                    "already small at the cutoff): expected md.pair.shift = "
                                    "false, found true",
                                    style));
  if (!deck.origin("md.pair.mix").is_default)
    throw deck.error_at("md.pair.mix",
                        fmt::format("{} has no coefficients to mix: expected md.pair.mix left "
                                    "out, found \"{}\"",
                                    style, deck.string("md.pair.mix")));
  const double coulomb = deck.real("md.pair.coulomb_cutoff");
  if (coulomb > 0 && coulomb != p.global_cutoff)
    throw deck.error_at("md.pair.coulomb_cutoff",
                        fmt::format("{} has one cutoff: expected md.pair.coulomb_cutoff left out "
                                    "(or equal to md.pair.cutoff = {}), found {}",
                                    style, p.global_cutoff, coulomb));
}

/// md.pair's keys and the [[md.pair.coeff]] entries as given; MdConfig::Pair::tabulate makes
/// the tables once the number of types is known.
MdConfig::Pair read_pair(const io::Deck& deck) {
  MdConfig::Pair p;
  p.style =
      deck.choice<PairStyle>("md.pair.style", {{"lj/cut", PairStyle::lj_cut},
                                               {"lj/cut/coul/cut", PairStyle::lj_cut_coul_cut},
                                               {"lj/cut/coul/long", PairStyle::lj_cut_coul_long},
                                               {"coul/long", PairStyle::coul_long}});
  p.shift = deck.boolean("md.pair.shift");
  p.tail = deck.boolean("md.pair.tail");
  p.mix = deck.choice<MdConfig::Pair::Mix>("md.pair.mix",
                                           {{"geometric", MdConfig::Pair::Mix::geometric},
                                            {"arithmetic", MdConfig::Pair::Mix::arithmetic}});
  p.global_cutoff = deck.real("md.pair.cutoff");
  p.coulomb_cutoff = deck.real("md.pair.coulomb_cutoff") > 0 ? deck.real("md.pair.coulomb_cutoff")
                                                             : p.global_cutoff;
  for (std::size_t c = 0; c < deck.count("md.pair.coeff"); ++c) {
    const std::string at = fmt::format("md.pair.coeff[{}].", c);
    const auto& t = deck.integer_list(at + "types");
    p.entries.push_back({static_cast<int>(t[0] - 1), static_cast<int>(t[1] - 1),
                         deck.real(at + "epsilon"), deck.real(at + "sigma"),
                         deck.real(at + "cutoff"), at});
  }
  if (!p.lennard_jones()) refuse_lj_keys(deck, p);
  return p;
}

MdConfig::Thermostat read_integrator(const io::Deck& deck) {
  MdConfig::Thermostat t;
  t.style = deck.choice<Integrator>(
      "md.integrator.style",
      {{"nve", Integrator::nve}, {"langevin", Integrator::langevin}, {"nvt", Integrator::nvt}});
  t.temperature = deck.real("md.integrator.temperature");
  t.damping = deck.real("md.integrator.damping");
  t.chain = static_cast<int>(deck.integer("md.integrator.chain"));
  t.seed = static_cast<std::uint64_t>(deck.integer("md.integrator.seed"));
  if (t.style == Integrator::nvt && t.temperature <= 0)
    throw deck.error_at("md.integrator.temperature",
                        "the Nose-Hoover chain (nvt) needs a positive target temperature");
  return t;
}

/// [md.barostat]: with the Nose-Hoover chain only, and with its pressure and period given.
MdConfig::Barostat read_barostat(const io::Deck& deck, Integrator integrator) {
  MdConfig::Barostat b;
  using Style = MdConfig::Barostat::Style;
  b.style = deck.choice<Style>(
      "md.barostat.style", {{"none", Style::none}, {"iso", Style::iso}, {"aniso", Style::aniso}});
  b.pressure = deck.real("md.barostat.pressure");
  b.damping = deck.real("md.barostat.damping");
  b.chain = static_cast<int>(deck.integer("md.barostat.chain"));
  if (b.style == Style::none) return b;
  if (integrator != Integrator::nvt)
    throw deck.error_at("md.barostat.style",
                        "a barostat runs with the Nose-Hoover chain (NPT): set "
                        "md.integrator.style = \"nvt\" with its temperature and damping");
  for (const char* key : {"md.barostat.pressure", "md.barostat.damping"})
    if (deck.origin(key).is_default)
      throw deck.error_at(key, fmt::format("a barostat needs {} (no default is assumed)", key));
  if (!(b.damping > 0))
    throw deck.error_at("md.barostat.damping", "the barostat's period must be positive");
  return b;
}

/// The initial configuration: one source, and what it needs.
void read_source(const io::Deck& deck, MdConfig& c) {
  const bool lattice = deck.has_section("md.lattice");
  const bool data = deck.has_section("md.read_data");
  const bool h5md = deck.has_section("md.read_h5md");
  if (lattice + data + h5md != 1) {
    if (lattice + data + h5md == 0)
      throw deck.error_at("run.solver",
                          "the md solver needs an initial configuration: give [md.lattice], "
                          "[md.read_data] or [md.read_h5md]");
    throw deck.error_at(h5md ? "md.read_h5md.file" : "md.read_data.file",
                        "give one of [md.lattice], [md.read_data] and [md.read_h5md], not two");
  }
  if (deck.has_section("md.velocity"))
    c.velocity = MdConfig::Velocity{deck.real("md.velocity.temperature"),
                                    static_cast<std::uint64_t>(deck.integer("md.velocity.seed"))};
  if (lattice) {
    c.source = MdConfig::Source::lattice;
    if (c.units.system != UnitSystem::lj)
      throw deck.error_at("md.lattice.density",
                          fmt::format("a lattice is given by its reduced density (md.units = "
                                      "\"lj\"); with md.units = \"{}\" start from [md.read_data] "
                                      "or [md.read_h5md]",
                                      c.units.name));
    if (!c.velocity)
      throw deck.error_at("md.lattice.cells",
                          "a lattice needs [md.velocity] (temperature) as well");
    c.lattice.style = deck.choice<LatticeStyle>(
        "md.lattice.style",
        {{"fcc", LatticeStyle::fcc}, {"bcc", LatticeStyle::bcc}, {"sc", LatticeStyle::sc}});
    c.lattice.density = deck.real("md.lattice.density");
    c.lattice.cells = deck.integer_list("md.lattice.cells");
    c.lattice.type = static_cast<int>(deck.integer("md.lattice.type") - 1);
    if (c.lattice.type >= c.ntypes())
      throw deck.error_at("md.lattice.type",
                          fmt::format("type {} does not exist: md.masses defines {} type(s)",
                                      c.lattice.type + 1, c.ntypes()));
  } else if (data) {
    c.source = MdConfig::Source::lammps_data;
    c.file = deck.string("md.read_data.file");
  } else {
    c.source = MdConfig::Source::h5md;
    c.file = deck.string("md.read_h5md.file");
    c.h5md.group = deck.string("md.read_h5md.group");
    c.h5md.frame = deck.integer("md.read_h5md.frame");
    c.h5md.index_base = static_cast<int>(deck.integer("md.read_h5md.index_base"));
  }
}

}  // namespace

void MdConfig::Pair::tabulate(int ntypes, const io::CoeffSection* file,
                              const std::string& file_path, const io::Deck& deck,
                              const std::string& types_from) {
  const auto n2 = static_cast<std::size_t>(ntypes * ntypes);
  epsilon.assign(n2, -1);
  sigma.assign(n2, 0);
  cutoff.assign(n2, 0);
  if (!lennard_jones()) {
    // coul/long: the lj/cut/coul/long kernel with epsilon 0 (no LJ energy, force or virial)
    // and every pair's cutoff the Coulomb one. Coefficients have no meaning: refused.
    if (!entries.empty())
      throw deck.error_at(entries.front().key + "types",
                          "md.pair.style = \"coul/long\" takes no pair coefficients: expected no "
                          "[[md.pair.coeff]]");
    if (file != nullptr && file->present())
      throw InputError(fmt::format(
          "{}:{}: md.pair.style = \"coul/long\" (the Coulomb term alone, no Lennard-Jones) takes "
          "no pair coefficients: expected no {} section, found one with {} row(s); remove it",
          file_path, file->line, file->name.empty() ? "Pair Coeffs" : file->name,
          file->rows.size()));
    epsilon.assign(n2, 0.0);
    sigma.assign(n2, 1.0);
    cutoff.assign(n2, coulomb_cutoff);
    cutoff_max = coulomb_cutoff;
    return;
  }
  std::vector<std::string> origin(n2);
  const auto set = [&](int i, int j, double e, double s, double c, const std::string& from) {
    for (auto [a, b] : {std::pair{i, j}, std::pair{j, i}}) {
      const auto k = static_cast<std::size_t>(a * ntypes + b);
      epsilon[k] = e;
      sigma[k] = s;
      cutoff[k] = c;
      origin[k] = from;
    }
  };
  if (file != nullptr && file->present()) {
    for (const auto& row : file->rows) {
      if (row.values.size() != 2 && row.values.size() != 3)
        throw InputError(
            fmt::format("{}:{}: expected 'epsilon sigma' or 'epsilon sigma cutoff' "
                        "(pair style lj/cut), found {} numbers",
                        file_path, row.line, row.values.size()));
      if (!(row.values[0] >= 0) || !(row.values[1] > 0))
        throw InputError(fmt::format("{}:{}: expected epsilon >= 0 and sigma > 0, found {} {}",
                                     file_path, row.line, row.values[0], row.values[1]));
      set(row.type, row.type2, row.values[0], row.values[1],
          row.values.size() == 3 ? row.values[2] : 0.0, fmt::format("{}:{}", file_path, row.line));
    }
  }
  std::vector<char> given(n2, 0);
  for (const Entry& e : entries) {
    for (const int t : {e.i, e.j})
      if (t >= ntypes)
        throw deck.error_at(e.key + "types", fmt::format("type {} does not exist: {} defines {} "
                                                         "type(s)",
                                                         t + 1, types_from, ntypes));
    if (given[static_cast<std::size_t>(e.i * ntypes + e.j)]++)
      throw deck.error_at(e.key + "types",
                          fmt::format("coefficients of types {} {} given twice", e.i + 1, e.j + 1));
    given[static_cast<std::size_t>(e.j * ntypes + e.i)] = 1;
    set(e.i, e.j, e.epsilon, e.sigma, e.cutoff, e.key);
  }
  for (int i = 0; i < ntypes; ++i)
    if (epsilon[static_cast<std::size_t>(i * ntypes + i)] < 0)
      throw deck.error_at(
          entries.empty() ? "md.pair.cutoff" : entries.back().key + "types",
          fmt::format("{} types, but no coefficients for type {} ([[md.pair.coeff]] types = [{}, "
                      "{}], or a Pair Coeffs section in the data file); pairs of different types "
                      "are mixed from their types' own (md.pair.mix)",
                      ntypes, i + 1, i + 1, i + 1));
  // Unlisted pairs of different types: mixed from the types' own, as LAMMPS's pair_modify mix.
  for (int i = 0; i < ntypes; ++i)
    for (int j = i + 1; j < ntypes; ++j) {
      const auto k = static_cast<std::size_t>(i * ntypes + j);
      if (epsilon[k] >= 0) continue;
      const auto ii = static_cast<std::size_t>(i * ntypes + i);
      const auto jj = static_cast<std::size_t>(j * ntypes + j);
      const bool geometric = mix == Mix::geometric;
      const double e = std::sqrt(epsilon[ii] * epsilon[jj]);
      const double s = geometric ? std::sqrt(sigma[ii] * sigma[jj]) : 0.5 * (sigma[ii] + sigma[jj]);
      const double c =
          cutoff[ii] > 0 && cutoff[jj] > 0
              ? (geometric ? std::sqrt(cutoff[ii] * cutoff[jj]) : 0.5 * (cutoff[ii] + cutoff[jj]))
              : 0.0;
      set(i, j, e, s, c, "mixed");
    }
  for (double& c : cutoff)
    if (c <= 0) c = global_cutoff;
  cutoff_max = *std::max_element(cutoff.begin(), cutoff.end());
  if (charged()) cutoff_max = std::max(cutoff_max, coulomb_cutoff);
}

Units Units::of(UnitSystem system) {
  Units u;
  u.system = system;
  switch (system) {
    case UnitSystem::lj:
      u.name = "lj";
      u.length = "sigma";
      u.time = "tau";
      u.energy = "epsilon";
      u.mass = "m";
      u.temperature = "epsilon/k_B";
      u.pressure = "epsilon/sigma^3";
      u.charge = "reduced charge";
      u.density = "m/sigma^3";
      u.h5md_length = "sigma";
      u.h5md_time = "tau";
      break;
    case UnitSystem::real:
      // LAMMPS's `units real` (src/update.cpp): force-time-mass to velocity is 1 / 48.88821291^2.
      u.name = "real";
      u.boltz = 0.0019872067;
      u.mvv2e = 48.88821291 * 48.88821291;
      u.nktv2p = 68568.415;
      u.qqr2e = 332.06371;
      u.length = "Angstrom";
      u.time = "fs";
      u.energy = "kcal/mol";
      u.mass = "g/mol";
      u.temperature = "K";
      u.pressure = "atm";
      u.charge = "e";
      u.density = "g/cm^3";
      u.mv2d = 1.0 / 0.602214129;  // Avogadro's number / 1e24
      u.h5md_length = "Angstrom";
      u.h5md_time = "fs";
      break;
    case UnitSystem::metal:
      // LAMMPS's `units metal`.
      u.name = "metal";
      u.boltz = 8.617343e-5;
      u.mvv2e = 1.0364269e-4;
      u.nktv2p = 1.6021765e6;
      u.qqr2e = 14.399645;
      u.length = "Angstrom";
      u.time = "ps";
      u.energy = "eV";
      u.mass = "g/mol";
      u.temperature = "K";
      u.pressure = "bar";
      u.charge = "e";
      u.density = "g/cm^3";
      u.mv2d = 1.0 / 0.602214129;  // Avogadro's number / 1e24
      u.h5md_length = "Angstrom";
      u.h5md_time = "ps";
      break;
  }
  return u;
}

MemoryNeed MdConfig::memory() const {
  if (source != Source::lattice) return {};
  const std::int64_t basis = lattice.style == LatticeStyle::fcc   ? 4
                             : lattice.style == LatticeStyle::bcc ? 2
                                                                  : 1;
  std::vector<std::int64_t> counts(lattice.cells.begin(), lattice.cells.end());
  counts.push_back(basis);
  return memory_of(counts, 96, "md.lattice.cells", "atoms",
                   "position, velocity, force, type, id and image");
}

MdConfig MdConfig::from(const io::Deck& deck) {
  using ConstraintStyle = MdConfig::ConstraintStyle;
  MdConfig c;
  c.units = Units::of(deck.choice<UnitSystem>(
      "md.units",
      {{"lj", UnitSystem::lj}, {"real", UnitSystem::real}, {"metal", UnitSystem::metal}}));
  c.timestep = deck.real("md.timestep");
  if (c.units.system != UnitSystem::lj && deck.origin("md.timestep").is_default)
    throw deck.error_at("md.timestep",
                        fmt::format("md.units = \"{}\" needs md.timestep, in {} (the default "
                                    "0.005 is in reduced units, tau)",
                                    c.units.name, c.units.time));
  c.masses = deck.real_list("md.masses");
  const auto& ranks = deck.integer_list("md.ranks");
  for (int a = 0; a < 3; ++a) c.ranks[a] = static_cast<int>(ranks[a]);
  c.pair = read_pair(deck);
  c.neighbor.skin = deck.real("md.neighbor.skin");
  c.neighbor.every = deck.integer("md.neighbor.every");
  c.neighbor.list =
      deck.choice<NeighborListKind>("md.neighbor.list", {{"auto", NeighborListKind::automatic},
                                                         {"full", NeighborListKind::full},
                                                         {"half", NeighborListKind::half},
                                                         {"cluster", NeighborListKind::cluster}});
  c.precision = deck.choice<Precision>(
      "md.precision", {{"double", Precision::full_double}, {"mixed", Precision::mixed}});
  c.integrator = read_integrator(deck);
  c.barostat = read_barostat(deck, c.integrator.style);
  c.constraints.style =
      deck.choice<ConstraintStyle>("md.constraints.style", {{"none", ConstraintStyle::none},
                                                            {"shake", ConstraintStyle::shake},
                                                            {"rattle", ConstraintStyle::rattle}});
  c.constraints.bond_types = deck.integer_list("md.constraints.bonds");
  c.constraints.angle_types = deck.integer_list("md.constraints.angles");
  c.constraints.tolerance = deck.real("md.constraints.tolerance");
  c.constraints.iterations = static_cast<int>(deck.integer("md.constraints.iterations"));
  if (c.constraints.style != ConstraintStyle::none && c.constraints.bond_types.empty())
    throw deck.error_at("md.constraints.bonds",
                        "SHAKE and RATTLE need the bond types to hold rigid (e.g. [1])");
  c.kspace.pppm = deck.string("md.kspace.style") == "pppm";
  c.kspace.accuracy = deck.real("md.kspace.accuracy");
  c.kspace.order = static_cast<int>(deck.integer("md.kspace.order"));
  const auto& mesh = deck.integer_list("md.kspace.mesh");
  for (int d = 0; d < 3; ++d) c.kspace.mesh[d] = static_cast<int>(mesh[d]);
  c.kspace.g_ewald = deck.real("md.kspace.g_ewald");
  c.kspace.allow_charged = deck.boolean("md.kspace.allow_charged");
  if (c.pair.long_range() && !c.kspace.pppm)
    throw deck.error_at("md.kspace.style",
                        fmt::format("md.pair.style = \"{}\" computes the real-space part of an "
                                    "Ewald sum: it needs a k-space solver (expected [md.kspace] "
                                    "style = \"pppm\", found \"{}\")",
                                    deck.string("md.pair.style"), deck.string("md.kspace.style")));
  if (!c.pair.long_range() && c.kspace.pppm)
    throw deck.error_at("md.kspace.style",
                        fmt::format("PPPM is the reciprocal part of lj/cut/coul/long and "
                                    "coul/long: expected one of them as md.pair.style, found "
                                    "\"{}\"",
                                    deck.string("md.pair.style")));
  if ((mesh[0] > 0) != (mesh[1] > 0) || (mesh[0] > 0) != (mesh[2] > 0))
    throw deck.error_at("md.kspace.mesh", "give all three grid sizes, or none ([0, 0, 0])");
  read_source(deck, c);
  if (c.constraints.style != ConstraintStyle::none && c.source == Source::lattice)
    throw deck.error_at("md.constraints.style",
                        "constraints act on the bonds of a data file or of an H5MD frame's "
                        "/connectivity: start from [md.read_data] or [md.read_h5md]");
  // From a data file, the solver tabulates the coefficients once the file is read (its types
  // and Pair Coeffs).
  if (c.source != Source::lammps_data) c.pair.tabulate(c.ntypes(), nullptr, "", deck, "md.masses");
  c.thermo_every = deck.integer("md.thermo.every");
  c.trajectory_every = deck.integer("md.trajectory.every");
  c.output = io::OutputPaths::from(deck);
  c.deck_toml = deck.to_toml();
  return c;
}

}  // namespace stratus::md
