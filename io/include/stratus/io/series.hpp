// Time-series CSV files (thermo output, diagnostics) that stay consistent with checkpoints:
// durable up to the last checkpoint, and cut back to it when a run resumes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace stratus::io {

/// A CSV file written by rank 0 of `comm`: header lines ('#' comments, then the column names,
/// the first of which is "step"), then one row per output step.
class SeriesFile {
 public:
  /// `resumed_at` < 0: creates (truncates) `path` and writes `header`. Otherwise keeps the
  /// header and the rows whose step is <= resumed_at, drops the rest (including a row cut short
  /// by a crash) with an atomic rewrite, and appends after them; a missing file is created.
  /// Throws RuntimeError naming the file on every rank when it cannot be written. Collective.
  SeriesFile(MPI_Comm comm, std::string path, const std::string& header, std::int64_t resumed_at);
  ~SeriesFile();
  SeriesFile(const SeriesFile&) = delete;
  SeriesFile& operator=(const SeriesFile&) = delete;

  /// Appends one row (rank 0; a no-op elsewhere). `line` has no trailing newline.
  void row(const std::string& line);
  /// Flushes and fsyncs (rank 0). Throws RuntimeError on every rank when the data cannot reach
  /// the disk. Collective.
  void sync();
  void close();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Rows dropped when resuming (rank 0; 0 elsewhere).
  [[nodiscard]] std::int64_t dropped() const noexcept { return dropped_; }

 private:
  MPI_Comm comm_;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::int64_t dropped_ = 0;
};

}  // namespace stratus::io
