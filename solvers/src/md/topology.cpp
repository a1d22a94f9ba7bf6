// MolecularTopology (topology.hpp): styles and coefficients from the deck and the data file, the
// per-atom columns of terms and special neighbours, and the kernels' launches.
#include "stratus/solvers/md/topology.hpp"

#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/kernels/md/topology.hpp"
#include "stratus/solvers/md/md_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <variant>

namespace stratus::md {

namespace kmd = kernels::md;

namespace {

constexpr double kDegree = 3.14159265358979323846 / 180.0;

/// The column widths (ids per atom) a topology column may have: 3, 4 or 5 ids per term times a
/// power of two of terms, or a power of two of special partners.
using Widths = std::integer_sequence<int, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96,
                                     128, 160, 256>;

/// Calls f(std::integral_constant<int, W>) for the width W == w; throws RuntimeError if w is not
/// one of Widths.
template <class F, int... W>
void with_width(int w, F&& f, std::integer_sequence<int, W...>) {
  const bool found = ((w == W ? (f(std::integral_constant<int, W>{}), true) : false) || ...);
  if (!found) throw RuntimeError(fmt::format("md: no topology column of width {}", w));
}

/// The smallest power of two >= n (n >= 1).
int power_of_two(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

struct StyleInfo {
  const char* name;
  int values;  ///< numbers per type in the Coeffs section
};

/// The styles of each kind, in the order of Kind::style.
const std::vector<StyleInfo>& styles_of(const std::string& kind) {
  static const std::map<std::string, std::vector<StyleInfo>> styles{
      {"bond", {{"harmonic", 2}}},
      {"angle", {{"harmonic", 2}}},
      {"dihedral", {{"charmm", 4}, {"opls", 4}}},
      {"improper", {{"harmonic", 2}}}};
  return styles.at(kind);
}

std::string style_names(const std::string& kind) {
  std::string out;
  for (const auto& s : styles_of(kind))
    out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", s.name);
  return out;
}

}  // namespace

MolecularTopology::MolecularTopology(const io::Deck& deck, const MdConfig& config,
                                     const io::AtomConfiguration& data, AtomData& atoms) {
  const io::Topology& top = data.topology;
  const std::string& path = config.file;
  const auto natoms = static_cast<std::size_t>(data.natoms);
  // Levels whose factors are not 1 leave the neighbour lists; those with a factor > 0 are
  // computed, scaled, from the special-pair list (no subtraction: a 1-2 pair inside the LJ
  // core never enters a sum). Without charges the Coulomb factors play no part.
  charged_ = config.pair.charged();
  const auto& lj = deck.real_list("md.special_bonds.lj");
  const auto& coul = deck.real_list("md.special_bonds.coul");
  for (int k = 0; k < 3; ++k) {
    special_lj_[k] = lj[k];
    special_coul_[k] = charged_ ? coul[k] : lj[k];
    if (special_lj_[k] != 1.0 || special_coul_[k] != 1.0) excluded_levels_ |= 1u << k;
    // With a k-space part, a pair left out entirely still has its reciprocal term removed.
    const bool long_range = config.pair.long_range();
    if ((excluded_levels_ >> k & 1u) &&
        (special_lj_[k] > 0.0 || (charged_ && (coul[k] > 0.0 || long_range))))
      scaled_levels_ |= 1u << k;
  }

  struct Source {
    const char* name;
    int atoms, owner, types;
    const io::CoeffSection* coeffs;
  };
  std::vector<Source> sources{{"bond", 2, 0, top.bond_types, &top.bond_coeffs},
                              {"angle", 3, 1, top.angle_types, &top.angle_coeffs},
                              {"dihedral", 4, 1, top.dihedral_types, &top.dihedral_coeffs},
                              {"improper", 4, 1, top.improper_types, &top.improper_coeffs}};
  const std::size_t counts[4] = {top.bonds.size(), top.angles.size(), top.dihedrals.size(),
                                 top.impropers.size()};
  by_owner_.assign(4, {});
  for (std::size_t k = 0; k < sources.size(); ++k) {
    Source& s = sources[k];
    const std::string key = fmt::format("md.{}.style", s.name);
    const std::string chosen = deck.string(key);
    if (counts[k] == 0) {
      if (chosen != "auto")
        throw deck.error_at(key, fmt::format("{} names a {} style, but {} has no {}s", chosen,
                                             s.name, path.empty() ? "the system" : path, s.name));
      continue;
    }
    // The style: the deck's, else the Coeffs section's comment ("Bond Coeffs # harmonic").
    const io::CoeffSection& cs = *s.coeffs;
    std::string style = chosen;
    if (style == "auto") {
      if (cs.style.empty())
        throw deck.error_at(key, fmt::format("{} has {} {}s: name their style ({}), or give it "
                                             "in the Coeffs section's comment as LAMMPS writes "
                                             "it",
                                             path, counts[k], s.name, style_names(s.name)));
      style = cs.style;
    } else if (!cs.style.empty() && cs.style != style) {
      throw deck.error_at(
          key,
          fmt::format("{} disagrees with {}, whose {} names {} style \"{}\"", style, cs.where(path),
                      cs.dataset.empty() ? "comment" : "@style", s.name, cs.style));
    }
    const auto& known = styles_of(s.name);
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const StyleInfo& i) { return style == i.name; });
    if (it == known.end())
      throw deck.error_at(
          key, fmt::format("{} style \"{}\" (from {}) is not supported; expected "
                           "{}",
                           s.name, style, chosen == "auto" ? path : key, style_names(s.name)));
    if (!cs.present())
      throw deck.error_at(
          key,
          fmt::format("{} has {} {}s but no {} Coeffs section: their "
                      "coefficients come from the data file",
                      path, counts[k], s.name,
                      std::string(1, static_cast<char>(std::toupper(s.name[0]))) + (s.name + 1)));
    // What /connectivity needs to restart: the style and the numbers as the section gives them.
    FileKind& file_kind = file_kinds_[k];
    file_kind.style = it->name;
    file_kind.section =
        cs.name.empty()
            ? std::string(1, static_cast<char>(std::toupper(s.name[0]))) + (s.name + 1) + " Coeffs"
            : cs.name;
    file_kind.total = static_cast<std::int64_t>(counts[k]);
    file_kind.coeffs.assign(static_cast<std::size_t>(s.types), {});
    for (const auto& row : cs.rows)
      if (row.type >= 0 && row.type < s.types)
        file_kind.coeffs[static_cast<std::size_t>(row.type)] = row.values;
    Kind kind;
    kind.name = s.name;
    kind.atoms = s.atoms;
    kind.style = static_cast<int>(it - known.begin());
    kind.total = static_cast<std::int64_t>(counts[k]);
    kind.coeffs = kmd::TypeCoeffs("md::" + kind.name + "_coeffs", s.types, it->values);
    auto h = Kokkos::create_mirror_view(kind.coeffs);
    for (const auto& row : cs.rows) {
      if (static_cast<int>(row.values.size()) != it->values)
        throw InputError(fmt::format("{}: {} style {} takes {} coefficients per type, found {}",
                                     cs.where(path, &row), s.name, it->name, it->values,
                                     row.values.size()));
      for (int v = 0; v < it->values; ++v) h(row.type, v) = row.values[v];
      if (kind.name == "angle" || kind.name == "improper") h(row.type, 1) *= kDegree;
      if (kind.name == "dihedral" && kind.style == 0) {  // charmm: K n d w
        const double n = row.values[1], d = row.values[2], w = row.values[3];
        if (n < 0 || n != std::floor(n) || d != std::floor(d))
          throw InputError(
              fmt::format("{}: dihedral charmm takes an integer multiplicity n >= "
                          "0 and an integer angle d in degrees; found n = {}, d = {}",
                          cs.where(path, &row), n, d));
        if (w != 0.0)
          throw InputError(fmt::format(
              "{}: dihedral charmm weight {} for 1-4 pairs: Stratus takes w = 0 only (1-4 pairs "
              "are scaled by md.special_bonds.lj, as with LAMMPS's lj/cut pair styles)",
              cs.where(path, &row), w));
        h(row.type, 2) = d * kDegree;
      }
    }
    Kokkos::deep_copy(kind.coeffs, h);
    // Terms by owner: flat rows (type, ids...).
    auto& owned = by_owner_[k];
    owned.assign(natoms, {});
    auto add = [&](int type, const auto& ids) {
      auto& row = owned[static_cast<std::size_t>(ids[s.owner])];
      row.push_back(type);
      for (const auto g : ids) row.push_back(g);
    };
    // Bonds and angles held rigid by md.constraints are not computed (as LAMMPS's fix shake
    // turns them off): their energy is that of the constrained geometry, a constant.
    const auto rigid = [&](const std::vector<std::int64_t>& types, int type) {
      return config.constraints.style != MdConfig::ConstraintStyle::none &&
             std::find(types.begin(), types.end(), type + 1) != types.end();
    };
    std::int64_t kept = 0;
    if (k == 0)
      for (const auto& t : top.bonds)
        if (!rigid(config.constraints.bond_types, t.type)) {
          add(t.type, t.atoms);
          ++kept;
        }
    if (k == 1)
      for (const auto& t : top.angles)
        if (!rigid(config.constraints.angle_types, t.type)) {
          add(t.type, t.atoms);
          ++kept;
        }
    if (k >= 2) kept = static_cast<std::int64_t>(counts[k]);
    rigid_ += static_cast<std::int64_t>(counts[k]) - kept;
    kind.total = kept;
    if (kept == 0) continue;  // all rigid: no list, no column
    if (k == 2)
      for (const auto& t : top.dihedrals) add(t.type, t.atoms);
    if (k == 3)
      for (const auto& t : top.impropers) add(t.type, t.atoms);
    std::size_t most = 1;
    for (const auto& row : owned) most = std::max(most, row.size() / (s.atoms + 1));
    kind.width = power_of_two(static_cast<int>(most));
    if (kind.width > 32)
      throw InputError(
          fmt::format("{}: an atom owns {} {}s; at most 32 are supported", path, most, s.name));
    with_width(
        kind.width * (s.atoms + 1),
        [&](auto w) {
          atoms.add_column<std::int64_t, decltype(w)::value>(kind.name,
                                                             {.migrate = true, .checkpoint = true});
        },
        Widths{});
    kinds_.push_back(std::move(kind));
  }
  // Bonds define the special partners even when all of them are rigid.
  active_ = !kinds_.empty() || !top.bonds.empty();
  if (!active_) return;

  // Special partners from the bonds: 1-2 bonded, 1-3 two bonds away, 1-4 three (each at its
  // lowest level, never the atom itself), as LAMMPS's special_bonds finds them.
  std::vector<std::vector<std::int64_t>> bonded(natoms);
  for (const auto& b : top.bonds) {
    bonded[static_cast<std::size_t>(b.atoms[0])].push_back(b.atoms[1]);
    bonded[static_cast<std::size_t>(b.atoms[1])].push_back(b.atoms[0]);
  }
  special_host_.assign(natoms, {});
  std::size_t widest = 1;
  for (std::size_t a = 0; a < natoms; ++a) {
    std::set<std::int64_t> seen{static_cast<std::int64_t>(a)};
    auto& levels = special_host_[a];
    std::vector<std::int64_t> frontier{static_cast<std::int64_t>(a)};
    for (int level = 0; level < 3; ++level) {
      std::vector<std::int64_t> found;
      for (const auto f : frontier)
        for (const auto b : bonded[static_cast<std::size_t>(f)])
          if (seen.insert(b).second) found.push_back(b);
      std::sort(found.begin(), found.end());
      levels[level] = found;
      frontier = std::move(found);
    }
    widest = std::max(widest, levels[0].size() + levels[1].size() + levels[2].size());
  }
  special_width_ = std::max(4, power_of_two(static_cast<int>(widest)));
  if (special_width_ > 256)
    throw InputError(
        fmt::format("{}: an atom has {} special partners (1-2, 1-3, 1-4); at most 256 "
                    "are supported",
                    path, widest));
  with_width(
      special_width_,
      [&](auto w) {
        atoms.add_column<std::int64_t, decltype(w)::value>("special",
                                                           {.migrate = true, .checkpoint = true});
      },
      Widths{});
  atoms.add_column<int, 3>("nspecial", {.migrate = true, .checkpoint = true});
}

MolecularTopology::IdRows MolecularTopology::rows_of(const AtomData& atoms,
                                                     const std::string& column) const {
  const ParticleColumn& c = atoms.columns.at(column);
  IdRows out;
  with_width(
      c.components(),
      [&](auto w) {
        const auto v = atoms.column<std::int64_t, decltype(w)::value>(column);
        out = IdRows(v.data(), v.extent(0), decltype(w)::value);
      },
      Widths{});
  return out;
}

void MolecularTopology::install(AtomData& atoms) const {
  if (!active_) return;
  const int n = atoms.nlocal;
  auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    const Kind& kind = kinds_[k];
    const IdRows rows = rows_of(atoms, kind.name);
    auto h = Kokkos::create_mirror_view(rows);
    Kokkos::deep_copy(h, std::int64_t(-1));
    const std::size_t source = kind.name == "bond"       ? 0
                               : kind.name == "angle"    ? 1
                               : kind.name == "dihedral" ? 2
                                                         : 3;
    for (int i = 0; i < n; ++i) {
      const auto& row = by_owner_[source][static_cast<std::size_t>(id(i))];
      for (std::size_t v = 0; v < row.size(); ++v) h(i, v) = row[v];
    }
    Kokkos::deep_copy(rows, h);
  }
  const IdRows special = rows_of(atoms, "special");
  auto hs = Kokkos::create_mirror_view(special);
  auto counts = atoms.column<int, 3>("nspecial");
  auto hc = Kokkos::create_mirror_view(counts);
  Kokkos::deep_copy(hs, std::int64_t(-1));
  for (int i = 0; i < n; ++i) {
    const auto& levels = special_host_[static_cast<std::size_t>(id(i))];
    int k = 0;
    for (int level = 0; level < 3; ++level) {
      for (const auto g : levels[level]) hs(i, k++) = g;
      hc(i, level) = k;
    }
  }
  Kokkos::deep_copy(special, hs);
  Kokkos::deep_copy(counts, hc);
}

void MolecularTopology::build(const AtomData& atoms, std::int64_t natoms, std::int64_t step,
                              MPI_Comm comm) {
  if (!active_) return;
  if (static_cast<std::int64_t>(head_.extent(0)) < natoms)
    head_ = Kokkos::View<int*, DevMemSpace>("md::id_head", natoms);
  if (static_cast<int>(next_.extent(0)) < atoms.nall())
    next_ = Kokkos::View<int*, DevMemSpace>("md::id_next", atoms.nall() + atoms.nall() / 4 + 16);
  Kokkos::deep_copy(head_, -1);
  kmd::chain_ids(atoms.id, atoms.nall(), head_, next_);
  kmd::MissingAtom missing;
  std::string lost;
  for (Kind& kind : kinds_) {
    const IdRows rows = rows_of(atoms, kind.name);
    switch (kind.atoms) {
      case 2:
        kind.count = kmd::build_terms<2>(rows, kind.width, atoms.id, atoms.x, atoms.nlocal, head_,
                                         next_, kind.list2, missing);
        break;
      case 3:
        kind.count = kmd::build_terms<3>(rows, kind.width, atoms.id, atoms.x, atoms.nlocal, head_,
                                         next_, kind.list3, missing);
        break;
      default:
        kind.count = kmd::build_terms<4>(rows, kind.width, atoms.id, atoms.x, atoms.nlocal, head_,
                                         next_, kind.list4, missing);
    }
    if (missing.owner >= 0 && lost.empty())
      lost = fmt::format("a {} of atom {} names atom {}", kind.name, missing.owner + 1,
                         missing.missing + 1);
  }
  special_pair_count_ = 0;
  if (scaled_levels_ != 0) {
    special_pair_count_ = kmd::build_special_pairs(
        rows_of(atoms, "special"), atoms.column<int, 3>("nspecial"), scaled_levels_, atoms.id,
        atoms.x, atoms.nlocal, head_, next_, special_pairs_, missing);
    if (missing.owner >= 0 && lost.empty())
      lost = fmt::format("the special pair of atoms {} and {}", missing.owner + 1,
                         missing.missing + 1);
  }
  // Collective: every rank raises the same error.
  const std::string where = agree_on_message(comm, lost);
  if (!where.empty())
    throw RuntimeError(fmt::format(
        "md: step {}: {} (ids as in the data file), which is neither owned nor a ghost on the "
        "rank that owns the term: the atoms are farther apart than the ghost cutoff (pair cutoff "
        "+ skin). The molecule has come apart (look for a blow-up, or a bond across the box in "
        "the data file)",
        step, where));
}

void MolecularTopology::exclude(kmd::NeighborList& list, const AtomData& atoms) const {
  if (!excludes()) return;
  kmd::remove_special_neighbors(list, atoms.id, rows_of(atoms, "special"),
                                atoms.column<int, 3>("nspecial"), excluded_levels_, atoms.nlocal);
}

kmd::ClusterExclusions MolecularTopology::cluster_exclusions(const AtomData& atoms) const {
  if (!excludes()) return {};
  return {rows_of(atoms, "special"), atoms.column<int, 3>("nspecial"), excluded_levels_};
}

BondedEnergies MolecularTopology::forces(const AtomData& atoms, const PairTables& pair,
                                         const kmd::Charges& q, bool energy) const {
  BondedEnergies e;
  if (!active_) return e;
  const auto& x = atoms.x;
  const auto& f = atoms.f;
  for (const Kind& kind : kinds_) {
    kmd::BondedSums s;
    if (kind.name == "bond") {
      s = kmd::bonded_forces<2>(kmd::BondHarmonic{kind.coeffs}, kind.list2, kind.count, x, f);
      e.bond += s.energy;
    } else if (kind.name == "angle") {
      s = kmd::bonded_forces<3>(kmd::AngleHarmonic{kind.coeffs}, kind.list3, kind.count, x, f);
      e.angle += s.energy;
    } else if (kind.name == "dihedral") {
      s = kind.style == 0
              ? kmd::bonded_forces<4>(kmd::DihedralCharmm{kind.coeffs}, kind.list4, kind.count, x,
                                      f)
              : kmd::bonded_forces<4>(kmd::DihedralOpls{kind.coeffs}, kind.list4, kind.count, x, f);
      e.dihedral += s.energy;
    } else {
      s = kmd::bonded_forces<4>(kmd::ImproperHarmonic{kind.coeffs}, kind.list4, kind.count, x, f);
      e.improper += s.energy;
    }
    for (int a = 0; a < 3; ++a) e.virial[a] += s.virial[a];
  }
  if (special_pair_count_ > 0) {
    const Kokkos::Array<Real, 3> lj{special_lj_[0], special_lj_[1], special_lj_[2]};
    const Kokkos::Array<Real, 3> coul{special_coul_[0], special_coul_[1], special_coul_[2]};
    const kmd::BondedSums s = std::visit(
        [&](const auto& p) {
          return kmd::special_pair_forces(p, special_pairs_, special_pair_count_, lj, coul, x,
                                          atoms.type, q, f);
        },
        pair);
    e.special = s.energy;
    e.special_coul = s.coul;
    for (int a = 0; a < 3; ++a) e.virial[a] += s.virial[a];
  }
  if (!energy) e = {};
  return e;
}

std::vector<io::H5mdTuples> MolecularTopology::connectivity(const AtomData& atoms) const {
  static const char* const kPlural[4] = {"bonds", "angles", "dihedrals", "impropers"};
  static const char* const kSingular[4] = {"bond", "angle", "dihedral", "improper"};
  std::vector<io::H5mdTuples> out;
  if (!active_) return out;
  const auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  for (std::size_t k = 0; k < file_kinds_.size(); ++k) {
    const FileKind& f = file_kinds_[k];
    if (f.total == 0) continue;
    io::H5mdTuples t;
    t.name = kPlural[k];
    t.total = f.total;
    t.style = f.style;
    t.section = f.section;
    t.coeffs = f.coeffs;
    // The owned atoms' terms (those held rigid are the constraints').
    const auto kind = std::find_if(kinds_.begin(), kinds_.end(),
                                   [&](const Kind& x) { return x.name == kSingular[k]; });
    if (kind != kinds_.end()) {
      const auto rows =
          Kokkos::create_mirror_view_and_copy(HostMemSpace(), rows_of(atoms, kind->name));
      const int stride = kind->atoms + 1;
      for (int i = 0; i < atoms.nlocal; ++i)
        for (int slot = 0; slot < kind->width; ++slot) {
          const std::int64_t type = rows(i, slot * stride);
          if (type < 0) continue;
          t.types.push_back(static_cast<std::int32_t>(type));
          t.owners.push_back(id(i));
          for (int a = 0; a < kind->atoms; ++a) t.atoms.push_back(rows(i, slot * stride + 1 + a));
        }
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string MolecularTopology::summary() const {
  std::string out;
  for (const Kind& k : kinds_)
    out += fmt::format("{}{} {}s ({})", out.empty() ? "" : ", ", k.total, k.name,
                       styles_of(k.name)[static_cast<std::size_t>(k.style)].name);
  if (rigid_ > 0)
    out += fmt::format("{}{} bonds and angles held rigid (md.constraints)", out.empty() ? "" : ", ",
                       rigid_);
  return out +
         fmt::format("; special_bonds lj {} {} {}", special_lj_[0], special_lj_[1], special_lj_[2]);
}

}  // namespace stratus::md
