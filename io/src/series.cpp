#include "stratus/io/series.hpp"

#include "checkpoint_support.hpp"
#include "stratus/core/error.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stratus::io {

namespace {

/// The step of a data row ("123,..."), or -1 when the line is not a complete data row.
std::int64_t row_step(const std::string& line) {
  const auto comma = line.find(',');
  if (comma == std::string::npos || comma == 0) return -1;
  std::int64_t step = -1;
  const auto [ptr, ec] = std::from_chars(line.data(), line.data() + comma, step);
  if (ec != std::errc() || ptr != line.data() + comma) return -1;
  return step;
}

/// Rewrites `path` keeping the header and the rows up to `step`; returns the rows dropped.
std::int64_t cut_back(const std::string& path, std::int64_t step, const std::string& header) {
  std::ifstream in(path, std::ios::binary);
  std::string kept, line;
  std::int64_t dropped = 0;
  bool data = false;
  if (in) {
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    std::size_t start = 0;
    while (start < text.size()) {
      const auto end = text.find('\n', start);
      if (end == std::string::npos) {  // a row cut short by a crash
        ++dropped;
        break;
      }
      line = text.substr(start, end - start);
      start = end + 1;
      const std::int64_t s = row_step(line);
      if (s < 0 && !data) {
        kept += line + "\n";  // header
        continue;
      }
      data = true;
      if (s >= 0 && s <= step)
        kept += line + "\n";
      else
        ++dropped;
    }
  } else {
    kept = header;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kept;
    out.flush();
    if (!out) throw RuntimeError(fmt::format("{}: cannot write {}", path, tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot replace it: {}", path, ec.message()));
  return dropped;
}

}  // namespace

SeriesFile::SeriesFile(MPI_Comm comm, std::string path, const std::string& header,
                       std::int64_t resumed_at)
    : comm_(comm), path_(std::move(path)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string failure;
  if (rank == 0) {
    try {
      if (resumed_at >= 0) dropped_ = cut_back(path_, resumed_at, header);
      file_ = std::fopen(path_.c_str(), resumed_at >= 0 ? "a" : "w");
      if (file_ == nullptr)
        throw RuntimeError(
            fmt::format("{}: cannot open it for writing: {}", path_, std::strerror(errno)));
      if (resumed_at < 0) std::fputs(header.c_str(), file_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  failure = agree_on_message(comm, failure);
  if (!failure.empty()) throw RuntimeError(failure);
}

SeriesFile::~SeriesFile() { close(); }

void SeriesFile::row(const std::string& line) {
  if (file_ == nullptr) return;
  std::fputs(line.c_str(), file_);
  std::fputc('\n', file_);
}

void SeriesFile::sync() {
  std::string failure;
  if (file_ != nullptr && (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0))
    failure = fmt::format("{}: cannot write it to disk: {}", path_, std::strerror(errno));
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) throw RuntimeError(failure);
}

void SeriesFile::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace stratus::io
