// Stratus HDF5 files: collective field writes from any rank count give the same global dataset,
// the common metadata and the deck round-trip, and `describe_file` reports and rejects files.
#include "scratch_dir.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/field_io.hpp"
#include "stratus/core/version.hpp"
#include "stratus/io/h5file.hpp"
#include "test_context.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

namespace {

namespace fs = std::filesystem;
using stratus::Field3D;
using stratus::GridBlock;
using stratus::io::H5Writer;
using Cells = std::array<std::int64_t, 3>;

MPI_Comm comm() { return stratus::testing::context().comm(); }
int rank() { return stratus::testing::context().rank(); }
int size() { return stratus::testing::context().size(); }

/// Value of global cell (i, j, k): distinct for every cell and exact in double.
double f(std::int64_t i, std::int64_t j, std::int64_t k) {
  return 10000.0 * static_cast<double>(i) + 100.0 * static_cast<double>(j) +
         static_cast<double>(k) + 0.25;
}
/// Value of ghost cells: must never reach the file.
constexpr double kGhostValue = -1.0e30;

/// Block `index` of `parts` when `cells` are split along `axis` only (first blocks one larger).
GridBlock split_along(const Cells& cells, int axis, int parts, int index) {
  GridBlock block{{0, 0, 0}, cells};
  const std::int64_t base = cells[axis] / parts;
  const std::int64_t extra = cells[axis] % parts;
  block.begin[axis] = index * base + std::min<std::int64_t>(index, extra);
  block.extent[axis] = base + (index < extra ? 1 : 0);
  return block;
}

/// A ghosted device field whose interior holds f(global index) and whose ghosts hold kGhostValue.
Field3D make_field(const GridBlock& block, int ghost) {
  Field3D field("field", block.extent[0] + 2 * ghost, block.extent[1] + 2 * ghost,
                block.extent[2] + 2 * ghost);
  auto host = Kokkos::create_mirror_view(field);
  for (std::size_t i = 0; i < host.extent(0); ++i) {
    for (std::size_t j = 0; j < host.extent(1); ++j) {
      for (std::size_t k = 0; k < host.extent(2); ++k) {
        const std::array<std::int64_t, 3> local = {static_cast<std::int64_t>(i) - ghost,
                                                   static_cast<std::int64_t>(j) - ghost,
                                                   static_cast<std::int64_t>(k) - ghost};
        bool interior = true;
        for (int a = 0; a < 3; ++a) interior &= local[a] >= 0 && local[a] < block.extent[a];
        host(i, j, k) = interior ? f(block.begin[0] + local[0], block.begin[1] + local[1],
                                     block.begin[2] + local[2])
                                 : kGhostValue;
      }
    }
  }
  Kokkos::deep_copy(field, host);
  return field;
}

/// Checks every value of `dataset` in `path` against f; reports the first mismatch only.
void expect_matches_f(const std::string& path, const std::string& dataset, const Cells& cells) {
  Cells dims{};
  const auto values = stratus::io::read_dataset_3d(path, dataset, dims);
  ASSERT_EQ(dims, cells) << dataset;
  ASSERT_EQ(values.size(), static_cast<std::size_t>(cells[0] * cells[1] * cells[2]));
  std::size_t wrong = 0;
  std::string first;
  std::size_t n = 0;
  for (std::int64_t i = 0; i < cells[0]; ++i) {
    for (std::int64_t j = 0; j < cells[1]; ++j) {
      for (std::int64_t k = 0; k < cells[2]; ++k, ++n) {
        if (values[n] != f(i, j, k)) {
          if (wrong++ == 0) {
            first = fmt::format("({}, {}, {}): {} instead of {}", i, j, k, values[n], f(i, j, k));
          }
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << dataset << ": " << wrong << " wrong values, first at " << first;
}

/// Expects `body` to throw exactly an E whose message contains `needle`.
template <class E, class Body>
void expect_error(Body&& body, const std::string& needle) {
  try {
    body();
    ADD_FAILURE() << "no exception thrown; expected one containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

/// True if `text` lists `object` (padded to a column) followed by `description` on one line.
bool has_entry(const std::string& text, const std::string& object, const std::string& description) {
  const auto escape = [](const std::string& raw) {
    return std::regex_replace(raw, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
  };
  return std::regex_search(text,
                           std::regex("\n  " + escape(object) + " +" + escape(description) + "\n"));
}

std::string read_string_attribute(hid_t object, const char* name) {
  hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  EXPECT_GE(attr, 0) << name;
  hid_t type = H5Aget_type(attr);
  EXPECT_EQ(H5Tget_class(type), H5T_STRING) << name;
  EXPECT_GT(H5Tis_variable_str(type), 0) << name;
  EXPECT_EQ(H5Tget_cset(type), H5T_CSET_UTF8) << name;
  char* text = nullptr;
  EXPECT_GE(H5Aread(attr, type, &text), 0) << name;
  std::string value = text != nullptr ? text : "";
  H5free_memory(text);
  H5Tclose(type);
  H5Aclose(attr);
  return value;
}

std::int64_t read_int_attribute(hid_t object, const char* name) {
  hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  EXPECT_GE(attr, 0) << name;
  std::int64_t value = -1;
  EXPECT_GE(H5Aread(attr, H5T_NATIVE_INT64, &value), 0) << name;
  H5Aclose(attr);
  return value;
}

const std::string kDeck =
    "# resolved deck \xcf\x81 (UTF-8)\n[grid]\ncells = [7, 5, 3]\nname = \"a \\\"quoted\\\" "
    "name\"\n";

class H5File : public stratus::testing::ScratchDirTest {
 protected:
  H5File() : ScratchDirTest("h5file") {}
};

TEST_F(H5File, FieldWrittenFromEveryRankHoldsGlobalValues) {
  const Cells cells = {7, 6, 5};
  const int ghost = 2;
  const std::string path = file("field.h5");
  const char* names[3] = {"/fields/split_x", "/fields/split_y", "/fields/split_z"};
  {
    H5Writer writer(comm(), path, "field", kDeck);
    for (int axis = 0; axis < 3; ++axis) {
      const GridBlock block = split_along(cells, axis, size(), rank());
      writer.write_field(names[axis], stratus::grid_array(make_field(block, ghost)), ghost, block,
                         cells);
    }
    writer.close();
  }
  // The same grid written by one rank alone: the reference every rank count must reproduce.
  const std::string reference = file("reference.h5");
  if (rank() == 0) {
    const GridBlock whole{{0, 0, 0}, cells};
    H5Writer writer(MPI_COMM_SELF, reference, "field", kDeck);
    writer.write_field("/fields/whole", stratus::grid_array(make_field(whole, 1)), 1, whole, cells);
  }
  MPI_Barrier(comm());
  if (rank() != 0) return;

  Cells dims{};
  const auto expected = stratus::io::read_dataset_3d(reference, "/fields/whole", dims);
  for (const char* name : names) {
    expect_matches_f(path, name, cells);
    EXPECT_EQ(stratus::io::read_dataset_3d(path, name, dims), expected) << name;
  }
  expect_matches_f(reference, "/fields/whole", cells);
}

TEST_F(H5File, RankWithEmptyBlockStillTakesPart) {
  const Cells cells = {5, 4, 3};
  const int ghost = 1;
  // Every rank but the last owns a slab along x; the last owns nothing (when there are two+).
  const int owners = std::max(1, size() - 1);
  const GridBlock block = rank() < owners ? split_along(cells, 0, owners, rank())
                                          : GridBlock{{0, 0, 0}, {0, cells[1], cells[2]}};
  const std::string path = file("empty.h5");
  {
    H5Writer writer(comm(), path, "field", kDeck);
    writer.write_field("/fields/f", stratus::grid_array(make_field(block, ghost)), ghost, block,
                       cells);
  }
  MPI_Barrier(comm());
  if (rank() == 0) expect_matches_f(path, "/fields/f", cells);
}

TEST_F(H5File, RootAttributesAndDeckRoundTrip) {
  const std::string path = file("meta.h5");
  { H5Writer writer(comm(), path, "field", kDeck); }
  MPI_Barrier(comm());
  if (rank() != 0) return;

  hid_t f5 = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f5, 0);
  EXPECT_EQ(read_string_attribute(f5, "stratus_format"), "field");
  EXPECT_EQ(read_int_attribute(f5, "stratus_format_version"), stratus::io::kFileFormatVersion);
  EXPECT_EQ(read_string_attribute(f5, "stratus_version"), stratus::stratus_version());
  EXPECT_EQ(read_string_attribute(f5, "stratus_git_revision"), stratus::git_revision());
  EXPECT_TRUE(std::regex_match(read_string_attribute(f5, "created_utc"),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_EQ(read_int_attribute(f5, "mpi_ranks"), size());
  H5Fclose(f5);

  EXPECT_EQ(stratus::io::read_deck_text(path), kDeck);
}

TEST_F(H5File, DescribeFileListsMetadataDatasetsAndAttributes) {
  const std::string path = file("described.h5");
  const Cells cells = {7, 5, 3};
  const Cells small = {2, 2, 2};
  {
    H5Writer writer(comm(), path, "field", kDeck);
    const GridBlock block = split_along(cells, 0, size(), rank());
    writer.write_field("/fields/rho", stratus::grid_array(make_field(block, 0)), 0, block, cells);
    const GridBlock small_block = rank() == 0 ? GridBlock{{0, 0, 0}, small} : GridBlock{};
    writer.write_field("/fields/a_first", stratus::grid_array(make_field(small_block, 1)), 1,
                       small_block, small);
    writer.create_group("/fields/empty/nested");
    writer.write_attribute("/", "title", std::string("demo run"));
    writer.write_attribute("/fields", "time", 0.5);
    writer.write_attribute("/fields", "step", std::int64_t{42});
    writer.write_attribute("/fields/rho", "unit", std::string("kg/m^3"));
    writer.write_attribute("/fields/rho", "origin", std::vector<double>{0.0, 0.5, 1.0});
    writer.write_attribute("/fields/rho", "cells", std::vector<std::int64_t>{7, 5, 3});
    writer.write_attribute("/fields/rho", "unit", std::string("kg m^-3"));  // replaces
  }
  MPI_Barrier(comm());
  if (rank() != 0) return;

  const std::string text = stratus::io::describe_file(path, false);
  const std::string expected[] = {
      "Format:         field\n",
      fmt::format("Format version: {}\n", stratus::io::kFileFormatVersion),
      fmt::format("Written by:     Stratus {} (git {})\n", stratus::stratus_version(),
                  stratus::git_revision()),
      "Created (UTC):  20",
      fmt::format("MPI ranks:      {}\n", size()),
      "title = \"demo run\"\n",
      "time = 0.5\n",
      "step = 42\n",
      "unit = \"kg m^-3\"\n",
      "origin = [0, 0.5, 1]\n",
      "cells = [7, 5, 3]\n"};
  for (const auto& piece : expected) {
    EXPECT_NE(text.find(piece), std::string::npos) << "missing '" << piece << "' in\n" << text;
  }
  const std::pair<std::string, std::string> entries[] = {
      {"/", "group"},
      {"/fields", "group"},
      {"/fields/a_first", "dataset (2, 2, 2) float64"},
      {"/fields/empty", "group"},
      {"/fields/empty/nested", "group"},
      {"/fields/rho", "dataset (7, 5, 3) float64"},
      {"/stratus", "group"},
      {"/stratus/deck", "dataset scalar string"}};
  for (const auto& [object, description] : entries) {
    EXPECT_TRUE(has_entry(text, object, description))
        << "no entry '" << object << "  " << description << "' in\n"
        << text;
  }
  EXPECT_EQ(text.find("kg/m^3"), std::string::npos) << text;
  EXPECT_EQ(text.find("mpi_ranks ="), std::string::npos) << "common attributes listed twice\n"
                                                         << text;
  // Sorted by name, parents before children.
  const auto a = text.find("/fields/a_first");
  const auto e = text.find("/fields/empty ");
  const auto r = text.find("/fields/rho ");
  const auto s = text.find("/stratus ");
  EXPECT_TRUE(a < e && e < r && r < s) << text;
  EXPECT_EQ(text.find("[grid]"), std::string::npos) << text;

  const std::string with_deck = stratus::io::describe_file(path, true);
  EXPECT_NE(with_deck.find("Resolved deck (/stratus/deck):\n" + kDeck), std::string::npos)
      << with_deck;
}

TEST_F(H5File, ReadersRejectForeignAndMissingFiles) {
  if (rank() != 0) return;
  using stratus::InputError;
  using stratus::io::describe_file;

  const std::string missing = file("missing.h5");
  expect_error<InputError>([&] { describe_file(missing, false); }, missing + ": no such file");

  const std::string text_file = file("notes.txt");
  std::ofstream(text_file) << "not HDF5\n";
  expect_error<InputError>([&] { describe_file(text_file, false); },
                           text_file + ": not an HDF5 file");

  const std::string plain = file("plain.h5");
  hid_t f5 = H5Fcreate(plain.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f5, 0);
  H5Fclose(f5);
  expect_error<InputError>([&] { describe_file(plain, false); },
                           plain + ": not a Stratus file (no 'stratus_format' attribute)");
  expect_error<InputError>([&] { stratus::io::read_deck_text(plain); }, "/stratus/deck");

  const std::string stratus_file = file("stratus.h5");
  { H5Writer writer(MPI_COMM_SELF, stratus_file, "field", kDeck); }
  Cells dims{};
  expect_error<InputError>(
      [&] { stratus::io::read_dataset_3d(stratus_file, "/fields/nothing", dims); },
      "no dataset '/fields/nothing'");
  expect_error<InputError>([&] { stratus::io::read_dataset_3d(missing, "/x", dims); },
                           "no such file");
}

TEST_F(H5File, CreatingInMissingDirectoryThrowsRuntimeError) {
  const std::string path = (dir_ / "no" / "such" / "dir" / "out.h5").string();
  expect_error<stratus::RuntimeError>([&] { H5Writer writer(comm(), path, "field", kDeck); },
                                      path + ": cannot create the HDF5 file");
  MPI_Barrier(comm());
  if (rank() == 0) {
    EXPECT_FALSE(fs::exists(dir_ / "no"));
  }
}

TEST_F(H5File, MisuseThrowsRuntimeError) {
  const std::string path = file("misuse.h5");
  H5Writer writer(comm(), path, "field", kDeck);
  const Cells cells = {4, 4, 4};
  const GridBlock block = split_along(cells, 0, size(), rank());
  // Field allocated with one ghost layer but written as if it had two.
  expect_error<stratus::RuntimeError>(
      [&] { writer.write_field("/f", stratus::grid_array(make_field(block, 1)), 2, block, cells); },
      "write_field");
  expect_error<stratus::RuntimeError>([&] { writer.write_attribute("/no/such/object", "x", 1.0); },
                                      "/no/such/object");
  writer.close();
  writer.close();  // a second close does nothing
  expect_error<stratus::RuntimeError>([&] { writer.create_group("/late"); }, "after close()");
  expect_error<stratus::RuntimeError>([&] { writer.write_attribute("/", "late", 1.0); },
                                      "after close()");
}

}  // namespace
