// MdConfig::from: the [md...] sections of a checked deck as typed values (md_config.hpp).
#include "stratus/solvers/md/md_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace stratus::md {

namespace {

/// Every pair of types needs exactly one [[md.pair.coeff]]; tables are ntypes x ntypes.
MdConfig::Pair read_pair(const io::Deck& deck, int ntypes) {
  MdConfig::Pair p;
  p.style = deck.choice<PairStyle>("md.pair.style", {{"lj/cut", PairStyle::lj_cut}});
  p.shift = deck.boolean("md.pair.shift");
  p.tail = deck.boolean("md.pair.tail");
  const double global_cutoff = deck.real("md.pair.cutoff");
  const auto n2 = static_cast<std::size_t>(ntypes * ntypes);
  p.epsilon.assign(n2, -1);
  p.sigma.assign(n2, 0);
  p.cutoff.assign(n2, 0);
  for (std::size_t c = 0; c < deck.count("md.pair.coeff"); ++c) {
    const std::string at = fmt::format("md.pair.coeff[{}].", c);
    const auto& t = deck.integer_list(at + "types");
    for (auto ti : t)
      if (ti > ntypes)
        throw deck.error_at(
            at + "types",
            fmt::format("type {} does not exist: md.masses defines {} type(s)", ti, ntypes));
    const int i = static_cast<int>(t[0] - 1), j = static_cast<int>(t[1] - 1);
    if (p.epsilon[i * ntypes + j] >= 0)
      throw deck.error_at(at + "types",
                          fmt::format("coefficients of types {} {} given twice", t[0], t[1]));
    const double own = deck.real(at + "cutoff");
    const double cut = own > 0 ? own : global_cutoff;
    for (auto [a, b] : {std::pair{i, j}, std::pair{j, i}}) {
      p.epsilon[a * ntypes + b] = deck.real(at + "epsilon");
      p.sigma[a * ntypes + b] = deck.real(at + "sigma");
      p.cutoff[a * ntypes + b] = cut;
    }
  }
  for (int i = 0; i < ntypes; ++i)
    for (int j = i; j < ntypes; ++j)
      if (p.epsilon[i * ntypes + j] < 0)
        throw deck.error_at(
            "md.masses", fmt::format("{} types, but no [[md.pair.coeff]] for types {} {}", ntypes,
                                     i + 1, j + 1));
  p.cutoff_max = *std::max_element(p.cutoff.begin(), p.cutoff.end());
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
  c.pair = read_pair(deck, c.ntypes());
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
  read_source(deck, c);
  c.thermo_every = deck.integer("md.thermo.every");
  c.trajectory_every = deck.integer("md.trajectory.every");
  c.output = io::OutputPaths::from(deck);
  c.deck_toml = deck.to_toml();
  return c;
}

}  // namespace stratus::md
