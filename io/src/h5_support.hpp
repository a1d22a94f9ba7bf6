// Private helpers of the HDF5 code in io/src: identifier ownership and error-stack control.
#pragma once

#include <hdf5.h>

#include <utility>

namespace stratus::io::detail {

/// Turns HDF5's automatic error-stack printing off for one scope (Stratus checks every result
/// and reports failures itself), then clears the stack and restores what was set before.
class QuietHdf5Errors {
 public:
  QuietHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5Errors() {
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, func_, data_);
  }
  QuietHdf5Errors(const QuietHdf5Errors&) = delete;
  QuietHdf5Errors& operator=(const QuietHdf5Errors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// Owns one HDF5 identifier and releases it with the matching close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  operator hid_t() const noexcept { return id_; }  // NOLINT(google-explicit-constructor)
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

}  // namespace stratus::io::detail
