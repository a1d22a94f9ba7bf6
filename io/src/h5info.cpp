// Serial reading of Stratus HDF5 files: `stratus info` descriptions and small readers for tests
// and tools. Every failure here is about the file the user pointed at, hence InputError.
#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/h5file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <utility>

namespace stratus::io {
namespace {

using detail::Handle;
using detail::QuietHdf5Errors;

/// Root attributes every Stratus file carries; `describe_file` prints them in its header.
constexpr std::string_view kCommonAttributes[] = {"stratus_format",  "stratus_format_version",
                                                  "stratus_version", "stratus_git_revision",
                                                  "created_utc",     "mpi_ranks"};

/// Numeric attributes with at most this many values are printed inline.
constexpr hssize_t kInlineValues = 16;
/// Longer strings are cut when printed inline.
constexpr std::size_t kInlineChars = 72;

/// Returns `result` unless negative (an HDF5 failure), then throws InputError.
template <class T>
T checked(T result, const std::string& path, std::string_view what) {
  if (result < 0) throw InputError(fmt::format("{}: cannot read {}", path, what));
  return result;
}

/// Opens `path` read-only with the default (serial) driver, after telling apart a missing
/// file, something that is not HDF5, and an HDF5 file that cannot be opened.
Handle open_readonly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path + ": not an HDF5 file (it is a directory)");
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path + ": not an HDF5 file");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid())
    throw InputError(
        fmt::format("{}: cannot open the HDF5 file: truncated, damaged or not "
                    "readable{}",
                    path, detail::hdf5_error_detail()));
  return file;
}

/// "float64", "int32", "uint8", "string", ...
std::string type_name(hid_t type) {
  const std::size_t bits = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
    case H5T_FLOAT:
      return fmt::format("float{}", bits);
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    case H5T_VLEN:
      return "vlen";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_BITFIELD:
      return "bitfield";
    default:
      return "unknown type";
  }
}

/// "scalar", "(7, 5, 3)", "empty".
std::string shape_text(hid_t space) {
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR:
      return "scalar";
    case H5S_NULL:
      return "empty";
    default:
      break;
  }
  const int ndims = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(ndims, 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return fmt::format("({})", fmt::join(dims, ", "));
}

/// Reads a scalar string (variable or fixed length) from an attribute or a dataset.
std::string read_string(hid_t object, bool is_attribute, const std::string& path,
                        const std::string& what) {
  Handle type(checked(is_attribute ? H5Aget_type(object) : H5Dget_type(object), path, what),
              H5Tclose);
  if (H5Tget_class(type) != H5T_STRING) {
    throw InputError(fmt::format("{}: {} is not a string", path, what));
  }
  auto read = [&](hid_t mem_type, void* buffer) {
    checked(is_attribute ? H5Aread(object, mem_type, buffer)
                         : H5Dread(object, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer),
            path, what);
  };
  if (checked(H5Tis_variable_str(type), path, what) > 0) {
    Handle mem_type(checked(H5Tcopy(H5T_C_S1), path, what), H5Tclose);
    checked(H5Tset_size(mem_type, H5T_VARIABLE), path, what);
    checked(H5Tset_cset(mem_type, H5Tget_cset(type)), path, what);
    char* text = nullptr;
    read(mem_type, &text);
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type), '\0');
  read(type, value.data());
  value.resize(std::min(value.size(), value.find('\0')));
  if (H5Tget_strpad(type) == H5T_STR_SPACEPAD) {
    value.erase(value.find_last_not_of(' ') + 1);
  }
  return value;
}

/// The string on one line, quoted, with newlines escaped and cut if long.
std::string quoted(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  if (out.size() > kInlineChars) out = out.substr(0, kInlineChars) + "...";
  return '"' + out + '"';
}

/// Value of an attribute as printed by `describe_file`: scalars and short numeric arrays
/// inline, anything else as its type and shape.
std::string attribute_text(hid_t attr, const std::string& path, const std::string& what,
                           bool quote_strings) {
  Handle type(checked(H5Aget_type(attr), path, what), H5Tclose);
  Handle space(checked(H5Aget_space(attr), path, what), H5Sclose);
  const H5T_class_t type_class = H5Tget_class(type);
  const H5S_class_t space_class = H5Sget_simple_extent_type(space);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  const std::string shape = shape_text(space);
  if (type_class == H5T_STRING && space_class == H5S_SCALAR) {
    std::string value = read_string(attr, true, path, what);
    return quote_strings ? quoted(std::move(value)) : value;
  }
  if ((type_class == H5T_INTEGER || type_class == H5T_FLOAT) && space_class != H5S_NULL &&
      count <= kInlineValues) {
    std::string values;
    if (type_class == H5T_INTEGER) {
      std::vector<std::int64_t> v(static_cast<std::size_t>(count));
      checked(H5Aread(attr, H5T_NATIVE_INT64, v.data()), path, what);
      values = fmt::format("{}", fmt::join(v, ", "));
    } else {
      std::vector<double> v(static_cast<std::size_t>(count));
      checked(H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()), path, what);
      values = fmt::format("{}", fmt::join(v, ", "));
    }
    return space_class == H5S_SCALAR ? values : "[" + values + "]";
  }
  return fmt::format("{} {}", type_name(type), shape);
}

std::vector<std::string> attribute_names(hid_t object, const std::string& path,
                                         const std::string& what) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  hsize_t index = 0;
  checked(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names), path,
          "the attributes of " + what);
  std::sort(names.begin(), names.end());
  return names;
}

/// One line of the contents listing, with the attributes printed under it.
struct Entry {
  std::string path;
  std::string description;
  std::vector<std::string> attributes;
};

std::vector<std::string> attribute_lines(hid_t object, const std::string& file,
                                         const std::string& object_path, bool skip_common) {
  std::vector<std::string> lines;
  for (const auto& name : attribute_names(object, file, object_path)) {
    if (skip_common && std::find(std::begin(kCommonAttributes), std::end(kCommonAttributes),
                                 name) != std::end(kCommonAttributes)) {
      continue;
    }
    const std::string what = fmt::format("attribute '{}' of {}", name, object_path);
    Handle attr(checked(H5Aopen(object, name.c_str(), H5P_DEFAULT), file, what), H5Aclose);
    lines.push_back(fmt::format("{} = {}", name, attribute_text(attr, file, what, true)));
  }
  return lines;
}

/// Lists the links of `group` (sorted by name) and recurses into subgroups.
void walk(hid_t group, const std::string& group_path, const std::string& file, int depth,
          std::vector<Entry>& entries) {
  constexpr int kMaxDepth = 64;  // hard-link cycles cannot make this loop forever
  if (depth > kMaxDepth) return;
  std::vector<std::pair<std::string, H5L_type_t>> links;
  auto collect = [](hid_t, const char* name, const H5L_info_t* info, void* out) -> herr_t {
    static_cast<std::vector<std::pair<std::string, H5L_type_t>>*>(out)->emplace_back(name,
                                                                                     info->type);
    return 0;
  };
  hsize_t index = 0;
  checked(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &links), file,
          "the members of " + group_path);
  std::sort(links.begin(), links.end());

  for (const auto& [name, link_type] : links) {
    const std::string path = (group_path == "/" ? "/" : group_path + "/") + name;
    if (link_type == H5L_TYPE_SOFT) {
      H5L_info_t info{};
      checked(H5Lget_info(group, name.c_str(), &info, H5P_DEFAULT), file, path);
      std::string target(info.u.val_size, '\0');
      checked(H5Lget_val(group, name.c_str(), target.data(), target.size(), H5P_DEFAULT), file,
              path);
      target.resize(std::min(target.size(), target.find('\0')));
      entries.push_back({path, "soft link -> " + target, {}});
      continue;
    }
    if (link_type != H5L_TYPE_HARD) {
      entries.push_back({path, "external link", {}});
      continue;
    }
    Handle object(checked(H5Oopen(group, name.c_str(), H5P_DEFAULT), file, path), H5Oclose);
    switch (H5Iget_type(object)) {
      case H5I_GROUP:
        entries.push_back({path, "group", attribute_lines(object, file, path, false)});
        walk(object, path, file, depth + 1, entries);
        break;
      case H5I_DATASET: {
        Handle type(checked(H5Dget_type(object), file, path), H5Tclose);
        Handle space(checked(H5Dget_space(object), file, path), H5Sclose);
        entries.push_back({path, fmt::format("dataset {} {}", shape_text(space), type_name(type)),
                           attribute_lines(object, file, path, false)});
        break;
      }
      case H5I_DATATYPE:
        entries.push_back({path, "named datatype", {}});
        break;
      default:
        entries.push_back({path, "unknown object", {}});
        break;
    }
  }
}

/// A root attribute for the header lines, "(missing)" if absent.
std::string root_attribute(hid_t file, const std::string& path, const char* name) {
  if (H5Aexists(file, name) <= 0) return "(missing)";
  const std::string what = fmt::format("attribute '{}'", name);
  Handle attr(checked(H5Aopen(file, name, H5P_DEFAULT), path, what), H5Aclose);
  return attribute_text(attr, path, what, false);
}

std::string read_deck(hid_t file, const std::string& path) {
  if (H5Lexists(file, "/stratus", H5P_DEFAULT) <= 0 ||
      H5Lexists(file, "/stratus/deck", H5P_DEFAULT) <= 0) {
    throw InputError(path + ": no /stratus/deck dataset (not written by Stratus?)");
  }
  Handle deck(checked(H5Dopen2(file, "/stratus/deck", H5P_DEFAULT), path, "/stratus/deck"),
              H5Dclose);
  return read_string(deck, false, path, "/stratus/deck");
}

}  // namespace

std::string hdf5_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

std::string describe_file(const std::string& path, bool show_deck) {
  QuietHdf5Errors quiet;
  Handle file = open_readonly(path);
  if (H5Aexists(file, "stratus_format") <= 0) {
    throw InputError(path + ": not a Stratus file (no 'stratus_format' attribute)");
  }

  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<16}{}\n", label, value);
  };
  line("File:", path);
  line("Format:", root_attribute(file, path, "stratus_format"));
  line("Format version:", root_attribute(file, path, "stratus_format_version"));
  line("Written by:",
       fmt::format("Stratus {} (git {})", root_attribute(file, path, "stratus_version"),
                   root_attribute(file, path, "stratus_git_revision")));
  line("Created (UTC):", root_attribute(file, path, "created_utc"));
  line("MPI ranks:", root_attribute(file, path, "mpi_ranks"));

  std::vector<Entry> entries;
  auto root_attributes = attribute_lines(file, path, "/", true);
  if (!root_attributes.empty()) entries.push_back({"/", "group", std::move(root_attributes)});
  walk(file, "/", path, 0, entries);

  std::size_t width = 0;
  for (const auto& e : entries) width = std::max(width, e.path.size());
  out += "\nContents:\n";
  for (const auto& e : entries) {
    out += fmt::format("  {:<{}}  {}\n", e.path, width, e.description);
    for (const auto& a : e.attributes) out += fmt::format("  {:<{}}    {}\n", "", width, a);
  }

  if (show_deck) {
    std::string deck = read_deck(file, path);
    if (!deck.empty() && deck.back() != '\n') deck += '\n';
    out += "\nResolved deck (/stratus/deck):\n" + deck;
  }
  return out;
}

std::vector<double> read_dataset_3d(const std::string& path, const std::string& dataset,
                                    std::array<std::int64_t, 3>& dims) {
  QuietHdf5Errors quiet;
  Handle file = open_readonly(path);
  Handle dset(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw InputError(fmt::format("{}: no dataset '{}'", path, dataset));
  Handle space(checked(H5Dget_space(dset), path, dataset), H5Sclose);
  const int ndims = H5Sget_simple_extent_ndims(space);
  if (ndims != 3) {
    throw InputError(
        fmt::format("{}: dataset '{}' has {} dimensions, expected 3", path, dataset, ndims));
  }
  hsize_t shape[3] = {0, 0, 0};
  checked(H5Sget_simple_extent_dims(space, shape, nullptr), path, dataset);
  std::vector<double> values(static_cast<std::size_t>(shape[0] * shape[1] * shape[2]));
  if (!values.empty()) {
    checked(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), path,
            dataset);
  }
  for (int a = 0; a < 3; ++a) dims[a] = static_cast<std::int64_t>(shape[a]);
  return values;
}

std::string read_deck_text(const std::string& path) {
  QuietHdf5Errors quiet;
  Handle file = open_readonly(path);
  return read_deck(file, path);
}

}  // namespace stratus::io
