// H5MD trajectories: frames appended from 1, 2 or 4 ranks, with atoms scattered across ranks in
// any order (or a rank owning none), land in global-id rows; the file follows H5MD 1.1; bad
// ownership is refused on every rank before anything is written.
#include "scratch_dir.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/version.hpp"
#include "stratus/io/h5file.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/kernels/md/types.hpp"
#include "stratus/solvers/md/trajectory_frame.hpp"
#include "test_context.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <type_traits>

namespace {

namespace fs = std::filesystem;
using stratus::io::H5mdWriter;

MPI_Comm comm() { return stratus::testing::context().comm(); }
int rank() { return stratus::testing::context().rank(); }
int size() { return stratus::testing::context().size(); }

constexpr std::int64_t kAtoms = 997;  // not a multiple of 2 or 4: uneven blocks of rows
constexpr std::array<double, 3> kBox = {10.5, 11.25, 12.0};
const std::vector<std::string> kPeriodic = {"periodic", "periodic", "periodic"};
const std::string kDeck = "[md]\nsteps = 20\n# \xcf\x83 (UTF-8)\n";

// Values of atom `i` in frame `f`: distinct per atom, frame and axis, so a row or frame mix-up
// shows. Positions lie in the box.
double pos(int f, std::int64_t i, int d) {
  return std::fmod(0.125 + 0.0137 * static_cast<double>(i) + 0.29 * d + 0.07 * f, kBox[d]);
}
double vel(int f, std::int64_t i, int d) { return 0.001 * static_cast<double>(i) - d + 10.0 * f; }
int species_of(int f, std::int64_t i) { return static_cast<int>((i + f) % 4); }
int image_of(int f, std::int64_t i, int d) {
  return d == 0 ? static_cast<int>(i % 5) - 2 : d == 1 ? f - 1 : -static_cast<int>(i % 3);
}
std::int64_t step_of(int f) { return 10 * f + 5; }
double time_of(int f) { return 0.005 * static_cast<double>(step_of(f)); }

/// Which rank owns atom i: scattered, non-contiguous runs; with `leave_last_empty` the last rank
/// (when there are two or more) owns nothing.
int owner_of(std::int64_t i, bool leave_last_empty) {
  const int owners = leave_last_empty && size() > 1 ? size() - 1 : size();
  return static_cast<int>((i * 7 + i / 13) % owners);
}

/// This rank's atoms for frame `f` on the device: ids owned by this rank in a shuffled order,
/// followed by `ghosts` ghost rows holding garbage that must never reach the file.
struct Atoms {
  stratus::kernels::md::Vectors x{"x", 0};
  stratus::kernels::md::Vectors v{"v", 0};
  stratus::kernels::md::Types type{"type", 0};
  stratus::kernels::md::Ids id{"id", 0};
  stratus::kernels::md::Images image{"image", 0};
  int nlocal = 0;
};

Atoms make_atoms(int f, const std::vector<std::int64_t>& ids, int ghosts = 5) {
  Atoms a;
  a.nlocal = static_cast<int>(ids.size());
  const int n = a.nlocal + ghosts;
  a.x = decltype(a.x)("x", n);
  a.v = decltype(a.v)("v", n);
  a.type = decltype(a.type)("type", n);
  a.id = decltype(a.id)("id", n);
  a.image = decltype(a.image)("image", n);
  auto hx = Kokkos::create_mirror_view(a.x);
  auto hv = Kokkos::create_mirror_view(a.v);
  auto ht = Kokkos::create_mirror_view(a.type);
  auto hi = Kokkos::create_mirror_view(a.id);
  auto hm = Kokkos::create_mirror_view(a.image);
  for (int k = 0; k < n; ++k) {
    const bool ghost = k >= a.nlocal;
    const std::int64_t i = ghost ? k % kAtoms : ids[k];
    hi(k) = i;
    ht(k) = ghost ? 99 : species_of(f, i);
    for (int d = 0; d < 3; ++d) {
      hx(k, d) = ghost ? -1e30 : pos(f, i, d);
      hv(k, d) = ghost ? -1e30 : vel(f, i, d);
      hm(k, d) = ghost ? 12345 : image_of(f, i, d);
    }
  }
  Kokkos::deep_copy(a.x, hx);
  Kokkos::deep_copy(a.v, hv);
  Kokkos::deep_copy(a.type, ht);
  Kokkos::deep_copy(a.id, hi);
  Kokkos::deep_copy(a.image, hm);
  return a;
}

/// The ids this rank owns, in an order that differs from frame to frame.
std::vector<std::int64_t> owned_ids(int f, bool leave_last_empty) {
  std::vector<std::int64_t> ids;
  for (std::int64_t i = 0; i < kAtoms; ++i) {
    if (owner_of(i, leave_last_empty) == rank()) ids.push_back(i);
  }
  std::stable_sort(ids.begin(), ids.end(), [f](std::int64_t a, std::int64_t b) {
    return (a * 31 + f * 17) % 101 < (b * 31 + f * 17) % 101;
  });
  return ids;
}

void append_frame(H5mdWriter& writer, int f, const Atoms& a) {
  stratus::md::append_frame(writer, step_of(f), time_of(f), a.x, a.v, a.type, a.id, a.image,
                            a.nlocal);
}

// ---- Serial reading with the HDF5 C API ------------------------------------------------------

struct Closer {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Closer() {
    if (id >= 0) close(id);
  }
};

template <class T>
std::vector<T> read_all(hid_t file, const std::string& name, hid_t mem_type,
                        std::vector<hsize_t>* dims = nullptr) {
  Closer d{H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose};
  EXPECT_GE(d.id, 0) << name;
  if (d.id < 0) return {};
  Closer s{H5Dget_space(d.id), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(s.id);
  std::vector<hsize_t> shape(rank);
  H5Sget_simple_extent_dims(s.id, shape.data(), nullptr);
  std::vector<T> values(H5Sget_simple_extent_npoints(s.id));
  EXPECT_GE(H5Dread(d.id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0) << name;
  if (dims != nullptr) *dims = shape;
  return values;
}

bool has_attribute(hid_t file, const std::string& object, const char* name) {
  return H5Aexists_by_name(file, object.c_str(), name, H5P_DEFAULT) > 0;
}

std::vector<std::string> read_strings(hid_t file, const std::string& object, const char* name) {
  Closer a{H5Aopen_by_name(file, object.c_str(), name, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (a.id < 0) return {};
  Closer type{H5Aget_type(a.id), H5Tclose};
  Closer space{H5Aget_space(a.id), H5Sclose};
  if (H5Tget_class(type.id) != H5T_STRING) return {};
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.id));
  std::vector<std::string> out;
  if (H5Tis_variable_str(type.id) > 0) {
    std::vector<char*> texts(n, nullptr);
    if (H5Aread(a.id, type.id, texts.data()) < 0) return {};
    for (char* t : texts) out.emplace_back(t != nullptr ? t : "");
    H5Dvlen_reclaim(type.id, space.id, H5P_DEFAULT, texts.data());
  } else {
    const std::size_t len = H5Tget_size(type.id);
    std::vector<char> buffer(n * len);
    if (H5Aread(a.id, type.id, buffer.data()) < 0) return {};
    for (std::size_t k = 0; k < n; ++k) {
      std::string t(buffer.data() + k * len, len);
      out.push_back(t.substr(0, t.find('\0')));
    }
  }
  return out;
}

std::string read_string(hid_t file, const std::string& object, const char* name) {
  const auto all = read_strings(file, object, name);
  return all.size() == 1 ? all[0] : "<missing or not a single string>";
}

std::vector<std::int64_t> read_int_attribute(hid_t file, const std::string& object,
                                             const char* name) {
  Closer a{H5Aopen_by_name(file, object.c_str(), name, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (a.id < 0) return {};
  Closer type{H5Aget_type(a.id), H5Tclose};
  if (H5Tget_class(type.id) != H5T_INTEGER) return {};
  Closer space{H5Aget_space(a.id), H5Sclose};
  std::vector<std::int64_t> values(H5Sget_simple_extent_npoints(space.id));
  if (H5Aread(a.id, H5T_NATIVE_INT64, values.data()) < 0) return {};
  return values;
}

H5O_type_t object_type(hid_t file, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return H5O_TYPE_UNKNOWN;
  H5O_info_t info;
  if (H5Oget_info_by_name(file, name.c_str(), &info, H5P_DEFAULT) < 0) return H5O_TYPE_UNKNOWN;
  return info.type;
}

std::vector<std::string> members(hid_t file, const std::string& group) {
  std::vector<std::string> names;
  H5Literate_by_name(
      file, group.c_str(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names, H5P_DEFAULT);
  return names;
}

/// Shape, type class and (first axis) maximum size of a dataset.
struct DatasetInfo {
  bool exists = false;
  std::vector<hsize_t> dims, maxdims;
  H5T_class_t type_class = H5T_NO_CLASS;
  bool chunked = false;
};

DatasetInfo dataset_info(hid_t file, const std::string& name) {
  DatasetInfo info;
  if (object_type(file, name) != H5O_TYPE_DATASET) return info;
  Closer d{H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose};
  Closer s{H5Dget_space(d.id), H5Sclose};
  Closer t{H5Dget_type(d.id), H5Tclose};
  Closer p{H5Dget_create_plist(d.id), H5Pclose};
  const int rank = H5Sget_simple_extent_ndims(s.id);
  info.dims.resize(rank);
  info.maxdims.resize(rank);
  H5Sget_simple_extent_dims(s.id, info.dims.data(), info.maxdims.data());
  info.type_class = H5Tget_class(t.id);
  info.chunked = H5Pget_layout(p.id) == H5D_CHUNKED;
  info.exists = true;
  return info;
}

/// Every way in which the file at `path` breaks the structure that H5MD 1.1 requires of the
/// h5md metadata and of particles groups (empty when it follows it).
std::vector<std::string> h5md_violations(const std::string& path) {
  std::vector<std::string> bad;
  Closer file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) return {"cannot open " + path};
  const hid_t f = file.id;
  // h5md metadata group.
  if (object_type(f, "/h5md") != H5O_TYPE_GROUP) bad.emplace_back("no /h5md group");
  if (read_int_attribute(f, "/h5md", "version") != std::vector<std::int64_t>{1, 1}) {
    bad.emplace_back("/h5md@version is not the integer array [1, 1]");
  }
  if (object_type(f, "/h5md/author") != H5O_TYPE_GROUP ||
      read_strings(f, "/h5md/author", "name").size() != 1) {
    bad.emplace_back("no /h5md/author group with a string attribute name");
  }
  for (const char* attr : {"name", "version"}) {
    if (read_strings(f, "/h5md/creator", attr).size() != 1) {
      bad.emplace_back(fmt::format("no /h5md/creator@{} string", attr));
    }
  }
  // particles: one group per particle group, each with a box and time-dependent elements.
  if (object_type(f, "/particles") != H5O_TYPE_GROUP) {
    bad.emplace_back("no /particles group");
    return bad;
  }
  for (const auto& group_name : members(f, "/particles")) {
    const std::string g = "/particles/" + group_name;
    if (object_type(f, g) != H5O_TYPE_GROUP) {
      bad.push_back(g + " is not a group");
      continue;
    }
    const std::string box = g + "/box";
    const auto dim = read_int_attribute(f, box, "dimension");
    if (object_type(f, box) != H5O_TYPE_GROUP || dim.size() != 1 || dim[0] < 1 || dim[0] > 3) {
      bad.push_back(box + ": missing, or no integer attribute dimension in 1..3");
      continue;
    }
    const auto D = static_cast<hsize_t>(dim[0]);
    const auto boundary = read_strings(f, box, "boundary");
    if (boundary.size() != D || !std::all_of(boundary.begin(), boundary.end(), [](const auto& b) {
          return b == "periodic" || b == "none";
        })) {
      bad.push_back(box + "@boundary is not D strings \"periodic\" or \"none\"");
    }
    std::int64_t natoms = -1;
    const std::function<void(const std::string&, int)> check_element = [&](const std::string& e,
                                                                           int per_atom_rank) {
      // per_atom_rank: -1 box edges, 0 per-atom scalar, 1 per-atom vector, 2 either (an
      // element H5MD does not name: a scalar or any number of values per particle).
      if (object_type(f, e) == H5O_TYPE_DATASET) return;  // time-independent element
      const auto value = dataset_info(f, e + "/value");
      const auto step = dataset_info(f, e + "/step");
      const auto time = dataset_info(f, e + "/time");
      if (!value.exists || !step.exists) {
        bad.push_back(e + ": time-dependent element without value and step");
        return;
      }
      if (step.type_class != H5T_INTEGER) bad.push_back(e + "/step is not an integer");
      const bool step_series = step.dims.size() == 1;
      if (step_series && step.dims[0] != value.dims[0]) {
        bad.push_back(e + "/step and value differ in length");
      }
      if (time.exists && (time.dims != step.dims || time.type_class == H5T_STRING)) {
        bad.push_back(e + "/time differs from step in shape or is not numeric");
      }
      if (!value.chunked || value.maxdims.empty() || value.maxdims[0] != H5S_UNLIMITED) {
        bad.push_back(e + "/value is not chunked and extendable along its first axis");
      }
      if (step_series && step.dims[0] > 1) {
        const auto steps = read_all<std::int64_t>(f, e + "/step", H5T_NATIVE_INT64);
        if (!std::is_sorted(steps.begin(), steps.end()) ||
            std::adjacent_find(steps.begin(), steps.end()) != steps.end()) {
          bad.push_back(e + "/step is not strictly increasing");
        }
      }
      if (per_atom_rank == -1) {
        const bool vector = value.dims.size() == 2 && value.dims[1] == D;
        const bool matrix = value.dims.size() == 3 && value.dims[1] == D && value.dims[2] == D;
        if (!vector && !matrix) bad.push_back(e + "/value is not (frames, D) or (frames, D, D)");
        return;
      }
      const bool any_width = per_atom_rank == 2 && value.dims.size() == 3;
      const std::size_t want_rank =
          per_atom_rank == 0 || (per_atom_rank == 2 && !any_width) ? 2 : 3;
      if (value.dims.size() != want_rank || (want_rank == 3 && !any_width && value.dims[2] != D)) {
        bad.push_back(e + "/value has the wrong rank or last dimension");
        return;
      }
      if (natoms < 0) natoms = static_cast<std::int64_t>(value.dims[1]);
      if (static_cast<std::int64_t>(value.dims[1]) != natoms) {
        bad.push_back(e + "/value has a different number of particles");
      }
    };
    if (object_type(f, box + "/edges") != H5O_TYPE_UNKNOWN) {
      const auto edges = dataset_info(f, box + "/edges");
      if (edges.exists) {
        if (!(edges.dims == std::vector<hsize_t>{D} || edges.dims == std::vector<hsize_t>{D, D})) {
          bad.push_back(box + "/edges is not a D vector or D x D matrix");
        }
      } else {
        check_element(box + "/edges", -1);
      }
    }
    const std::map<std::string, int> known = {{"position", 1}, {"velocity", 1}, {"force", 1},
                                              {"image", 1},    {"species", 0},  {"id", 0},
                                              {"mass", 0},     {"charge", 0}};
    for (const auto& name : members(f, g)) {
      if (name == "box") continue;
      const auto it = known.find(name);
      check_element(g + "/" + name, it == known.end() ? 2 : it->second);
    }
    const std::map<std::string, H5T_class_t> classes = {{"position", H5T_FLOAT},
                                                        {"image", H5T_INTEGER},
                                                        {"species", H5T_INTEGER},
                                                        {"id", H5T_INTEGER}};
    for (const auto& [name, cls] : classes) {
      const auto value = dataset_info(f, g + "/" + name + "/value");
      if (value.exists && value.type_class != cls) bad.push_back(g + "/" + name + ": wrong type");
    }
  }
  return bad;
}

/// Checks every value of every frame of `path` (frames 0 .. frames - 1 of the functions above).
void expect_trajectory(const std::string& path, int frames) {
  EXPECT_EQ(h5md_violations(path), std::vector<std::string>{});
  Closer file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  ASSERT_GE(file.id, 0) << path;
  const hid_t f = file.id;
  const std::string g = "/particles/all";
  const auto F = static_cast<hsize_t>(frames);
  const auto N = static_cast<hsize_t>(kAtoms);

  std::vector<hsize_t> dims;
  const auto x = read_all<double>(f, g + "/position/value", H5T_NATIVE_DOUBLE, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, N, 3}));
  const auto v = read_all<double>(f, g + "/velocity/value", H5T_NATIVE_DOUBLE, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, N, 3}));
  const auto s = read_all<std::int32_t>(f, g + "/species/value", H5T_NATIVE_INT32, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, N}));
  const auto ids = read_all<std::int64_t>(f, g + "/id/value", H5T_NATIVE_INT64, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, N}));
  const auto im = read_all<std::int32_t>(f, g + "/image/value", H5T_NATIVE_INT32, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, N, 3}));
  const auto edges = read_all<double>(f, g + "/box/edges/value", H5T_NATIVE_DOUBLE, &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{F, 3, 3}));

  std::size_t wrong = 0;
  std::string first;
  const auto expect = [&](bool ok, int fr, std::int64_t i, const char* what) {
    if (!ok && wrong++ == 0) first = fmt::format("{} of id {} in frame {}", what, i, fr);
  };
  for (int fr = 0; fr < frames; ++fr) {
    for (std::int64_t i = 0; i < kAtoms; ++i) {
      const std::size_t row = static_cast<std::size_t>(fr) * N + static_cast<std::size_t>(i);
      expect(ids[row] == i, fr, i, "id");
      expect(s[row] == species_of(fr, i), fr, i, "species");
      for (int d = 0; d < 3; ++d) {
        expect(x[3 * row + d] == pos(fr, i, d), fr, i, "position");
        expect(v[3 * row + d] == vel(fr, i, d), fr, i, "velocity");
        expect(im[3 * row + d] == image_of(fr, i, d), fr, i, "image");
      }
    }
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        EXPECT_EQ(edges[9 * fr + 3 * a + b], a == b ? kBox[a] : 0.0) << fr << " " << a << b;
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << wrong << " wrong values, first: " << first;

  // One step and one time series, shared by every element.
  for (const char* e : {"position", "velocity", "species", "id", "image", "box/edges"}) {
    const auto steps = read_all<std::int64_t>(f, g + "/" + e + "/step", H5T_NATIVE_INT64, &dims);
    ASSERT_EQ(dims, std::vector<hsize_t>{F}) << e;
    const auto times = read_all<double>(f, g + "/" + e + "/time", H5T_NATIVE_DOUBLE, &dims);
    ASSERT_EQ(dims, std::vector<hsize_t>{F}) << e;
    for (int fr = 0; fr < frames; ++fr) {
      EXPECT_EQ(steps[fr], step_of(fr)) << e << " frame " << fr;
      EXPECT_EQ(times[fr], time_of(fr)) << e << " frame " << fr;
    }
  }

  // Metadata.
  EXPECT_EQ(read_int_attribute(f, "/h5md", "version"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(read_string(f, "/h5md/author", "name"), "Stratus user");
  EXPECT_EQ(read_string(f, "/h5md/creator", "name"), "Stratus");
  EXPECT_EQ(read_string(f, "/h5md/creator", "version"), stratus::stratus_version());
  EXPECT_EQ(read_int_attribute(f, g + "/box", "dimension"), std::vector<std::int64_t>{3});
  EXPECT_EQ(read_strings(f, g + "/box", "boundary"), kPeriodic);
  // Reduced LJ units are not H5MD units: recorded as reduced_unit, no unit attribute.
  EXPECT_EQ(read_string(f, g + "/position/value", "reduced_unit"), "sigma");
  EXPECT_EQ(read_string(f, g + "/box/edges/value", "reduced_unit"), "sigma");
  EXPECT_EQ(read_string(f, g + "/velocity/value", "reduced_unit"), "sigma tau-1");
  EXPECT_EQ(read_string(f, g + "/position/time", "reduced_unit"), "tau");
  EXPECT_FALSE(has_attribute(f, g + "/position/value", "unit"));
  EXPECT_FALSE(has_attribute(f, g + "/position/time", "unit"));
  EXPECT_EQ(object_type(f, "/h5md/modules/units"), H5O_TYPE_UNKNOWN);
  EXPECT_TRUE(has_attribute(f, g + "/species/value", "description"));
  EXPECT_EQ(read_string(f, "/", "stratus_format"), "h5md");
  EXPECT_EQ(read_int_attribute(f, "/", "mpi_ranks"), std::vector<std::int64_t>{size()});
}

template <class E, class Body>
void expect_error(Body&& body, const std::string& needle) {
  try {
    body();
    ADD_FAILURE() << "no exception thrown; expected one containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

class H5md : public stratus::testing::ScratchDirTest {
 protected:
  H5md() : ScratchDirTest("h5md") {}

  /// Writes three frames with the given ownership and checks the file on rank 0.
  void write_and_check(const std::string& path, bool leave_last_empty) {
    {
      H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "sigma", "tau", kPeriodic);
      for (int f = 0; f < 3; ++f) {
        append_frame(writer, f, make_atoms(f, owned_ids(f, leave_last_empty)));
        EXPECT_EQ(writer.frames(), f + 1);
      }
      writer.close();
    }
    MPI_Barrier(comm());
    if (rank() == 0) {
      expect_trajectory(path, 3);
      EXPECT_EQ(stratus::io::read_deck_text(path), kDeck);
    }
  }
};

TEST_F(H5md, ScatteredAtomsLandInIdRows) {
  // At 2 ranks this file is also left behind for check_h5md.py (the python reader test).
  std::string path = file("traj.h5");
#ifdef STRATUS_H5MD_SAMPLE
  if (size() == 2) path = STRATUS_H5MD_SAMPLE;
#endif
  write_and_check(path, false);
}

TEST_F(H5md, RankOwningNoAtomsStillTakesPart) { write_and_check(file("empty.h5"), true); }

TEST_F(H5md, FramesAreReadableBeforeClose) {
  const std::string path = file("open.h5");
  H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "sigma", "tau", kPeriodic);
  append_frame(writer, 0, make_atoms(0, owned_ids(0, false)));
  MPI_Barrier(comm());
  if (rank() == 0) expect_trajectory(path, 1);  // a run killed now keeps this frame
  MPI_Barrier(comm());
  append_frame(writer, 1, make_atoms(1, owned_ids(1, false)));
  writer.close();
  MPI_Barrier(comm());
  if (rank() == 0) expect_trajectory(path, 2);
}

TEST_F(H5md, BadOwnershipIsRefusedOnEveryRankBeforeWriting) {
  const std::string path = file("bad.h5");
  H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "sigma", "tau", kPeriodic);
  auto ids = owned_ids(0, false);
  // Rank 0 also claims the last id (owned twice at 1 rank too: it appears twice in its list).
  auto dup = ids;
  if (rank() == 0) dup.push_back(kAtoms - 1);
  expect_error<stratus::RuntimeError>([&] { append_frame(writer, 0, make_atoms(0, dup)); },
                                      "1 id(s) owned twice (first: 996)");
  // Id 0 dropped by its owner: missing everywhere.
  auto missing = ids;
  missing.erase(std::remove(missing.begin(), missing.end(), 0), missing.end());
  expect_error<stratus::RuntimeError>([&] { append_frame(writer, 0, make_atoms(0, missing)); },
                                      "1 id(s) owned by no rank (first: 0)");
  auto outside = ids;
  if (rank() == size() - 1) outside.push_back(kAtoms + 3);
  expect_error<stratus::RuntimeError>([&] { append_frame(writer, 0, make_atoms(0, outside)); },
                                      "1 atom(s) with an id outside [0, natoms) (first: 1000)");
  Atoms a = make_atoms(0, ids, 0);
  expect_error<stratus::RuntimeError>(
      [&] {
        stratus::md::append_frame(writer, 0, 0.0, a.x, a.v, a.type, a.id, a.image,
                                  rank() == 0 ? a.nlocal + 1 : 0);
      },
      "nlocal outside");
  EXPECT_EQ(writer.frames(), 0);
  // Nothing was written, and the writer still works.
  append_frame(writer, 0, make_atoms(0, ids));
  writer.close();
  MPI_Barrier(comm());
  if (rank() == 0) expect_trajectory(path, 1);
}

TEST_F(H5md, ExtraElementsLandInIdRows) {
  // A float64 element of one component and an int64 one of two, next to the built-in ones,
  // from scattered owners (the last rank owning none), in two frames.
  const std::string path = file("extras.h5");
  const std::vector<stratus::io::H5mdElement> extras = {{"charge", 1, false},
                                                        {"partners", 2, true}};
  const auto charge = [](int f, std::int64_t i) { return 0.5 * static_cast<double>(i % 9) - f; };
  const auto partner = [](int f, std::int64_t i, int c) { return 3 * i + c + 1000 * f; };
  {
    H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "sigma", "tau", kPeriodic, "A. Tester",
                      extras);
    for (int f = 0; f < 2; ++f) {
      const auto ids = owned_ids(f, true);
      const Atoms a = make_atoms(f, ids, 0);
      const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.x);
      const auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.v);
      const auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.type);
      const auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.image);
      std::vector<double> q;
      std::vector<std::int64_t> p;
      for (const auto i : ids) {
        q.push_back(charge(f, i));
        p.push_back(partner(f, i, 0));
        p.push_back(partner(f, i, 1));
      }
      const std::vector<stratus::GlobalId> gid(ids.begin(), ids.end());
      const std::size_t n = ids.size();
      stratus::io::H5mdRows rows{{hx.data(), 3 * n}, {hv.data(), 3 * n}, {ht.data(), n}, gid,
                                 {hm.data(), 3 * n}, {{q, {}}, {{}, p}}};
      writer.append(step_of(f), time_of(f), rows, a.nlocal);
      if (f == 0) {
        // A non-finite extra real is refused like a non-finite position; one extra too few too.
        auto bad = q;
        if (!bad.empty() && rank() == 0) bad.back() = std::nan("");
        auto bad_rows = rows;
        bad_rows.extras[0].reals = bad;
        if (rank() == 0)
          expect_error<stratus::RuntimeError>([&] { writer.append(0, 0.0, bad_rows, a.nlocal); },
                                              "non-finite position, velocity or other value");
        else
          EXPECT_THROW(writer.append(0, 0.0, bad_rows, a.nlocal), stratus::RuntimeError);
        bad_rows.extras.pop_back();
        expect_error<stratus::RuntimeError>([&] { writer.append(0, 0.0, bad_rows, a.nlocal); },
                                            "1 extra column(s) given for the file's 2");
        EXPECT_EQ(writer.frames(), 1);
      }
    }
    writer.close();
  }
  MPI_Barrier(comm());
  if (rank() == 0) {
    EXPECT_EQ(h5md_violations(path), std::vector<std::string>{});
    Closer f{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
    std::vector<hsize_t> dims;
    const auto q = read_all<double>(f.id, "/particles/all/charge/value", H5T_NATIVE_DOUBLE, &dims);
    EXPECT_EQ(dims, (std::vector<hsize_t>{2, static_cast<hsize_t>(kAtoms)}));
    const auto p =
        read_all<std::int64_t>(f.id, "/particles/all/partners/value", H5T_NATIVE_INT64, &dims);
    EXPECT_EQ(dims, (std::vector<hsize_t>{2, static_cast<hsize_t>(kAtoms), 2}));
    const auto steps =
        read_all<std::int64_t>(f.id, "/particles/all/partners/step", H5T_NATIVE_INT64);
    EXPECT_EQ(steps, (std::vector<std::int64_t>{step_of(0), step_of(1)}));
    int bad = 0;
    for (int fr = 0; fr < 2 && q.size() == 2 * kAtoms && p.size() == 4 * kAtoms; ++fr)
      for (std::int64_t i = 0; i < kAtoms; ++i) {
        const auto row = static_cast<std::size_t>(fr * kAtoms + i);
        if (q[row] != charge(fr, i) || p[2 * row] != partner(fr, i, 0) ||
            p[2 * row + 1] != partner(fr, i, 1))
          ++bad;
      }
    EXPECT_EQ(bad, 0);
  }
  // Names the file cannot hold, or that would shadow a built-in element.
  const auto refused = [&](stratus::io::H5mdElement e, const std::string& why) {
    expect_error<stratus::RuntimeError>(
        [&] {
          H5mdWriter w(comm(), file("bad-extra.h5"), kDeck, 10, kBox, "sigma", "tau", kPeriodic,
                       "A. Tester", {{"charge", 1, false}, e});
        },
        why);
  };
  refused({"species", 1, true}, "\"species\" is the name of a built-in H5MD element");
  refused({"a/b", 1, false}, "not a plain HDF5 name");
  refused({"", 1, false}, "not a plain HDF5 name");
  refused({"charge", 1, false}, "\"charge\" is given twice");
  refused({"dipole", 0, false}, "has 0 components");
}

TEST_F(H5md, MisuseThrowsRuntimeError) {
  const std::string path = file("misuse.h5");
  expect_error<stratus::RuntimeError>(
      [&] { H5mdWriter w(comm(), path, kDeck, 0, kBox, "sigma", "tau", kPeriodic); },
      "at least one atom");
  expect_error<stratus::RuntimeError>(
      [&] {
        H5mdWriter w(comm(), path, kDeck, 10, {1.0, -1.0, 1.0}, "sigma", "tau", kPeriodic);
      },
      "box edge 1");
  expect_error<stratus::RuntimeError>(
      [&] {
        H5mdWriter w(comm(), path, kDeck, 10, kBox, "sigma", "tau", {"periodic", "wall", "none"});
      },
      "boundary");
  expect_error<stratus::RuntimeError>(
      [&] {
        H5mdWriter w(comm(), file("no/such/dir.h5"), kDeck, 10, kBox, "sigma", "tau", kPeriodic);
      },
      "cannot create the HDF5 file");
  H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "sigma", "tau", kPeriodic, "A. Tester");
  writer.close();
  writer.close();  // a second close does nothing
  Atoms a = make_atoms(0, owned_ids(0, false));
  expect_error<stratus::RuntimeError>([&] { append_frame(writer, 0, a); }, "after close()");
  MPI_Barrier(comm());
  if (rank() == 0) {
    EXPECT_EQ(h5md_violations(path), std::vector<std::string>{});
    Closer f{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
    EXPECT_EQ(read_string(f.id, "/h5md/author", "name"), "A. Tester");
    std::vector<hsize_t> dims;
    read_all<double>(f.id, "/particles/all/position/value", H5T_NATIVE_DOUBLE, &dims);
    EXPECT_EQ(dims, (std::vector<hsize_t>{0, static_cast<hsize_t>(kAtoms), 3}));
  }
}

TEST_F(H5md, PhysicalUnitsFollowTheUnitsModule) {
  const std::string path = file("nm.h5");
  {
    H5mdWriter writer(comm(), path, kDeck, kAtoms, kBox, "nm", "ps", {"periodic", "none", "none"});
    append_frame(writer, 0, make_atoms(0, owned_ids(0, false)));
  }
  MPI_Barrier(comm());
  if (rank() != 0) return;
  EXPECT_EQ(h5md_violations(path), std::vector<std::string>{});
  Closer file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  const hid_t f = file.id;
  const std::string g = "/particles/all";
  EXPECT_EQ(read_int_attribute(f, "/h5md/modules/units", "version"),
            (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(read_string(f, "/h5md/modules/units", "system"), "SI");
  EXPECT_EQ(read_string(f, g + "/position/value", "unit"), "nm");
  EXPECT_EQ(read_string(f, g + "/box/edges/value", "unit"), "nm");
  EXPECT_EQ(read_string(f, g + "/velocity/value", "unit"), "nm ps-1");
  EXPECT_EQ(read_string(f, g + "/velocity/time", "unit"), "ps");
  EXPECT_FALSE(has_attribute(f, g + "/position/value", "reduced_unit"));
  EXPECT_EQ(read_strings(f, g + "/box", "boundary"),
            (std::vector<std::string>{"periodic", "none", "none"}));
}

TEST_F(H5md, ValidatorCatchesBrokenFiles) {
  // The structure check must be able to fail: a file without the h5md metadata and with a
  // malformed element is reported.
  if (rank() != 0) return;
  const std::string path = file("broken.h5");
  { Closer f{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose}; }
  const auto bad = h5md_violations(path);
  EXPECT_GE(bad.size(), 3u);
  const auto has = [&](const std::string& needle) {
    return std::any_of(bad.begin(), bad.end(),
                       [&](const auto& b) { return b.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has("no /h5md group"));
  EXPECT_TRUE(has("version"));

  const std::string path2 = file("broken2.h5");
  {
    Closer f{H5Fcreate(path2.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    Closer lcpl{H5Pcreate(H5P_LINK_CREATE), H5Pclose};
    H5Pset_create_intermediate_group(lcpl.id, 1);
    Closer g{H5Gcreate2(f.id, "/particles/all/position", lcpl.id, H5P_DEFAULT, H5P_DEFAULT),
             H5Gclose};
    Closer b{H5Gcreate2(f.id, "/particles/all/box", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             H5Gclose};
  }
  const auto bad2 = h5md_violations(path2);
  const auto has2 = [&](const std::string& needle) {
    return std::any_of(bad2.begin(), bad2.end(),
                       [&](const auto& b) { return b.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has2("/particles/all/box: missing, or no integer attribute dimension"));
}

}  // namespace
