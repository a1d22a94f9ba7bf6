// Tests: one dataset of an HDF5 file read whole (serial), for checks of what a run wrote.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

namespace stratus::testing {

/// Dataset `name` of the HDF5 file `path` (serial read, as `mem_type`), its shape in `shape`;
/// empty (and `shape` empty) if the file, the link or the read fails.
template <class T>
std::vector<T> read_dataset(const std::string& path, const std::string& name, hid_t mem_type,
                            std::vector<hsize_t>& shape) {
  std::vector<T> values;
  shape.clear();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return values;
  const hid_t d = H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0
                      ? H5Dopen2(file, name.c_str(), H5P_DEFAULT)
                      : H5I_INVALID_HID;
  if (d >= 0) {
    const hid_t space = H5Dget_space(d);
    shape.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
    H5Sget_simple_extent_dims(space, shape.data(), nullptr);
    values.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    if (H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) values.clear();
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(file);
  return values;
}

}  // namespace stratus::testing
