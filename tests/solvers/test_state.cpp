// StateDescriptor: a declared state goes into a checkpoint and comes back at any rank count (the
// clock, values, a field block, particle rows, the hook last); a checkpoint that does not fit the
// declaration (a deck-fixed size or length that differs, a missing required value) is refused
// naming the file and the entry, and an optional value an older file lacks keeps its setup value.
#include "scratch_dir.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/solvers/state.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using stratus::InputError;
using stratus::StateDescriptor;
using stratus::io::CheckpointReader;
using stratus::io::CheckpointWriter;

MPI_Comm comm() { return stratus::testing::context().comm(); }
int rank() { return stratus::testing::context().rank(); }
int size() { return stratus::testing::context().size(); }

constexpr std::int64_t kAtoms = 101;
const std::array<std::int64_t, 3> kCells{6, 3, 2};

/// A toy solver's state: a clock, values, a 6x3x2 field split along x, atoms spread over ranks.
struct Toy {
  std::int64_t step = 0;
  double time = 0, dt = 0, energy = 0;
  std::int64_t counter = 0;
  std::vector<double> chain;
  std::vector<std::int64_t> history;
  std::vector<double> field;  // this rank's block, x slowest
  std::vector<std::int64_t> atom_ids;
  std::vector<double> charge;  // per atom
  std::int64_t natoms = kAtoms;
  std::vector<std::string> events;  // restore order

  [[nodiscard]] stratus::GridBlock block() const {
    const auto b = stratus::io::row_block(kCells[0], rank(), size());
    return {{b.first, 0, 0}, {b.count, kCells[1], kCells[2]}};
  }
  stratus::GridArray array() {
    const auto n = static_cast<std::size_t>(block().extent[0]);
    field.resize(n * 6);
    stratus::GridArray a;
    a.extent = {n, 3, 2};
    a.get = [this](auto lo, auto count, double* host) {
      for (std::size_t i = 0; i < count[0]; ++i)
        for (std::size_t j = 0; j < count[1]; ++j)
          for (std::size_t k = 0; k < count[2]; ++k)
            *host++ = field[((lo[0] + i) * 3 + lo[1] + j) * 2 + lo[2] + k];
    };
    a.put = [this](auto lo, auto count, const double* host) {
      for (std::size_t i = 0; i < count[0]; ++i)
        for (std::size_t j = 0; j < count[1]; ++j)
          for (std::size_t k = 0; k < count[2]; ++k)
            field[((lo[0] + i) * 3 + lo[1] + j) * 2 + lo[2] + k] = *host++;
    };
    return a;
  }

  void declare(StateDescriptor& s, std::vector<std::int64_t> grid, bool chain_optional = false) {
    using Restore = StateDescriptor::Restore;
    s.clock(&step, &time, &dt);
    s.invariant("cells", std::move(grid), "grid");
    s.value("energy", &energy);
    s.value("counter", &counter);
    s.values("chain", &chain, chain_optional ? Restore::optional : Restore::same_size);
    s.values("history", &history);
    s.record("layout", [] { return std::vector<std::int64_t>{size()}; });
    StateDescriptor::Field f;
    f.name = "u";
    f.array = [this] { return array(); };
    f.block = block();
    f.global = kCells;
    f.after_restore = [this] { events.push_back("field"); };
    s.field(std::move(f));
    StateDescriptor::Particles p;
    p.n_global = &natoms;
    p.reals = {{"charge", 1}};
    p.ids = [this] { return atom_ids; };
    p.real_values = [this](const std::string& name) {
      EXPECT_EQ(name, "charge");
      return charge;
    };
    p.place = [this](const CheckpointReader& in, stratus::io::ParticleColumns&& rows) {
      EXPECT_EQ(in.ints("layout").size(), 1u);
      atom_ids = rows.ids;
      charge = rows.real("charge").values;
      events.push_back("particles");
    };
    s.particles(std::move(p));
    s.on_restored([this](const CheckpointReader&) { events.push_back("hook"); });
  }
};

class State : public stratus::testing::ScratchDirTest {
 protected:
  State() : ScratchDirTest("state") {}

  /// Writes the checkpoint of a filled Toy, declared with `grid`; returns its path.
  std::string write(const std::vector<std::int64_t>& grid) {
    Toy t;
    t.step = 42;
    t.time = 0.21;
    t.dt = 0.005;
    t.energy = -1.0 / 3.0;
    t.counter = 1234567890123;
    t.chain = {0.5, -2.5e-300, 7.0};
    t.history = {3, 1, 4, 1, 5};
    (void)t.array();
    for (std::size_t i = 0; i < t.field.size(); ++i)
      t.field[i] = 1000.0 * rank() + static_cast<double>(i) + 0.25;
    // Atoms dealt round-robin (rank r holds ids r, r + size, ...).
    for (std::int64_t id = rank(); id < kAtoms; id += size()) {
      t.atom_ids.push_back(id);
      t.charge.push_back(0.1 * static_cast<double>(id) - 3);
    }
    StateDescriptor s;
    t.declare(s, grid);
    const std::string path = file("toy.h5");
    CheckpointWriter w(comm(), path, "[run]\n", {"toy", t.step, t.time, t.dt, "", "1x1x1", "host"});
    s.save(w);
    w.commit();
    return path;
  }
};

TEST_F(State, EveryDeclaredEntryComesBackInOrder) {
  const std::string path = write({6, 3, 2});
  Toy t;
  t.chain.assign(3, 0.0);  // the deck's chain length
  StateDescriptor s;
  t.declare(s, {6, 3, 2});
  // 6 x 3 x 2 doubles of the field and one double per atom.
  EXPECT_EQ(s.bytes(), (36u + static_cast<std::uint64_t>(kAtoms)) * 8u);
  CheckpointReader r(comm(), path);
  r.verify();
  s.restore(r);
  EXPECT_EQ(t.step, 42);
  EXPECT_EQ(t.time, 0.21);
  EXPECT_EQ(t.dt, 0.005);
  EXPECT_EQ(t.energy, -1.0 / 3.0);
  EXPECT_EQ(t.counter, 1234567890123);
  EXPECT_EQ(t.chain, (std::vector<double>{0.5, -2.5e-300, 7.0}));
  EXPECT_EQ(t.history, (std::vector<std::int64_t>{3, 1, 4, 1, 5}));
  for (std::size_t i = 0; i < t.field.size(); ++i)
    EXPECT_EQ(t.field[i], 1000.0 * rank() + static_cast<double>(i) + 0.25);
  // Each rank gets its block of the global rows, in id order, whoever held them.
  const auto b = stratus::io::row_block(kAtoms, rank(), size());
  ASSERT_EQ(static_cast<std::int64_t>(t.atom_ids.size()), b.count);
  for (std::size_t i = 0; i < t.atom_ids.size(); ++i) {
    EXPECT_EQ(t.atom_ids[i], b.first + static_cast<std::int64_t>(i));
    EXPECT_EQ(t.charge[i], 0.1 * static_cast<double>(t.atom_ids[i]) - 3);
  }
  EXPECT_EQ(t.events, (std::vector<std::string>{"field", "particles", "hook"}));
}

TEST_F(State, ACheckpointOfAnotherGridIsRefusedNamingBoth) {
  const std::string path = write({6, 3, 2});
  Toy t;
  t.chain.assign(3, 0.0);
  StateDescriptor s;
  t.declare(s, {8, 3, 2});
  CheckpointReader r(comm(), path);
  try {
    s.restore(r);
    FAIL() << "restored a 6x3x2 checkpoint into an 8x3x2 grid";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": grid 6x3x2 in the checkpoint, 8x3x2 now");
  }
  EXPECT_EQ(t.step, 42) << "the clock comes first";
  EXPECT_TRUE(t.events.empty()) << "nothing after the refused invariant";
}

TEST_F(State, ALengthTheDeckFixesMustMatch) {
  const std::string path = write({6, 3, 2});
  Toy t;
  t.chain.assign(2, 0.0);  // a chain of 2 now, 3 in the file
  StateDescriptor s;
  t.declare(s, {6, 3, 2});
  CheckpointReader r(comm(), path);
  try {
    s.restore(r);
    FAIL() << "a chain of 3 restored into a chain of 2";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/state/chain holds 3 values in the checkpoint, 2 now"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(State, OptionalValuesMayBeAbsentRequiredOnesMayNot) {
  const std::string path = file("old.h5");
  {
    // An "older" file: no chain, no history.
    CheckpointWriter w(comm(), path, "[run]\n", {"toy", 7, 0.0, 0.1, "", "1x1x1", "host"});
    w.put("cells", std::vector<std::int64_t>{6, 3, 2});
    w.put("energy", 2.5);
    w.put("counter", std::int64_t{9});
    w.commit();
  }
  Toy t;
  t.chain = {1.0, 2.0};
  StateDescriptor s;
  s.clock(&t.step);
  s.invariant("cells", std::vector<std::int64_t>{6, 3, 2}, "grid");
  s.value("energy", &t.energy);
  s.values("chain", &t.chain, StateDescriptor::Restore::optional);
  CheckpointReader r(comm(), path);
  s.restore(r);
  EXPECT_EQ(t.step, 7);
  EXPECT_EQ(t.energy, 2.5);
  EXPECT_EQ(t.chain, (std::vector<double>{1.0, 2.0})) << "absent optional: the setup value stays";

  s.values("history", &t.history);  // required
  try {
    s.restore(r);
    FAIL() << "a required value missing from the file went unnoticed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("history"), std::string::npos) << e.what();
  }
}

}  // namespace
