// Constraints (constraints.hpp): the clusters of the data file, their columns, and SHAKE and
// RATTLE over the ghost plan.
#include "stratus/solvers/md/constraints.hpp"

#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/kernels/md/integrate.hpp"
#include "stratus/kernels/md/topology.hpp"
#include "stratus/solvers/md/md_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace stratus::md {

namespace kmd = kernels::md;

namespace {

constexpr double kDegree = 3.14159265358979323846 / 180.0;
constexpr int kRow = 8;  // p1 p2 p3, b1 b2 b3, angle type, centre flag

/// Union-find root of a.
std::int64_t root(std::vector<std::int64_t>& parent, std::int64_t a) {
  while (parent[static_cast<std::size_t>(a)] != a) {
    parent[static_cast<std::size_t>(a)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(a)])];
    a = parent[static_cast<std::size_t>(a)];
  }
  return a;
}

/// Device table of one coefficient per type.
Kokkos::View<Real*, DevMemSpace> table(const std::string& label, const std::vector<double>& v) {
  Kokkos::View<Real*, DevMemSpace> t(label, std::max<std::size_t>(v.size(), 1));
  auto h = Kokkos::create_mirror_view(t);
  for (std::size_t k = 0; k < v.size(); ++k) h(k) = v[k];
  Kokkos::deep_copy(t, h);
  return t;
}

/// The columns' runtime views.
ColumnView<std::int64_t, kRow> rows_of(const AtomData& atoms) {
  return atoms.column<std::int64_t, kRow>("shake");
}

}  // namespace

Constraints::Constraints(const io::Deck& deck, const MdConfig& config,
                         const io::AtomConfiguration& data, AtomData& atoms) {
  rattle_ = config.constraints.style == MdConfig::ConstraintStyle::rattle;
  tolerance_ = config.constraints.tolerance;
  iterations_ = config.constraints.iterations;
  const io::Topology& top = data.topology;
  const std::string& path = config.file;
  const auto natoms = static_cast<std::size_t>(data.natoms);
  // Constrained types, checked against the file, with their lengths and angles.
  std::vector<char> bond_on(static_cast<std::size_t>(top.bond_types), 0);
  std::vector<char> angle_on(static_cast<std::size_t>(top.angle_types), 0);
  for (const auto t : config.constraints.bond_types) {
    if (t > top.bond_types)
      throw deck.error_at("md.constraints.bonds",
                          fmt::format("bond type {} does not exist: {} has {} bond types", t, path,
                                      top.bond_types));
    bond_on[static_cast<std::size_t>(t - 1)] = 1;
  }
  for (const auto t : config.constraints.angle_types) {
    if (t > top.angle_types)
      throw deck.error_at("md.constraints.angles",
                          fmt::format("angle type {} does not exist: {} has {} angle types", t,
                                      path, top.angle_types));
    angle_on[static_cast<std::size_t>(t - 1)] = 1;
  }
  bond_length_.assign(static_cast<std::size_t>(top.bond_types), 0.0);
  for (const auto& row : top.bond_coeffs.rows) bond_length_[row.type] = row.values.at(1);
  angle_length_.assign(static_cast<std::size_t>(top.angle_types), 0.0);
  for (const auto& row : top.angle_coeffs.rows)
    angle_length_[row.type] = row.values.at(1) * kDegree;

  // Clusters: connected sets of constrained bonds, each an atom bonded to all the others.
  std::vector<std::int64_t> parent(natoms);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<std::vector<std::pair<std::int64_t, int>>> partners(natoms);  // (atom, bond type)
  std::vector<char> constrained(natoms, 0);
  for (const auto& b : top.bonds) {
    if (!bond_on[static_cast<std::size_t>(b.type)]) continue;
    const auto a0 = b.atoms[0], a1 = b.atoms[1];
    partners[static_cast<std::size_t>(a0)].push_back({a1, b.type});
    partners[static_cast<std::size_t>(a1)].push_back({a0, b.type});
    constrained[static_cast<std::size_t>(a0)] = constrained[static_cast<std::size_t>(a1)] = 1;
    parent[static_cast<std::size_t>(root(parent, a0))] = root(parent, a1);
  }
  std::vector<std::vector<std::int64_t>> members(natoms);
  for (std::size_t a = 0; a < natoms; ++a)
    if (constrained[a])
      members[static_cast<std::size_t>(root(parent, static_cast<std::int64_t>(a)))].push_back(
          static_cast<std::int64_t>(a));
  by_centre_.assign(natoms, {-1, -1, -1, 0, 0, 0, -1, 0});
  std::vector<std::int64_t> centre_of(natoms, -1);
  for (const auto& m : members) {
    if (m.empty()) continue;
    // The centre: the atom bonded to every other one (the lower id of a lone bond).
    std::int64_t centre = -1;
    for (const auto a : m)
      if (partners[static_cast<std::size_t>(a)].size() + 1 == m.size()) {
        centre = a;
        break;
      }
    if (m.size() > 4 || centre < 0)
      throw deck.error_at(
          "md.constraints.bonds",
          fmt::format("the constrained bonds of atoms {}{} in {} form a cluster of {} atoms that "
                      "is not one atom bonded to the others; SHAKE clusters are an atom and up to "
                      "3 partners (as LAMMPS's fix shake)",
                      m.front() + 1, m.size() > 1 ? fmt::format(", {}", m[1] + 1) : "", path,
                      m.size()));
    auto& row = by_centre_[static_cast<std::size_t>(centre)];
    int k = 0;
    for (const auto& [p, type] : partners[static_cast<std::size_t>(centre)]) {
      row[static_cast<std::size_t>(k)] = p;
      row[static_cast<std::size_t>(3 + k)] = type;
      ++k;
    }
    row[7] = 1;
    constraints_ += static_cast<std::int64_t>(m.size()) - 1;
    ++clusters_;
    for (const auto a : m) centre_of[static_cast<std::size_t>(a)] = centre;
  }
  // Angles: the far side of a 3-atom cluster centred on the angle's apex.
  for (std::size_t n = 0; n < top.angles.size(); ++n) {
    const auto& t = top.angles[n];
    if (!angle_on[static_cast<std::size_t>(t.type)]) continue;
    const auto apex = t.atoms[1];
    auto& row = by_centre_[static_cast<std::size_t>(apex)];
    // A data file's line, or the row of an H5MD file's /connectivity/angles.
    const std::string at = t.line > 0 ? fmt::format("{}:{}", path, t.line)
                                      : fmt::format("{}: /connectivity/angles row {}", path, n);
    const bool fits =
        row[7] == 1 && row[2] < 0 && row[1] >= 0 &&
        std::set<std::int64_t>{row[0], row[1]} == std::set<std::int64_t>{t.atoms[0], t.atoms[2]};
    if (!fits)
      throw InputError(fmt::format(
          "{}: angle {} has a constrained type (md.constraints.angles) but its atoms {} {} {} "
          "are not a 3-atom SHAKE cluster centred on {} (its two bonds constrained too)",
          at, n + 1, t.atoms[0] + 1, apex + 1, t.atoms[2] + 1, apex + 1));
    if (row[6] >= 0)
      throw InputError(
          fmt::format("{}: a second constrained angle on the cluster of atom {}", at, apex + 1));
    row[6] = t.type;
    ++constraints_;
  }
  if (clusters_ == 0)
    throw deck.error_at(
        "md.constraints.bonds",
        fmt::format("no bond of {} has a type listed here: nothing to constrain", path));
  bond_r0_ = table("md::shake_r0", bond_length_);
  angle_theta0_ = table("md::shake_theta0", angle_length_);
  atoms.add_column<std::int64_t, kRow>("shake", {.migrate = true, .checkpoint = true});
  atoms.add_column<Real, 3>("constraint_force", {.checkpoint = true});
  atoms.add_column<Real, 3>("constraint_virial", {.checkpoint = true});
}

void Constraints::add_rigid_terms(const AtomData& atoms, std::vector<io::H5mdTuples>& kinds) const {
  const auto find = [&](const char* name) {
    const auto it = std::find_if(kinds.begin(), kinds.end(),
                                 [&](const io::H5mdTuples& k) { return k.name == name; });
    return it == kinds.end() ? nullptr : &*it;
  };
  io::H5mdTuples* bonds = find("bonds");
  io::H5mdTuples* angles = find("angles");
  const auto rows = Kokkos::create_mirror_view_and_copy(HostMemSpace(), rows_of(atoms));
  const auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  for (int i = 0; i < atoms.nlocal; ++i) {
    if (rows(i, 7) != 1) continue;  // not a cluster's centre
    const std::int64_t centre = id(i);
    for (int k = 0; k < 3 && bonds != nullptr; ++k) {
      if (rows(i, k) < 0) continue;
      bonds->atoms.insert(bonds->atoms.end(), {centre, rows(i, k)});
      bonds->types.push_back(static_cast<std::int32_t>(rows(i, 3 + k)));
      bonds->owners.push_back(centre);
    }
    if (rows(i, 6) >= 0 && angles != nullptr) {
      angles->atoms.insert(angles->atoms.end(), {rows(i, 0), centre, rows(i, 1)});
      angles->types.push_back(static_cast<std::int32_t>(rows(i, 6)));
      angles->owners.push_back(centre);
    }
  }
}

std::string Constraints::summary() const {
  return fmt::format("{} on {} clusters ({} constraints), tolerance {:g}, at most {} iterations",
                     rattle_ ? "RATTLE" : "SHAKE", clusters_, constraints_, tolerance_,
                     iterations_);
}

void Constraints::install(AtomData& atoms) {
  const auto rows = rows_of(atoms);
  auto h = Kokkos::create_mirror_view(rows);
  auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  for (int i = 0; i < atoms.nlocal; ++i) {
    const auto& row = by_centre_[static_cast<std::size_t>(id(i))];
    for (int k = 0; k < kRow; ++k) h(i, k) = row[static_cast<std::size_t>(k)];
  }
  Kokkos::deep_copy(rows, h);
  by_centre_ = {};
}

void Constraints::build(const AtomData& atoms, const MolecularTopology& topology, std::int64_t step,
                        MPI_Comm comm) {
  const auto head = topology.id_head();
  const auto next = topology.id_next();
  const auto x = atoms.x;
  const auto closest = KOKKOS_LAMBDA(const int i, const std::int64_t g) {
    return kmd::closest_image(x, head, next, i, g);
  };
  std::int64_t missing = -1;
  const std::int64_t centre = kmd::build_clusters(rows_of(atoms), atoms.id, atoms.nlocal, bond_r0_,
                                                  angle_theta0_, closest, list_, missing);
  const std::string lost = centre < 0 ? std::string()
                                      : fmt::format("the SHAKE cluster of atom {} names atom {}",
                                                    centre + 1, missing + 1);
  const std::string where = agree_on_message(comm, lost);
  if (!where.empty())
    throw RuntimeError(
        fmt::format("md: step {}: {} (ids as in the data file), which is neither "
                    "owned nor a ghost here: the molecule has come apart",
                    step, where));
  if (static_cast<int>(scratch_.extent(0)) < atoms.nall()) {
    scratch_ = kmd::Vectors("md::shake_scratch", atoms.capacity());
    delta_ = kmd::Vectors("md::shake_delta", atoms.capacity());
  }
}

void Constraints::shake(AtomData& atoms, AtomExchange& exchange, const kmd::TypeMasses& mass,
                        double dt, double c, std::int64_t step, MPI_Comm comm) {
  const int n = atoms.nlocal;
  const Real cdt2 = c * dt * dt;
  kmd::predict_positions(atoms.x, atoms.v, atoms.f, atoms.type, mass, dt, cdt2, n, scratch_);
  exchange.update_ghost_rows(atoms, scratch_, true);
  Kokkos::deep_copy(delta_, Real(0));
  const auto wc = atoms.column<Real, 3>("constraint_virial");
  Kokkos::deep_copy(wc, Real(0));
  const kmd::ShakeOutcome out = kmd::shake(list_, atoms.x, scratch_, atoms.type, mass, cdt2,
                                           tolerance_, iterations_, delta_, wc);
  std::string failure;
  if (out.failed > 0) {
    auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
    failure = fmt::format(
        "SHAKE did not converge in {} iterations (md.constraints.iterations) on {} cluster(s); "
        "the first is that of atom {} (id in the data file), whose constrained distances were "
        "off by up to {:.3g} relative before the solve. The time step is too large for the "
        "constraints, or the system has blown up",
        iterations_, out.failed, id(out.first_centre) + 1, out.worst);
  }
  const std::string message = agree_on_message(comm, failure);
  if (!message.empty()) throw RuntimeError(fmt::format("md: step {}: {}", step, message));
  exchange.reverse_rows(atoms, delta_);
  const auto fc = atoms.column<Real, 3>("constraint_force");
  const auto f = atoms.f;
  const auto d = delta_;
  Kokkos::parallel_for(
      "md::shake_add", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int k = 0; k < 3; ++k) {
          fc(i, k) = d(i, k);
          f(i, k) += d(i, k);
        }
      });
}

void Constraints::reuse(AtomData& atoms) const {
  const auto fc = atoms.column<Real, 3>("constraint_force");
  const auto f = atoms.f;
  Kokkos::parallel_for(
      "md::shake_reuse", Kokkos::RangePolicy<DevExecSpace>(0, atoms.nlocal),
      KOKKOS_LAMBDA(const int i) {
        for (int k = 0; k < 3; ++k) f(i, k) += fc(i, k);
      });
}

void Constraints::rattle_velocities(AtomData& atoms, AtomExchange& exchange,
                                    const kmd::TypeMasses& mass, std::int64_t step, MPI_Comm comm) {
  const int n = atoms.nlocal;
  Kokkos::deep_copy(Kokkos::subview(scratch_, std::make_pair(0, n), Kokkos::ALL),
                    Kokkos::subview(atoms.v, std::make_pair(0, n), Kokkos::ALL));
  exchange.update_ghost_rows(atoms, scratch_, false);
  Kokkos::deep_copy(delta_, Real(0));
  const int failed = kmd::rattle_velocities(list_, atoms.x, scratch_, atoms.type, mass, tolerance_,
                                            iterations_, delta_);
  const std::string message = agree_on_message(
      comm, failed == 0 ? std::string()
                        : fmt::format("RATTLE's velocity constraints did not converge in {} "
                                      "iterations on {} cluster(s)",
                                      iterations_, failed));
  if (!message.empty()) throw RuntimeError(fmt::format("md: step {}: {}", step, message));
  exchange.reverse_rows(atoms, delta_);
  const auto v = atoms.v;
  const auto d = delta_;
  Kokkos::parallel_for(
      "md::rattle_add", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int k = 0; k < 3; ++k) v(i, k) += d(i, k);
      });
}

std::array<double, 3> Constraints::local_virial(const AtomData& atoms) const {
  const auto wc = atoms.column<Real, 3>("constraint_virial");
  kmd::Sum3 w;
  Kokkos::parallel_reduce(
      "md::shake_virial", Kokkos::RangePolicy<DevExecSpace>(0, atoms.nlocal),
      KOKKOS_LAMBDA(const int i, kmd::Sum3& acc) {
        for (int a = 0; a < 3; ++a) acc.v[a] += wc(i, a);
      },
      w);
  return {w.v[0], w.v[1], w.v[2]};
}

}  // namespace stratus::md
