// Private pieces of the H5MD frame reader (h5md_read.cpp) shared with its topology part
// (h5md_topology_read.cpp). Rank 0 reads; a failure is an Unreadable that every rank then
// raises as InputError naming the file.
#pragma once

#include "stratus/io/lammps_data.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io::detail {

/// A failure while rank 0 reads: its text becomes everyone's InputError ("PATH: what").
struct Unreadable {
  std::string what;
};

/// The shape of dataset `dset` (`name` for the message: Unreadable without a dataspace).
std::vector<hsize_t> shape_of(hid_t dset, const std::string& name);
/// "(a, b, ...)".
std::string shape_text(const std::vector<hsize_t>& dims);

/// The bonded terms of /connectivity (bonds, angles, dihedrals, impropers; other names are
/// ignored) with their types and coefficients from /parameters/stratus/connectivity, into `out`
/// (nothing without /connectivity). Ids count from `index_base` and must name atoms of the
/// particle group `group` (/particles/NAME) of `natoms` atoms. Throws Unreadable naming the
/// dataset, what was expected and what was found.
void read_connectivity(hid_t file, const std::string& group, std::int64_t natoms, int index_base,
                       Topology& out);

/// Rank 0's `t` on every rank. Collective.
void broadcast_topology(MPI_Comm comm, Topology& t);

}  // namespace stratus::io::detail
