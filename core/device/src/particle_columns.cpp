#include "stratus/core/particle_columns.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace stratus {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

void ParticleColumn::refuse_host_copy(const char* as) const {
  throw RuntimeError(fmt::format(
      "the particle column '{}' holds {} values that cannot be copied to the host as {}", name_,
      kind() == ColumnKind::real ? "real" : "record", as));
}

void ParticleColumn::check_host_rows(int n) const {
  if (n < 0 || n > rows()) {
    throw RuntimeError(
        fmt::format("the particle column '{}' has {} rows, not {}", name_, rows(), n));
  }
}

void ParticleColumn::check_host_values(std::size_t values) const {
  const auto width = static_cast<std::size_t>(components());
  if (values % width != 0 || values / width > static_cast<std::size_t>(rows())) {
    throw RuntimeError(
        fmt::format("the particle column '{}' ({} rows of {} values) cannot take {} values", name_,
                    rows(), width, values));
  }
}

ParticleColumn* ParticleColumns::find(const std::string& name) const noexcept {
  for (const auto& c : columns_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

ParticleColumn& ParticleColumns::at(const std::string& name) const {
  ParticleColumn* column = find(name);
  if (column == nullptr) {
    std::string names;
    for (const auto& c : columns_) names += (names.empty() ? "" : ", ") + c->name();
    throw RuntimeError(fmt::format("no particle column '{}' (there are: {})", name,
                                   names.empty() ? "none" : names));
  }
  return *column;
}

int ParticleColumns::rows() const noexcept {
  return columns_.empty() ? 0 : columns_.front()->rows();
}

void ParticleColumns::insert(std::unique_ptr<ParticleColumn> column) {
  if (find(column->name()) != nullptr) {
    throw RuntimeError(fmt::format("a particle column named '{}' exists already", column->name()));
  }
  if (!columns_.empty() && column->rows() != rows()) {
    throw RuntimeError(fmt::format("the particle column '{}' has {} rows, the others {}",
                                   column->name(), column->rows(), rows()));
  }
  columns_.push_back(std::move(column));
}

void ParticleColumns::refuse_type(const std::string& name, std::size_t value_bytes, int n) const {
  const ParticleColumn& c = at(name);
  throw RuntimeError(fmt::format(
      "the particle column '{}' holds {} values of {} bytes per row, asked for {} of {} bytes "
      "(or of another type)",
      name, c.components(), c.value_bytes(), n, value_bytes));
}

void ParticleColumns::resize(int rows, int keep_owned, int keep_all) {
  for (const auto& c : columns_) c->resize(rows, c->flags().owned_only ? keep_owned : keep_all);
}

RowLayout ParticleColumns::layout(Travel travel) const {
  std::vector<std::size_t> order(columns_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return columns_[a]->value_align() > columns_[b]->value_align();
  });
  RowLayout out;
  out.offset.assign(columns_.size(), -1);
  std::size_t end = 0, widest = 1;
  for (const std::size_t k : order) {
    const ParticleColumn& c = *columns_[k];
    if (!c.travels(travel)) continue;
    const std::size_t at = round_up(end, c.value_align());
    out.offset[k] = static_cast<std::ptrdiff_t>(at);
    end = at + c.row_bytes();
    widest = std::max(widest, c.value_align());
  }
  out.stride = round_up(end, widest);
  return out;
}

void ParticleColumns::pack(Travel travel, const RowLayout& layout, const RowParts& parts,
                           char* buf) const {
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    if (columns_[k]->travels(travel))
      columns_[k]->pack(parts, buf, layout.stride, static_cast<std::size_t>(layout.offset[k]));
  }
}

void ParticleColumns::unpack(Travel travel, const RowLayout& layout, const char* buf, int begin,
                             int count, BufferRows from) {
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    if (columns_[k]->travels(travel)) {
      columns_[k]->unpack(buf, layout.stride, static_cast<std::size_t>(layout.offset[k]), begin,
                          count, from);
    }
  }
}

void ParticleColumns::move_rows(Travel travel, const RowList& from, const RowList& to, int count) {
  for (const auto& c : columns_) {
    if (c->travels(travel)) c->move_rows(from, to, count);
  }
}

}  // namespace stratus
