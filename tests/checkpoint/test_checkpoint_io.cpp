// Checkpoint files at 1, 2 and 4 ranks: particles land in global-id order whatever rank held
// them, fields as global arrays, small state values exactly; a reader at any rank count gets them
// back; damage (flipped bytes, a missing marker, a truncated file, a changed manifest) is
// detected and named. Also
// the pieces around them: durations, row blocks, particle routing, time-series cut-back.
#include "scratch_dir.hpp"
#include "stratus/core/duration.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/field_io.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/io/checkpoint_flush.hpp"
#include "stratus/io/series.hpp"
#include "test_context.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using stratus::io::CheckpointReader;
using stratus::io::CheckpointWriter;
using stratus::io::ParticleColumns;

MPI_Comm comm() { return stratus::testing::context().comm(); }
int rank() { return stratus::testing::context().rank(); }
int size() { return stratus::testing::context().size(); }

class CheckpointIo : public stratus::testing::ScratchDirTest {
 protected:
  CheckpointIo() : ScratchDirTest("checkpoint") {}
};

TEST(Duration, ParsesUnitsAndClockForms) {
  using stratus::parse_duration;
  EXPECT_EQ(parse_duration("90"), 90.0);
  EXPECT_EQ(parse_duration("90s"), 90.0);
  EXPECT_EQ(parse_duration("15min"), 900.0);
  EXPECT_EQ(parse_duration("1.5h"), 5400.0);
  EXPECT_EQ(parse_duration("2d"), 172800.0);
  EXPECT_EQ(parse_duration("05:30"), 330.0);
  EXPECT_EQ(parse_duration("1:30:00"), 5400.0);
  EXPECT_EQ(parse_duration("1-02:00:00"), 93600.0);  // Slurm's days-hours form
  for (const char* bad : {"", "abc", "-5", "5 parsecs", "1:61", "1:2:3:4", "nan", "UNLIMITED"})
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

TEST(Checksum64, EveryChangedByteChangesIt) {
  std::vector<unsigned char> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
  const auto base = stratus::io::checksum64(data.data(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (const unsigned char bit : {1, 128}) {
      data[i] ^= bit;
      EXPECT_NE(stratus::io::checksum64(data.data(), data.size()), base) << i;
      data[i] ^= bit;
    }
  }
  // Length matters too (trailing zeros are not invisible).
  EXPECT_NE(stratus::io::checksum64(data.data(), 999), stratus::io::checksum64(data.data(), 1000));
  std::vector<unsigned char> zeros(64, 0);
  EXPECT_NE(stratus::io::checksum64(zeros.data(), 63), stratus::io::checksum64(zeros.data(), 64));
}

TEST_F(CheckpointIo, DurableCopyIsCompleteOrAbsent) {
  // copy_verified: the copy appears under its name only once read back equal; a copy that
  // cannot be made leaves neither it nor its .partial behind.
  if (stratus::testing::context().rank() != 0) return;  // plain file I/O, one rank
  const std::string src = file("local.h5"), dst = file("durable.h5");
  std::string bytes(5 * 1024 * 1024 + 17, '\0');  // more than one 4 MiB chunk
  std::mt19937 rng(7);
  for (char& c : bytes) c = static_cast<char>(rng());
  std::ofstream(src, std::ios::binary) << bytes;
  EXPECT_EQ(stratus::io::copy_verified(src, dst), bytes.size());
  std::ifstream in(dst, std::ios::binary);
  const std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(copied == bytes);
  EXPECT_FALSE(std::filesystem::exists(dst + ".partial"));
  const std::string nowhere = file("no/such/dir/durable.h5");
  try {
    (void)stratus::io::copy_verified(src, nowhere);
    ADD_FAILURE() << "no error for a missing destination directory";
  } catch (const stratus::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("creating the durable copy"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)stratus::io::copy_verified(file("missing.h5"), file("x.h5")),
               stratus::RuntimeError);
  EXPECT_FALSE(std::filesystem::exists(file("x.h5")));
  EXPECT_FALSE(std::filesystem::exists(file("x.h5.partial")));
  // In the background: one copy at a time, each result reported once.
  stratus::io::CheckpointFlusher flusher;
  EXPECT_FALSE(flusher.start(1, src, file("a.h5")).has_value());
  const auto first = flusher.start(2, src, nowhere);  // waits for the first copy
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->step, 1);
  EXPECT_TRUE(first->error.empty()) << first->error;
  const auto second = flusher.wait();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->step, 2);
  EXPECT_FALSE(second->error.empty());
  EXPECT_FALSE(flusher.wait().has_value());
  EXPECT_FALSE(flusher.poll().has_value());
}

TEST(RowBlock, SplitsEveryRowOnceAndOwnerAgrees) {
  for (std::int64_t n : {0, 1, 7, 100, 1001})
    for (int ranks : {1, 2, 3, 4, 7}) {
      std::int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto b = stratus::io::row_block(n, r, ranks);
        EXPECT_EQ(b.first, next);
        for (std::int64_t row = b.first; row < b.first + b.count; ++row)
          EXPECT_EQ(stratus::io::row_owner(n, ranks, row), r);
        next += b.count;
      }
      EXPECT_EQ(next, n);
    }
}

/// This rank's share of `n` particles, scattered: particle ids are dealt out by a seeded
/// permutation, so each rank holds ids from all over the range.
ParticleColumns scattered_particles(std::int64_t n) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(42));
  ParticleColumns c;
  c.n_global = n;
  c.reals = {{"x", 3, {}}};
  c.ints = {{"type", 1, {}}};
  for (std::int64_t k = rank(); k < n; k += size()) {
    const std::int64_t id = perm[static_cast<std::size_t>(k)];
    c.ids.push_back(id);
    for (int d = 0; d < 3; ++d) c.reals[0].values.push_back(0.5 * static_cast<double>(id) + d);
    c.ints[0].values.push_back(id % 3);
  }
  return c;
}

/// A 5 x 4 x 3 field (one ghost layer) split along x over the ranks, value 100 i + 10 j + k.
struct SplitField {
  std::array<std::int64_t, 3> cells{5, 4, 3};
  stratus::GridBlock block{{0, 0, 0}, cells};
  stratus::Field3D u;
  stratus::Field3D::HostMirror h;
  SplitField() {
    block.begin[0] = stratus::io::row_block(5, rank(), size()).first;
    block.extent[0] = stratus::io::row_block(5, rank(), size()).count;
    u = stratus::Field3D("u", block.extent[0] + 2, 6, 5);
    h = Kokkos::create_mirror_view(u);
    for (std::int64_t i = 0; i < block.extent[0]; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 3; ++k)
          h(i + 1, j + 1, k + 1) = 100.0 * static_cast<double>(block.begin[0] + i) + 10 * j + k;
    Kokkos::deep_copy(u, h);
  }
};

CheckpointWriter& fill(CheckpointWriter& w, std::int64_t n) {
  w.write_particles(scattered_particles(n));
  w.put("chain", std::vector<double>{1.0 / 3.0, -2.5e-300, 7.0});
  w.put("counter", std::int64_t{1234567890123});
  return w;
}

TEST_F(CheckpointIo, ParticlesFieldsAndStateRoundTripAtAnyRankCount) {
  const std::string path = file("round.h5");
  const std::int64_t n = 1003;
  const stratus::io::CheckpointInfo info{"md", 17, 0.085, 0.005, "lj", "2x1x1", "Serial"};
  const SplitField f;
  const auto& [cells, block, u, h] = f;
  {
    CheckpointWriter w(comm(), path, "[run]\nsolver = \"md\"\n", info);
    fill(w, n).write_field("u", stratus::grid_array(u), 1, block, cells);
    EXPECT_FALSE(fs::exists(path)) << "the final name appears only at commit";
    EXPECT_GT(w.commit(), 0u);
  }
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));

  CheckpointReader r(comm(), path);
  r.verify();
  EXPECT_EQ(r.info().solver, "md");
  EXPECT_EQ(r.info().step, 17);
  EXPECT_EQ(r.info().time, 0.085);
  EXPECT_EQ(r.info().decomposition, "2x1x1");
  EXPECT_EQ(r.deck_text(), "[run]\nsolver = \"md\"\n");
  EXPECT_EQ(r.reals("chain"), (std::vector<double>{1.0 / 3.0, -2.5e-300, 7.0}));
  EXPECT_EQ(r.integer("counter"), 1234567890123);
  EXPECT_EQ(r.particle_count(), n);
  const auto mine = r.read_particles({"x"}, {"type"});
  const auto b = stratus::io::row_block(n, rank(), size());
  ASSERT_EQ(static_cast<std::int64_t>(mine.rows()), b.count);
  for (std::size_t i = 0; i < mine.rows(); ++i) {
    const std::int64_t id = b.first + static_cast<std::int64_t>(i);
    EXPECT_EQ(mine.ids[i], id);
    EXPECT_EQ(mine.real("x").values[3 * i + 2], 0.5 * static_cast<double>(id) + 2);
    EXPECT_EQ(mine.integer("type").values[i], id % 3);
  }
  stratus::Field3D back("back", block.extent[0] + 2, 6, 5);
  r.read_field("u", stratus::grid_array(back), 1, block, cells);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (std::int64_t i = 0; i < block.extent[0]; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(hb(i + 1, j + 1, k + 1), h(i + 1, j + 1, k + 1));
}

/// The particles, state and a 5 x 4 x 3 field of one checkpoint as one reader sees them.
struct Contents {
  std::vector<std::int64_t> ids, types;
  std::vector<double> x, field, chain;
  std::int64_t counter = 0, step = 0;
};

/// Everything of `paths` that a reader over `c` reads; every rank reads all of the field.
Contents read_all(MPI_Comm c, const std::vector<std::string>& paths) {
  CheckpointReader r(c, paths);
  r.verify();
  Contents out;
  const auto p = r.read_particles({"x"}, {"type"});
  out.ids = p.ids;
  out.types = p.integer("type").values;
  out.x = p.real("x").values;
  out.chain = r.reals("chain");
  out.counter = r.integer("counter");
  out.step = r.info().step;
  const std::array<std::int64_t, 3> cells{5, 4, 3};
  const stratus::GridBlock all{{0, 0, 0}, cells};
  stratus::Field3D back("back", 7, 6, 5);
  r.read_field("u", stratus::grid_array(back), 1, all, cells);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) out.field.push_back(hb(i + 1, j + 1, k + 1));
  return out;
}

/// Writes a checkpoint of 1003 scattered particles and a field split along x: whole when
/// `group_comm` is null, else as one part per group (`part` of `parts`, this rank's group).
void write_parts(const std::string& path, MPI_Comm group_comm, stratus::io::CheckpointPart part,
                 std::int64_t step) {
  const stratus::io::CheckpointInfo info{"md", step, 0.085, 0.005, "lj", "2x1x1", "Serial"};
  const SplitField f;
  const std::string deck = "[run]\nsolver = \"md\"\n";
  auto w = group_comm == MPI_COMM_NULL
               ? std::make_unique<CheckpointWriter>(comm(), path, deck, info)
               : std::make_unique<CheckpointWriter>(comm(), group_comm, part, path, deck, info);
  fill(*w, 1003).write_field("u", stratus::grid_array(f.u), 1, f.block, f.cells);
  w->commit();
}

TEST_F(CheckpointIo, PartsPerHostReadBackAsTheWholeCheckpointAtAnyRankCount) {
  if (size() < 2) GTEST_SKIP() << "parts need two groups of ranks (np 2 and 4 run this)";
  // Two "hosts": ranks [0, size/2) and [size/2, size), as Open MPI places them by slot.
  const int host = rank() < size() / 2 ? 0 : 1;
  MPI_Comm host_comm = MPI_COMM_NULL;
  MPI_Comm_split(comm(), host, rank(), &host_comm);
  stratus::io::CheckpointStore store(dir_.string(), "run");
  const std::string whole = store.path_for(40);
  write_parts(whole, MPI_COMM_NULL, {}, 40);
  std::vector<std::string> parts{store.path_for(40, 0, 2), store.path_for(40, 1, 2)};
  write_parts(parts[static_cast<std::size_t>(host)], host_comm, {host, 2, 0x1234abcdULL}, 40);
  MPI_Comm_free(&host_comm);

  // Each part alone holds only its host's blocks: a whole-checkpoint reader refuses it, a
  // one-part check verifies it.
  CheckpointReader(comm(), {parts[1]}, true).verify();
  try {
    CheckpointReader r(comm(), std::vector<std::string>{parts[1]});
    ADD_FAILURE() << "one part of two was read as a checkpoint";
  } catch (const stratus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("part 1 of 2, but 1 part file(s) given"),
              std::string::npos)
        << e.what();
  }
  // In any order, over every rank and over rank 0 alone, the parts read as the whole file.
  const Contents expect = read_all(comm(), {whole});
  const Contents got = read_all(comm(), {parts[1], parts[0]});
  EXPECT_EQ(got.ids, expect.ids);
  EXPECT_EQ(got.x, expect.x);
  EXPECT_EQ(got.types, expect.types);
  EXPECT_EQ(got.field, expect.field);
  EXPECT_EQ(got.chain, expect.chain);
  EXPECT_EQ(got.counter, 1234567890123);
  EXPECT_EQ(got.step, 40);
  MPI_Comm alone = MPI_COMM_NULL;
  MPI_Comm_split(comm(), rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
  if (rank() == 0) {
    const Contents one = read_all(alone, parts);
    EXPECT_EQ(one.ids.size(), 1003u);
    const Contents ref = read_all(alone, {whole});
    EXPECT_EQ(one.x, ref.x);
    EXPECT_EQ(one.field, ref.field);
    MPI_Comm_free(&alone);
  }

  // A box that cuts across the parts' blocks reads the same from the parts as from the file.
  {
    const std::array<std::int64_t, 3> cells{5, 4, 3};
    const stratus::GridBlock box{{1, 1, 1}, {3, 2, 2}};
    CheckpointReader whole_r(comm(), whole);
    CheckpointReader parts_r(comm(), parts);
    stratus::Field3D a("a", 5, 4, 4), b("b", 5, 4, 4);
    whole_r.read_field("u", stratus::grid_array(a), 1, box, cells);
    parts_r.read_field("u", stratus::grid_array(b), 1, box, cells);
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
    for (int i = 1; i <= 3; ++i)
      for (int j = 1; j <= 2; ++j)
        for (int k = 1; k <= 2; ++k) {
          EXPECT_EQ(hb(i, j, k), ha(i, j, k));
          EXPECT_EQ(ha(i, j, k), 100.0 * (i) + 10 * j + k);
        }
  }
  // The parts are compact: together they store what the whole file does, not once a part.
  if (rank() == 0) {
    const auto stored = [](const std::string& path, const char* dataset) {
      const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
      const hsize_t bytes = H5Dget_storage_size(d);
      H5Dclose(d);
      H5Fclose(f);
      return bytes;
    };
    for (const char* dataset : {"/fields/u", "/particles/x", "/particles/type"})
      EXPECT_EQ(stored(parts[0], dataset) + stored(parts[1], dataset), stored(whole, dataset))
          << dataset;
    EXPECT_LT(fs::file_size(parts[0]) + fs::file_size(parts[1]), 2 * fs::file_size(whole));
  }

  // The store names and lists the parts.
  if (rank() == 0) {
    EXPECT_EQ(fs::path(parts[1]).filename(), "run.step000000000040.part1of2.h5");
    const auto e = store.parse(parts[1]);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->step, 40);
    EXPECT_EQ(e->part, 1);
    EXPECT_EQ(e->parts, 2);
    EXPECT_FALSE(store.parse(file("run.step000000000040.part01of2.h5")).has_value());
    EXPECT_FALSE(store.parse(file("run.step000000000040.part2of2.h5")).has_value());
    EXPECT_FALSE(store.parse(file("run.step000000000040.part0of1.h5")).has_value());
    const auto list = store.list();
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0].parts, 1);
    EXPECT_EQ(list[1].part, 0);
    EXPECT_EQ(list[2].part, 1);
  }

  // A part of another checkpoint (another id), or a part given twice, is refused by name.
  MPI_Comm_split(comm(), host, rank(), &host_comm);
  const std::string other = file("other.part1of2.h5");
  // Written as part `host` of an id-5 checkpoint; only host 1's file is kept.
  write_parts(host == 1 ? other : file("other.part0of2.h5"), host_comm, {host, 2, 5}, 40);
  MPI_Comm_free(&host_comm);
  const auto refused = [&](const std::vector<std::string>& paths, const std::string& why) {
    try {
      CheckpointReader r(comm(), paths);
      ADD_FAILURE() << "a mixed set of parts was accepted";
    } catch (const stratus::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused({parts[0], other}, "belongs to another checkpoint");
  refused({parts[0], parts[0]}, "part 1 is missing or given twice");
}

TEST_F(CheckpointIo, RoutingSendsEveryRowWhereAsked) {
  ParticleColumns c = scattered_particles(97);
  std::vector<int> dest;
  for (const auto id : c.ids) dest.push_back(static_cast<int>(id % size()));
  const auto got = stratus::io::route_particles(comm(), c, dest);
  std::int64_t expect = 0;
  for (std::int64_t id = 0; id < 97; ++id) expect += id % size() == rank() ? 1 : 0;
  ASSERT_EQ(static_cast<std::int64_t>(got.rows()), expect);
  for (std::size_t i = 0; i < got.rows(); ++i) {
    EXPECT_EQ(got.ids[i] % size(), rank());
    EXPECT_EQ(got.real("x").values[3 * i], 0.5 * static_cast<double>(got.ids[i]));
  }
}

TEST_F(CheckpointIo, MissingOrDuplicateIdsAreRefusedAndLeaveNothing) {
  const std::string path = file("bad_ids.h5");
  const stratus::io::CheckpointInfo info{"md", 1, 0, 1, "", "", ""};
  ParticleColumns c = scattered_particles(50);
  if (rank() == 0) c.ids[0] = c.ids.size() > 1 ? c.ids[1] : 0;  // one id twice, one missing
  {
    CheckpointWriter w(comm(), path, "", info);
    try {
      w.write_particles(c);
      ADD_FAILURE() << "duplicate id accepted";
    } catch (const stratus::RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("particle id"), std::string::npos) << e.what();
    }
  }
  MPI_Barrier(comm());
  EXPECT_FALSE(fs::exists(path + ".partial"));
  EXPECT_FALSE(fs::exists(path));
}

// A blown-up state never becomes a checkpoint: a NaN in one rank's particles or in the /state
// values is refused on every rank, and nothing is left behind (the older checkpoint stays the
// newest).
TEST_F(CheckpointIo, NonFiniteValuesAreRefusedAndLeaveNothing) {
  const std::string path = file("nan.h5");
  const stratus::io::CheckpointInfo info{"md", 1, 0, 1, "", "", ""};
  ParticleColumns c = scattered_particles(50);
  if (rank() == 0 && !c.reals[0].values.empty())
    c.reals[0].values[0] = std::numeric_limits<double>::quiet_NaN();
  {
    CheckpointWriter w(comm(), path, "", info);
    try {
      w.write_particles(c);
      ADD_FAILURE() << "a NaN particle value accepted";
    } catch (const stratus::RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("is not finite"), std::string::npos) << e.what();
    }
  }
  {
    CheckpointWriter w(comm(), path, "", info);
    EXPECT_THROW(
        w.put("chain_v", std::vector<double>{1.0, std::numeric_limits<double>::infinity()}),
        stratus::RuntimeError);
  }
  MPI_Barrier(comm());
  EXPECT_FALSE(fs::exists(path + ".partial"));
  EXPECT_FALSE(fs::exists(path));
}

/// Writes a valid checkpoint at `path` (collective).
void write_valid(const std::string& path) {
  CheckpointWriter w(comm(), path, "deck", {"md", 5, 0.5, 0.1, "", "1x1x1", ""});
  fill(w, 200).commit();
}

/// Expects opening and verifying `path` to fail with a message containing `why`.
void expect_rejected(const std::string& path, const std::string& why) {
  try {
    CheckpointReader r(comm(), path);
    r.verify();
    ADD_FAILURE() << path << ": accepted, expected '" << why << "'";
  } catch (const stratus::InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find(why), std::string::npos) << m;
  }
}

TEST_F(CheckpointIo, DamageIsDetectedAndNamed) {
  const std::string flipped = file("flipped.h5"), marker = file("marker.h5"),
                    truncated = file("truncated.h5");
  const std::string manifest = file("manifest.h5");
  for (const auto& p : {flipped, marker, truncated, manifest}) write_valid(p);
  if (rank() == 0) {
    // Flip bytes in the middle of /particles/x.
    hid_t f = H5Fopen(flipped.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/particles/x", H5P_DEFAULT);
    const haddr_t offset = H5Dget_offset(d);
    const hsize_t size = H5Dget_storage_size(d);
    ASSERT_NE(offset, HADDR_UNDEF);
    H5Dclose(d);
    H5Fclose(f);
    std::fstream io(flipped, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(offset + size / 2));
    io.write("\x13\x37", 2);
    // Remove the completion marker.
    f = H5Fopen(marker.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Adelete(f, "checkpoint_complete");
    H5Fclose(f);
    fs::resize_file(truncated, fs::file_size(truncated) / 2);
    // Change one character of the manifest (a block checksum's last hex digit).
    f = H5Fopen(manifest.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    d = H5Dopen2(f, "/checkpoint/manifest", H5P_DEFAULT);
    const haddr_t at = H5Dget_offset(d);
    const hsize_t n = H5Dget_storage_size(d);
    H5Dclose(d);
    H5Fclose(f);
    std::fstream m(manifest, std::ios::in | std::ios::out | std::ios::binary);
    m.seekg(static_cast<std::streamoff>(at + n - 2));
    char c = 0;
    m.read(&c, 1);
    m.seekp(static_cast<std::streamoff>(at + n - 2));
    c = c == '0' ? '1' : '0';
    m.write(&c, 1);
  }
  MPI_Barrier(comm());
  expect_rejected(flipped, "dataset /particles/x is damaged (checksum mismatch");
  expect_rejected(marker, "no completion marker");
  expect_rejected(truncated, "truncated or damaged");
  expect_rejected(manifest, "the manifest does not match its checksum");
  expect_rejected(file("missing.h5"), "no such file");
}

TEST_F(CheckpointIo, StoreListsNewestFirstAndFindsPartials) {
  stratus::io::CheckpointStore store(dir_.string(), "run");
  if (rank() == 0) {
    for (std::int64_t s : {10, 200, 30}) std::ofstream(store.path_for(s)) << "x";
    std::ofstream(store.path_for(300) + ".partial") << "x";
    std::ofstream(file("other.step000000000400.h5")) << "x";  // another run's
    std::ofstream(file("run.step12.h5")) << "x";              // not the pattern
    const auto list = store.list();
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0].step, 200);
    EXPECT_EQ(list[2].step, 10);
    ASSERT_EQ(store.partials().size(), 1u);
    EXPECT_EQ(store.path_for(7), file("run.step000000000007.h5"));
  }
}

TEST_F(CheckpointIo, SeriesFileCutsBackToTheCheckpointStep) {
  const std::string path = file("thermo.csv");
  {
    stratus::io::SeriesFile s(comm(), path, "# units\nstep,value\n", -1);
    for (int step = 0; step <= 50; step += 10) s.row(fmt::format("{},{}", step, step * 2));
    s.sync();
  }
  if (rank() == 0) std::ofstream(path, std::ios::app) << "60,12";  // a row cut short by a crash
  MPI_Barrier(comm());
  {
    stratus::io::SeriesFile s(comm(), path, "# units\nstep,value\n", 30);
    if (rank() == 0) {
      EXPECT_EQ(s.dropped(), 3);  // 40, 50 and the partial 60
    }
    s.row("40,80");
  }
  if (rank() == 0) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "# units\nstep,value\n0,0\n10,20\n20,40\n30,60\n40,80\n");
  }
}

}  // namespace
