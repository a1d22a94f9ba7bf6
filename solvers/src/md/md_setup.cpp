// Where an md run's initial state comes from: the data or H5MD file (box, masses, pair
// coefficients), the molecules (topology, constraints, charges, molecule ids: a data file's, or
// an H5MD frame's with its /connectivity), PPPM, and this rank's atoms (lattice sites or the
// file's atoms of its subdomain).
#include "stratus/core/device.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/md/lattice.hpp"
#include "stratus/solvers/md/md_solver.hpp"

#include <fmt/format.h>

#include <cmath>
#include <variant>

namespace stratus::md {

namespace kmd = kernels::md;

void MdSolver::read_initial_configuration(const io::Deck& deck) {
  const MdConfig& c = config_;
  if (c.source == MdConfig::Source::lattice) {
    const double a = lattice_constant(c.lattice.style, c.lattice.density);
    for (int d = 0; d < 3; ++d) {
      box_.lo[d] = 0.0;
      box_.hi[d] = a * static_cast<double>(c.lattice.cells[d]);
    }
    return;
  }
  // The box from the file, shifted to start at the origin.
  const bool data = c.source == MdConfig::Source::lammps_data;
  const std::string key = data ? "md.read_data.file" : "md.read_h5md.file";
  if (data)
    data_ = std::make_unique<io::AtomConfiguration>(
        io::parse_lammps_data(c.file, io::read_text_file(ctx_.comm(), c.file, "LAMMPS data file")));
  else
    data_ = std::make_unique<io::AtomConfiguration>(
        io::read_h5md_frame(ctx_.comm(), c.file, c.h5md.group, c.h5md.frame, c.h5md.index_base,
                            c.units.system == UnitSystem::lj ? "" : c.units.h5md_length));
  // A data file declares its type count (and its Masses are taken when md.masses is left out);
  // an H5MD frame's highest species must exist.
  if (data && !data_->masses.empty()) {
    adopt_file_masses(deck);
    ntypes_ = config_.ntypes();
  }
  if (data ? data_->ntypes != ntypes_ : data_->ntypes > ntypes_)
    throw deck.error_at(deck.origin("md.masses").is_default ? key : "md.masses",
                        fmt::format("{} has {} atom types but md.masses gives {} masses", c.file,
                                    data_->ntypes, ntypes_));
  for (int d = 0; d < 3; ++d) {
    box_.lo[d] = 0.0;
    box_.hi[d] = data_->box.hi[d] - data_->box.lo[d];
  }
}

void MdSolver::setup_molecules(const io::Deck& deck) {
  if (!data_) {
    if (config_.pair.charged())
      throw deck.error_at("md.pair.style",
                          "a charged pair style needs the atoms' charges: start from a data file "
                          "of atom style full ([md.read_data]) or an H5MD frame with charges "
                          "([md.read_h5md])");
    topology_ = std::make_unique<MolecularTopology>(deck, config_, io::AtomConfiguration{}, atoms_);
    return;
  }
  // A data file, or an H5MD frame with its charge and molecule elements and /connectivity:
  // the same molecules either way.
  const io::AtomConfiguration& d = *data_;
  if (config_.pair.charged() && !d.charges)
    throw deck.error_at(
        "md.pair.style",
        config_.source == MdConfig::Source::h5md
            ? fmt::format("a charged pair style needs the atoms' charges: {} has no "
                          "/particles/{}/charge element",
                          config_.file, config_.h5md.group)
            : fmt::format("a charged pair style needs the atoms' charges: {} is of atom "
                          "style atomic; give a data file of atom style full",
                          config_.file));
  if (config_.pair.charged()) atoms_.attach_charges();
  if (d.style == io::AtomStyle::full) {
    if (!config_.pair.charged())
      for (const auto& a : d.atoms)
        if (a.charge != 0.0)
          throw deck.error_at(
              "md.pair.style",
              fmt::format("{} gives atom {} the charge {} ({}), but md.pair.style = \"lj/cut\" "
                          "has no Coulomb term and would ignore it: take lj/cut/coul/cut",
                          config_.file, a.id + 1, a.charge, config_.units.charge));
    // Molecule ids travel with the atoms and are written to trajectories and checkpoints.
    atoms_.add_column<std::int64_t>("molecule",
                                    {.migrate = true, .checkpoint = true, .trajectory = true});
  }
  topology_ = std::make_unique<MolecularTopology>(deck, config_, d, atoms_);
  if (config_.constraints.style != MdConfig::ConstraintStyle::none)
    constraints_ = std::make_unique<Constraints>(deck, config_, d, atoms_);
}

void MdSolver::setup_kspace(const io::Deck& deck) {
  if (!config_.pair.charged()) return;
  ChargeSums sums;
  {
    auto q = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.q);
    double local[2] = {0, 0};
    for (int i = 0; i < atoms_.nlocal; ++i) {
      local[0] += q(i);
      local[1] += q(i) * q(i);
    }
    MPI_Allreduce(MPI_IN_PLACE, local, 2, MPI_DOUBLE, MPI_SUM, ctx_.comm());
    sums = {local[0], local[1], natoms_};
  }
  const Units& u = config_.units;
  if (std::abs(sums.qsum) > 1e-6) {
    if (config_.kspace.pppm && !config_.kspace.allow_charged)
      throw deck.error_at(
          "md.kspace.allow_charged",
          fmt::format("the system's net charge is {:.6g} {} (the charges of {}); PPPM would add a "
                      "uniform neutralising background: make the system neutral, or set "
                      "md.kspace.allow_charged = true",
                      sums.qsum, u.charge, config_.file));
    ctx_.log().warn("md: the system's net charge is {:.6g} {}", sums.qsum, u.charge);
  }
  if (!config_.kspace.pppm) return;
  const auto& k = config_.kspace;
  pppm_ = std::make_unique<Pppm>(ctx_, PppmSettings{k.accuracy, k.order, k.mesh, k.g_ewald}, box_,
                                 config_.pair.coulomb_cutoff, u.qqr2e, u.qqr2e, sums);
  std::get<kmd::LJCutCoulLong>(pair_).g_ewald = pppm_->g_ewald();
  ctx_.log().info("md: {}", pppm_->describe());
}

void MdSolver::adopt_file_masses(const io::Deck& deck) {
  const auto& file = data_->masses;
  const std::string& path = config_.file;
  for (std::size_t t = 0; t < file.size(); ++t)
    if (!(file[t] > 0) || !std::isfinite(file[t]))
      throw deck.error_at("md.read_data.file",
                          fmt::format("{}: the Masses section gives type {} the mass {}: expected "
                                      "a finite mass > 0",
                                      path, t + 1, file[t]));
  const auto list = [](const std::vector<double>& m) {
    std::string text;
    for (const double v : m) text += fmt::format("{}{}", text.empty() ? "" : ", ", v);
    return "[" + text + "]";
  };
  if (deck.origin("md.masses").is_default) {
    // The file's masses are the system's; md.masses was left at its default.
    config_.masses = file;
    ctx_.log().info("md: masses from the Masses section of {}: {}", path, list(file));
    return;
  }
  if (config_.masses != file)
    throw deck.error_at(
        "md.masses",
        fmt::format("{} disagrees with the Masses section of {}, which gives {}: leave md.masses "
                    "out to take the file's masses, or make the two agree",
                    list(config_.masses), path, list(file)));
}

void MdSolver::install_atoms(const InitialAtoms& a) {
  const int n = static_cast<int>(a.id.size());
  atoms_.reserve(n);
  auto x = Kokkos::create_mirror_view(atoms_.x);
  auto v = Kokkos::create_mirror_view(atoms_.v);
  auto id = Kokkos::create_mirror_view(atoms_.id);
  auto type = Kokkos::create_mirror_view(atoms_.type);
  auto image = Kokkos::create_mirror_view(atoms_.image);
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      x(i, d) = a.x[i][d];
      v(i, d) = a.v[i][d];
      image(i, d) = a.image[i][d];
    }
    id(i) = a.id[i];
    type(i) = a.type[i];
  }
  Kokkos::deep_copy(atoms_.x, x);
  Kokkos::deep_copy(atoms_.v, v);
  Kokkos::deep_copy(atoms_.id, id);
  Kokkos::deep_copy(atoms_.type, type);
  Kokkos::deep_copy(atoms_.image, image);
  atoms_.nlocal = n;
  atoms_.nghost = 0;
  long long local = n, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, ctx_.comm());
  natoms_ = total;
}

void MdSolver::create_atoms() {
  const Box local = decomposition_->local_box(box_);
  InitialAtoms a;
  if (data_) {
    // Every rank parsed the whole file; each keeps the atoms of its own subdomain, wrapped into
    // the box (the image counts keep the unwrapped positions).
    for (const auto& atom : data_->atoms) {
      std::array<Real, 3> x{};
      std::array<int, 3> im = atom.image;
      bool inside = true;
      for (int d = 0; d < 3; ++d) {
        const Real len = box_.length(d);
        Real u = atom.x[d] - data_->box.lo[d];
        const Real shift = std::floor(u / len);
        u -= shift * len;
        if (u >= len) u -= len;  // rounding at the upper edge
        im[d] += static_cast<int>(shift);
        x[d] = u;
        inside = inside && u >= local.lo[d] && u < local.hi[d];
      }
      if (!inside) continue;
      a.id.push_back(atom.id);
      a.type.push_back(atom.type);
      a.x.push_back(x);
      a.image.push_back(im);
      a.v.push_back(data_->velocities.empty()
                        ? std::array<Real, 3>{0, 0, 0}
                        : data_->velocities[static_cast<std::size_t>(atom.id)]);
    }
  } else {
    const auto& lat = config_.lattice;
    const int t = lat.type;
    const auto sites = lattice_sites(lat.style, lat.density, lat.cells, local);
    for (std::size_t i = 0; i < sites.ids.size(); ++i) {
      a.id.push_back(sites.ids[i]);
      a.type.push_back(t);
      a.x.push_back(
          {sites.positions[3 * i], sites.positions[3 * i + 1], sites.positions[3 * i + 2]});
      a.v.push_back({0, 0, 0});
      a.image.push_back({0, 0, 0});
    }
  }
  install_atoms(a);
  if (data_ && data_->style == io::AtomStyle::full) {
    // The file's molecule ids and charges of this rank's atoms, by id.
    std::vector<std::size_t> row_of(static_cast<std::size_t>(data_->natoms));
    for (std::size_t k = 0; k < data_->atoms.size(); ++k)
      row_of[static_cast<std::size_t>(data_->atoms[k].id)] = k;
    auto mol = atoms_.column<std::int64_t>("molecule");
    auto hm = Kokkos::create_mirror_view(mol);
    auto hq = Kokkos::create_mirror_view(atoms_.q);
    const bool charged = config_.pair.charged();
    for (std::size_t i = 0; i < a.id.size(); ++i) {
      const io::DataAtom& atom = data_->atoms[row_of[static_cast<std::size_t>(a.id[i])]];
      hm(i, 0) = atom.molecule;
      if (charged) hq(i) = atom.charge;
    }
    Kokkos::deep_copy(mol, hm);
    if (charged) Kokkos::deep_copy(atoms_.q, hq);
  }
}

}  // namespace stratus::md
