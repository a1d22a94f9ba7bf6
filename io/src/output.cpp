#include "stratus/io/output.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace stratus::io {

namespace fs = std::filesystem;

std::string run_name(const Deck& deck) {
  const std::string& name = deck.string("run.name");
  if (!name.empty()) return name;
  return fs::path(deck.path()).stem().string();
}

OutputPaths OutputPaths::from(const Deck& deck) {
  return {deck.string("output.dir"), run_name(deck)};
}

std::string OutputPaths::path(std::string_view suffix) const {
  return (fs::path(dir) / (name + std::string(suffix))).string();
}

std::string output_path(const Deck& deck, const std::string& suffix) {
  return OutputPaths::from(deck).path(suffix);
}

void prepare_output_dir(MPI_Comm comm, const Deck& deck) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string dir = deck.string("output.dir");
  std::string failure;
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      failure = fmt::format("output directory '{}' ({}): cannot create it: {}", dir,
                            deck.origin("output.dir").str(), ec.message());
    } else {
      const fs::path probe = fs::path(dir) / ".stratus-write-test";
      std::ofstream f(probe);
      if (!f) failure = fmt::format("output directory '{}': not writable", dir);
      f.close();
      fs::remove(probe, ec);
    }
  }
  int length = static_cast<int>(failure.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  failure.resize(static_cast<std::size_t>(length));
  MPI_Bcast(failure.data(), length, MPI_CHAR, 0, comm);
  if (!failure.empty()) throw RuntimeError(failure);
}

}  // namespace stratus::io
