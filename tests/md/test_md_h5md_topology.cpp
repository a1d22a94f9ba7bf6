// H5MD trajectories carry the molecular topology (/connectivity, with Stratus's types and
// coefficients under /parameters/stratus/connectivity) and [md.read_h5md] starts a run from such
// a frame with that topology: the charged branched molecules of tests/md/data, run from their
// data file writing a trajectory in two parts, restarted from the last frame of the second part
// alone (each part is self-contained) with no data file, give the same step-0 energies, term by
// term, and pressure. Runs at 1, 2 and 4 ranks. Bad connectivity is an InputError naming the
// file and the dataset.
#include "read_dataset.hpp"
#include "scratch_dir.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/outputs.hpp"
#include "test_context.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

using namespace stratus;
using stratus::testing::read_dataset;

namespace {

const std::string kData = STRATUS_MD_TEST_DATA "/branched_charged_real.data";

/// The charged branched molecules (pair coefficients of test_md_data's in.charged) from
/// `source`, a [md.read_data] or [md.read_h5md] section; `extra` adds sections.
io::Deck branched_deck(const std::string& source, const std::string& extra = "") {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck(
      "branched.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\nname = \"branched\"\n[md]\nunits = \"real\"\n"
      "timestep = 1.0\nmasses = [15.035, 14.027]\n" +
          source +
          "[md.special_bonds]\nlj = [0.0, 0.0, 0.5]\ncoul = [0.0, 0.5, 0.8333]\n"
          "[md.pair]\ncutoff = 10.0\nstyle = \"lj/cut/coul/cut\"\ncoulomb_cutoff = 9.0\n"
          "[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.195\nsigma = 3.75\n"
          "[[md.pair.coeff]]\ntypes = [2, 2]\nepsilon = 0.0914\nsigma = 3.95\n"
          "[[md.pair.coeff]]\ntypes = [1, 2]\nepsilon = 0.1335\nsigma = 3.85\n"
          "[md.neighbor]\nskin = 2.0\n" +
          extra,
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

std::string from_data() { return "[md.read_data]\nfile = \"" + kData + "\"\n"; }
std::string from_h5md(const std::string& path) {
  return "[md.read_h5md]\nfile = \"" + path + "\"\n";
}

/// String attribute `attr` of object `name` in `path` ("" if absent).
std::string string_attribute(const std::string& path, const std::string& name,
                             const std::string& attr) {
  std::string out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return out;
  const hid_t obj = H5Oopen(file, name.c_str(), H5P_DEFAULT);
  if (obj >= 0 && H5Aexists(obj, attr.c_str()) > 0) {
    const hid_t a = H5Aopen(obj, attr.c_str(), H5P_DEFAULT);
    const hid_t type = H5Aget_type(a);
    if (H5Tis_variable_str(type) > 0) {
      char* text = nullptr;
      const hid_t mem = H5Tcopy(H5T_C_S1);
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5Tget_cset(type));  // HDF5 does not convert between character sets
      if (H5Aread(a, mem, &text) >= 0 && text != nullptr) out = text;
      H5free_memory(text);
      H5Tclose(mem);
    } else {
      std::string raw(H5Tget_size(type), '\0');
      if (H5Aread(a, type, raw.data()) >= 0) out = raw.c_str();
    }
    H5Tclose(type);
    H5Aclose(a);
  }
  if (obj >= 0) H5Oclose(obj);
  H5Fclose(file);
  return out;
}

/// The name of the object that `name`@particles_group refers to ("" if none).
std::string referenced(const std::string& path, const std::string& name) {
  std::string out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return out;
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (d >= 0 && H5Aexists(d, "particles_group") > 0) {
    const hid_t a = H5Aopen(d, "particles_group", H5P_DEFAULT);
    hobj_ref_t ref{};
    if (H5Aread(a, H5T_STD_REF_OBJ, &ref) >= 0) {
      const hid_t target = H5Rdereference2(d, H5P_DEFAULT, H5R_OBJECT, &ref);
      if (target >= 0) {
        char text[256] = {};
        H5Iget_name(target, text, sizeof text);
        out = text;
        H5Oclose(target);
      }
    }
    H5Aclose(a);
  }
  if (d >= 0) H5Dclose(d);
  H5Fclose(file);
  return out;
}

/// The data file's terms of one kind in the documented order (by the id of the atom that
/// stores them, `owner`, then the file's order), as rows of global ids and types.
template <int N>
void expected_rows(const std::vector<io::DataTerm<N>>& terms, int owner,
                   std::vector<std::int64_t>& ids, std::vector<std::int32_t>& types) {
  std::vector<std::size_t> order(terms.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return terms[a].atoms[owner] < terms[b].atoms[owner];
  });
  ids.clear();
  types.clear();
  for (const std::size_t t : order) {
    for (const auto id : terms[t].atoms) ids.push_back(id);
    types.push_back(terms[t].type);
  }
}

/// Checks that `path` holds the data file's topology in /connectivity.
void expect_connectivity(const std::string& path, const io::AtomConfiguration& data) {
  SCOPED_TRACE(path);
  const io::Topology& top = data.topology;
  struct Kind {
    const char* name;
    int width;
    std::size_t count;
    const io::CoeffSection* coeffs;
    std::string style;
  };
  const Kind kinds[] = {{"bonds", 2, top.bonds.size(), &top.bond_coeffs, "harmonic"},
                        {"angles", 3, top.angles.size(), &top.angle_coeffs, "harmonic"},
                        {"dihedrals", 4, top.dihedrals.size(), &top.dihedral_coeffs, "charmm"},
                        {"impropers", 4, top.impropers.size(), &top.improper_coeffs, "harmonic"}};
  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.name);
    std::vector<std::int64_t> ids;
    std::vector<std::int32_t> types;
    if (k.width == 2) expected_rows(top.bonds, 0, ids, types);
    if (k.width == 3) expected_rows(top.angles, 1, ids, types);
    if (std::string(k.name) == "dihedrals") expected_rows(top.dihedrals, 1, ids, types);
    if (std::string(k.name) == "impropers") expected_rows(top.impropers, 1, ids, types);
    const std::string tuples = std::string("/connectivity/") + k.name;
    const std::string params = std::string("/parameters/stratus/connectivity/") + k.name;
    std::vector<hsize_t> shape;
    const auto got = read_dataset<std::int64_t>(path, tuples, H5T_NATIVE_INT64, shape);
    EXPECT_EQ(shape, (std::vector<hsize_t>{k.count, static_cast<hsize_t>(k.width)}));
    EXPECT_EQ(got, ids) << "the tuples differ from the data file's";
    const auto got_types =
        read_dataset<std::int32_t>(path, params + "/type", H5T_NATIVE_INT32, shape);
    EXPECT_EQ(shape, (std::vector<hsize_t>{k.count}));
    EXPECT_EQ(got_types, types) << "the types differ from the data file's";
    const auto coeffs =
        read_dataset<double>(path, params + "/coefficients", H5T_NATIVE_DOUBLE, shape);
    std::vector<double> want;
    for (const auto& row : k.coeffs->rows)
      want.insert(want.end(), row.values.begin(), row.values.end());
    ASSERT_FALSE(k.coeffs->rows.empty());
    EXPECT_EQ(shape,
              (std::vector<hsize_t>{k.coeffs->rows.size(), k.coeffs->rows[0].values.size()}));
    EXPECT_EQ(coeffs, want) << "the coefficients differ from the data file's";
    EXPECT_EQ(string_attribute(path, params + "/coefficients", "style"), k.style);
    EXPECT_EQ(referenced(path, tuples), "/particles/all");
  }
}

/// Per global id, the force on each owned atom of every rank (collective).
std::vector<double> forces_by_id(const md::AtomData& atoms, std::int64_t natoms) {
  std::vector<double> out(static_cast<std::size_t>(3 * natoms), 0.0);
  const auto f = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.f);
  const auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  for (int i = 0; i < atoms.nlocal; ++i)
    for (int a = 0; a < 3; ++a) out[static_cast<std::size_t>(3 * id(i) + a)] = f(i, a);
  MPI_Allreduce(MPI_IN_PLACE, out.data(), static_cast<int>(out.size()), MPI_DOUBLE, MPI_SUM,
                stratus::testing::context().comm());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class H5mdTopology : public stratus::testing::ScratchDirTest {
 protected:
  H5mdTopology() : ScratchDirTest("md-h5md-topology") {}

  /// The molecules from the data file, writing a frame every `every` steps to the scratch
  /// directory.
  io::Deck writing_deck(int every) const {
    return branched_deck(from_data(), fmt::format("[output]\ndir = \"{}\"\n[md.trajectory]\n"
                                                  "every = {}\n",
                                                  dir_.string(), every));
  }
};

// The run restarted from a frame has the topology of the data file: every energy term, the
// pressure and every force as the run that wrote the frame had them at that step (the same
// positions, velocities, charges and terms; sums in another order: 1e-12 relative).
TEST_F(H5mdTopology, ARunFromAFrameHasTheDataFilesTopology) {
  Context& ctx = stratus::testing::context();
  md::MdSolver run(ctx, writing_deck(50));
  {
    // Frames at steps 0 and 50 in branched.h5md, the part closed at step 60 (a checkpoint's
    // sync), the frame of step 100 in branched.part0001.h5md.
    OutputDescriptor outputs;
    run.declare_outputs(outputs);
    outputs.open(-1);
    for (int s = 0; s < 100; ++s) {
      outputs.advance(run, 100);
      if (s + 1 == 60) outputs.sync();
    }
    outputs.close();
  }
  const md::Thermo before = run.thermo();
  ASSERT_EQ(before.step, 100);
  const std::string first = file("branched.h5md"), second = file("branched.part0001.h5md");
  const io::AtomConfiguration data = io::parse_lammps_data(kData, read_text(kData));
  if (ctx.rank() == 0) {
    expect_connectivity(first, data);
    expect_connectivity(second, data);  // each part is a whole file
  }
  // The second part alone, no data file.
  md::MdSolver resumed(ctx, branched_deck(from_h5md(second)));
  ASSERT_EQ(resumed.natoms(), 320);
  const md::Thermo after = resumed.thermo();
  const std::pair<const char*, double> got[] = {
      {"kinetic", after.kinetic},   {"pair", after.pair},         {"coul", after.coul},
      {"bond", after.bond},         {"angle", after.angle},       {"dihedral", after.dihedral},
      {"improper", after.improper}, {"pressure", after.pressure}, {"potential", after.potential}};
  const double want[] = {before.kinetic,  before.pair,     before.coul,
                         before.bond,     before.angle,    before.dihedral,
                         before.improper, before.pressure, before.potential};
  double worst = 0;
  for (std::size_t q = 0; q < std::size(want); ++q) {
    ASSERT_NE(want[q], 0.0) << got[q].first << " is zero: the comparison would test nothing";
    const double rel = std::abs(got[q].second - want[q]) / std::abs(want[q]);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-12) << got[q].first << ": " << got[q].second << " after the restart, "
                          << want[q] << " at step 100 of the run that wrote the frame";
  }
  // The forces, atom by atom, relative to the largest.
  const auto fa = forces_by_id(run.atoms(), 320), fb = forces_by_id(resumed.atoms(), 320);
  double largest = 0, diff = 0;
  for (std::size_t k = 0; k < fa.size(); ++k) {
    largest = std::max(largest, std::abs(fa[k]));
    diff = std::max(diff, std::abs(fa[k] - fb[k]));
  }
  ASSERT_GT(largest, 0.0);
  EXPECT_LE(diff, 1e-12 * largest) << "the forces differ after the restart";
  if (ctx.rank() == 0)
    std::printf("[ restart  ] %d rank(s): thermo to %.3g relative, forces to %.3g of the largest\n",
                ctx.size(), worst, diff / largest);
}

/// SPC/E water (spce_512_eq.data, rigid by SHAKE: every bond and angle a constraint) with
/// lj/cut/coul/long and PPPM, from `source`; from an H5MD frame the deck gives the masses and the
/// pair coefficients that the data file's Masses and Pair Coeffs give.
io::Deck water_deck(const std::string& source, const std::string& extra = "") {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  const bool data = source.find("read_data") != std::string::npos;
  return io::load_deck(
      "water.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\nname = \"water\"\n[md]\nunits = \"real\"\n"
      "timestep = 2.0\n" +
          std::string(data ? "" : "masses = [15.9994, 1.008]\n") + source +
          "[md.pair]\nstyle = \"lj/cut/coul/long\"\ncutoff = 10.0\n" +
          (data ? ""
                : "[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.1553\nsigma = 3.166\n"
                  "[[md.pair.coeff]]\ntypes = [2, 2]\nepsilon = 0.0\nsigma = 1.0\n") +
          "[md.neighbor]\nskin = 2.0\n[md.kspace]\nstyle = \"pppm\"\naccuracy = 1e-5\n"
          "mesh = [24, 24, 24]\ng_ewald = 0.31260417\n[md.constraints]\nstyle = \"shake\"\n"
          "bonds = [1]\nangles = [1]\ntolerance = 1e-10\niterations = 500\n" +
          extra,
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

// The bonds and angles held rigid by md.constraints are not in the topology's columns but in
// the constraints' clusters: they are written all the same, and a run from the frame has the
// same clusters. Every energy term as the run that wrote the frame to 1e-12; the pressure to
// 1e-8 (its constraint part comes from a SHAKE solve to md.constraints.tolerance = 1e-10, done
// again at the start, as from a data file).
TEST_F(H5mdTopology, RigidWaterRestartsWithItsConstraints) {
  Context& ctx = stratus::testing::context();
  const std::string eq = STRATUS_MD_TEST_DATA "/spce_512_eq.data";
  md::MdSolver run(ctx, water_deck("[md.read_data]\nfile = \"" + eq + "\"\n",
                                   fmt::format("[output]\ndir = \"{}\"\n[md.trajectory]\n"
                                               "every = 10\n",
                                               dir_.string())));
  {
    OutputDescriptor outputs;
    run.declare_outputs(outputs);
    outputs.open(-1);
    for (int s = 0; s < 10; ++s) outputs.advance(run, 10);
    outputs.close();
  }
  const md::Thermo before = run.thermo();
  const std::string path = file("water.h5md");
  if (ctx.rank() == 0) {
    // The data file's bonds and angles, each once (a rigid bond as centre, partner).
    const io::AtomConfiguration data = io::parse_lammps_data(eq, read_text(eq));
    std::vector<hsize_t> shape;
    const auto bonds =
        read_dataset<std::int64_t>(path, "/connectivity/bonds", H5T_NATIVE_INT64, shape);
    ASSERT_EQ(shape, (std::vector<hsize_t>{1024, 2}));
    std::set<std::pair<std::int64_t, std::int64_t>> got, want;
    for (std::size_t b = 0; b < 1024; ++b) got.insert(std::minmax(bonds[2 * b], bonds[2 * b + 1]));
    for (const auto& b : data.topology.bonds) want.insert(std::minmax(b.atoms[0], b.atoms[1]));
    EXPECT_EQ(got, want);
    const auto angles =
        read_dataset<std::int64_t>(path, "/connectivity/angles", H5T_NATIVE_INT64, shape);
    ASSERT_EQ(shape, (std::vector<hsize_t>{512, 3}));
    std::set<std::array<std::int64_t, 3>> got3, want3;
    for (std::size_t a = 0; a < 512; ++a) {
      const auto ends = std::minmax(angles[3 * a], angles[3 * a + 2]);
      got3.insert({ends.first, angles[3 * a + 1], ends.second});
    }
    for (const auto& a : data.topology.angles) {
      const auto ends = std::minmax(a.atoms[0], a.atoms[2]);
      want3.insert({ends.first, a.atoms[1], ends.second});
    }
    EXPECT_EQ(got3, want3);
  }
  md::MdSolver resumed(ctx, water_deck(from_h5md(path)));
  const md::Thermo after = resumed.thermo();
  const std::pair<const char*, double> got[] = {{"kinetic", after.kinetic},
                                                {"pair", after.pair},
                                                {"coul", after.coul},
                                                {"kspace", after.kspace},
                                                {"potential", after.potential}};
  const double want[] = {before.kinetic, before.pair, before.coul, before.kspace, before.potential};
  for (std::size_t q = 0; q < std::size(want); ++q)
    EXPECT_NEAR(got[q].second, want[q], 1e-12 * std::abs(want[q])) << got[q].first;
  EXPECT_NEAR(after.pressure, before.pressure, 1e-8 * std::abs(before.pressure));
  if (ctx.rank() == 0)
    std::printf("[ water    ] %d rank(s): potential to %.3g, pressure to %.3g relative\n",
                ctx.size(), std::abs(after.potential / before.potential - 1),
                std::abs(after.pressure / before.pressure - 1));
}

/// A copy of `path` as `copy` (rank 0), changed by `edit(file)` (an HDF5 file opened for writing).
template <class Edit>
void edited_copy(const std::string& path, const std::string& copy, Edit edit) {
  if (stratus::testing::context().rank() == 0) {
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    const hid_t file = H5Fopen(copy.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    edit(file);
    H5Fclose(file);
  }
  MPI_Barrier(stratus::testing::context().comm());
}

/// Overwrites element `row`, `column` of the 2D (or 1D: column 0) integer dataset `name`.
void put_integer(hid_t file, const std::string& name, hsize_t row, hsize_t column,
                 std::int64_t value) {
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(d);
  const hsize_t start[2] = {row, column}, count[2] = {1, 1};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hsize_t one = 1;
  const hid_t mem = H5Screate_simple(1, &one, nullptr);
  H5Dwrite(d, H5T_NATIVE_INT64, mem, space, H5P_DEFAULT, &value);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(d);
}

std::string read_error(const std::string& path) {
  try {
    io::read_h5md_frame(stratus::testing::context().comm(), path, "all", -1, 0, "Angstrom");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// Connectivity that does not fit the frame is refused on every rank, naming the file, the
// dataset, what was expected and what was found; a run from it fails the same way.
TEST_F(H5mdTopology, BadConnectivityIsAnInputError) {
  Context& ctx = stratus::testing::context();
  {
    md::MdSolver run(ctx, writing_deck(1));
    OutputDescriptor outputs;
    run.declare_outputs(outputs);
    outputs.open(-1);
    outputs.advance(run, 1);
    outputs.close();
  }
  const std::string good = file("branched.h5md");
  EXPECT_EQ(read_error(good), "accepted");

  // An atom id out of range.
  const std::string out_of_range = file("out_of_range.h5md");
  edited_copy(good, out_of_range,
              [](hid_t f) { put_integer(f, "/connectivity/bonds", 3, 1, 320); });
  const std::string expected =
      out_of_range +
      ": /connectivity/bonds: row 3 names atom 320; expected ids 0 .. 319, the atoms of "
      "/particles/all (md.read_h5md.index_base = 0)";
  EXPECT_EQ(read_error(out_of_range), expected);
  try {
    md::MdSolver run(ctx, branched_deck(from_h5md(out_of_range)));
    ADD_FAILURE() << "a run started from " << out_of_range;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  // A negative one.
  const std::string negative = file("negative.h5md");
  edited_copy(good, negative, [](hid_t f) { put_integer(f, "/connectivity/impropers", 0, 3, -1); });
  EXPECT_EQ(read_error(negative),
            negative +
                ": /connectivity/impropers: row 0 names atom -1; expected ids 0 .. 319, the atoms "
                "of /particles/all (md.read_h5md.index_base = 0)");

  // Tuples of the wrong width: angles of two atoms.
  const std::string narrow = file("narrow.h5md");
  edited_copy(good, narrow, [](hid_t f) {
    H5Ldelete(f, "/connectivity/angles", H5P_DEFAULT);
    const hsize_t dims[2] = {256, 2};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(f, "/connectivity/angles", H5T_STD_I64LE, space, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT);
    std::vector<std::int64_t> ids(512, 0);
    for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<std::int64_t>(k % 320);
    H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data());
    H5Dclose(d);
    H5Sclose(space);
  });
  EXPECT_EQ(read_error(narrow),
            narrow +
                ": /connectivity/angles has shape (256, 2); expected (angles, 3): 3 atom ids per "
                "angle");

  // A type without coefficients (the dihedrals have types 0 and 1).
  const std::string untyped = file("untyped.h5md");
  edited_copy(good, untyped, [](hid_t f) {
    put_integer(f, "/parameters/stratus/connectivity/dihedrals/type", 5, 0, 2);
  });
  EXPECT_EQ(read_error(untyped),
            untyped +
                ": /parameters/stratus/connectivity/dihedrals/type: row 5 holds type 2; "
                "/parameters/stratus/connectivity/dihedrals/coefficients has coefficients for "
                "types 0 .. 1 only (2 rows): a type without coefficients");

  // Tuples without their types.
  const std::string no_types = file("no_types.h5md");
  edited_copy(good, no_types, [](hid_t f) {
    H5Ldelete(f, "/parameters/stratus/connectivity/bonds/type", H5P_DEFAULT);
  });
  EXPECT_EQ(read_error(no_types),
            no_types +
                ": /connectivity/bonds has no types: expected "
                "/parameters/stratus/connectivity/bonds/type (one 0-based type per row) and "
                "/parameters/stratus/connectivity/bonds/coefficients (the coefficients per type), "
                "as Stratus writes them; a bond needs its type and coefficients to be computed");
}

}  // namespace
