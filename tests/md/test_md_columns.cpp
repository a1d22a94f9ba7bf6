// A per-atom property added to a running MD solver by one declaration (AtomData::add_column) is
// carried by migration, trajectories and checkpoints with no other code: written to every H5MD
// frame in its atom's row, saved from the declared state and restored (the test runs at 1, 2
// and 4 ranks), it keeps each atom's value.
#include "read_dataset.hpp"
#include "scratch_dir.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/state.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>

using namespace stratus;
using stratus::testing::read_dataset;

namespace {

io::Deck small_deck(const std::string& output_dir) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  const std::string text =
      "[run]\nsolver = \"md\"\nsteps = 200\nname = \"columns\"\n"
      "[output]\ndir = \"" +
      output_dir +
      "\"\n"
      "[md.trajectory]\nevery = 100\n"
      "[md]\ntimestep = 0.005\n"
      "[md.lattice]\nstyle = \"fcc\"\ndensity = 0.8442\ncells = [6, 6, 6]\n"
      "[md.velocity]\ntemperature = 3.0\nseed = 4242\n"
      "[md.pair]\ncutoff = 2.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 1.0\nsigma = 1.0\n"
      "[md.neighbor]\nskin = 0.3\n";
  return io::load_deck(
      "columns.toml", text, std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

double charge_of(GlobalId id) { return 0.25 * static_cast<double>(id % 7) - 0.75; }
std::int64_t molecule_of(GlobalId id) { return static_cast<std::int64_t>(id / 3); }

/// The declaration a solver with charges would make (flags: migrate, ghost, checkpoint,
/// trajectory).
void declare_charge(md::AtomData& atoms) {
  atoms.add_column<Real>("charge",
                         {.migrate = true, .ghost = true, .checkpoint = true, .trajectory = true});
  atoms.add_column<std::int64_t>("molecule",
                                 {.migrate = true, .checkpoint = true, .trajectory = true});
}

/// Counts the owned atoms whose added values are not those of their id.
int wrong_values(const md::AtomData& atoms) {
  const auto q = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.column<Real>("charge"));
  const auto m =
      Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.column<std::int64_t>("molecule"));
  const auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  int bad = 0;
  for (int i = 0; i < atoms.nlocal; ++i)
    if (q(i, 0) != charge_of(id(i)) || m(i, 0) != molecule_of(id(i))) ++bad;
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, stratus::testing::context().comm());
  return total;
}

class MdColumns : public stratus::testing::ScratchDirTest {
 protected:
  MdColumns() : ScratchDirTest("md-columns") {}
};

TEST_F(MdColumns, AnAddedPropertyTravelsAndComesBackFromACheckpoint) {
  auto& ctx = stratus::testing::context();
  const io::Deck deck = small_deck(dir_.string());
  const std::string path = file("columns.h5");
  std::int64_t natoms = 0;
  {
    md::MdSolver a(ctx, deck);
    declare_charge(a.atoms());
    auto& atoms = a.atoms();
    {
      const auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
      auto q = Kokkos::create_mirror_view(atoms.column<Real>("charge"));
      auto m = Kokkos::create_mirror_view(atoms.column<std::int64_t>("molecule"));
      for (int i = 0; i < atoms.nlocal; ++i) {
        q(i, 0) = charge_of(id(i));
        m(i, 0) = molecule_of(id(i));
      }
      Kokkos::deep_copy(atoms.column<Real>("charge"), q);
      Kokkos::deep_copy(atoms.column<std::int64_t>("molecule"), m);
    }
    const std::int64_t rebuilds = a.rebuilds();
    // T = 3: atoms cross subdomains between rebuilds. Frames at steps 0, 100 and 200.
    OutputDescriptor outputs;
    a.declare_outputs(outputs);
    outputs.open(-1);
    for (int s = 0; s < 200; ++s) outputs.advance(a, 200);
    outputs.close();
    ASSERT_GT(a.rebuilds(), rebuilds + 3) << "no migration happened";
    EXPECT_EQ(wrong_values(atoms), 0) << "an added column lost its values in migration";
    natoms = a.natoms();
    StateDescriptor state;
    a.declare_state(state);
    io::CheckpointWriter w(ctx.comm(), path, deck.to_toml(),
                           state.info(a.current_step(), a.current_time(), "test"));
    state.save(w);
    w.commit();
  }
  // Every trajectory frame holds the added columns in id rows, next to the built-in ones.
  if (ctx.rank() == 0) {
    const std::string h5md = file("columns.h5md");
    std::vector<hsize_t> shape;
    const auto q =
        read_dataset<double>(h5md, "/particles/all/charge/value", H5T_NATIVE_DOUBLE, shape);
    ASSERT_EQ(shape, (std::vector<hsize_t>{3, static_cast<hsize_t>(natoms)}))
        << "the charge is not in the trajectory";
    const auto m =
        read_dataset<std::int64_t>(h5md, "/particles/all/molecule/value", H5T_NATIVE_INT64, shape);
    ASSERT_EQ(shape, (std::vector<hsize_t>{3, static_cast<hsize_t>(natoms)}));
    const auto steps =
        read_dataset<std::int64_t>(h5md, "/particles/all/charge/step", H5T_NATIVE_INT64, shape);
    EXPECT_EQ(steps, (std::vector<std::int64_t>{0, 100, 200}));
    int bad = 0;
    for (std::size_t k = 0; k < q.size(); ++k) {
      const auto id = static_cast<GlobalId>(k % static_cast<std::size_t>(natoms));
      if (q[k] != charge_of(id) || m[k] != molecule_of(id)) ++bad;
    }
    EXPECT_EQ(bad, 0) << "an added column reached the trajectory in the wrong rows";
  }
  // The checkpoint holds the columns under their names, in id order.
  {
    io::CheckpointReader r(ctx.comm(), path);
    r.verify();
    const auto rows = r.read_particles({"charge"}, {"molecule"});
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      EXPECT_EQ(rows.real("charge").values[i], charge_of(rows.ids[i]));
      EXPECT_EQ(rows.integer("molecule").values[i], molecule_of(rows.ids[i]));
    }
  }
  // A fresh solver that declares the same property gets it back (same layout here; the test
  // runs at 1, 2 and 4 ranks, each reading its own file).
  md::MdSolver b(ctx, deck);
  declare_charge(b.atoms());
  StateDescriptor state;
  b.declare_state(state);
  io::CheckpointReader r(ctx.comm(), path);
  state.restore(r);
  EXPECT_EQ(b.current_step(), 200);
  EXPECT_EQ(b.natoms(), natoms);
  EXPECT_EQ(wrong_values(b.atoms()), 0) << "an added column came back wrong";
  for (int s = 0; s < 50; ++s) b.step();
  EXPECT_EQ(wrong_values(b.atoms()), 0) << "an added column lost its values after the restart";
}

}  // namespace
