// `stratus post`: command line, frame slices and the CSV output shared by every analysis.
#include "post.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

namespace stratus::app {

namespace {

void add_output_option(CLI::App* cmd, PostOptions& o) {
  cmd->add_option("-o,--output", o.output, "CSV file to write (default: standard output)")
      ->type_name("FILE");
}

}  // namespace

CLI::App* add_post_subcommand(CLI::App& app, PostOptions& o) {
  auto* post = app.add_subcommand(
      "post", "Analyses of output files: rdf, msd (trajectories), spectrum, dissipation (fields)");
  post->require_subcommand(1);
  post->footer("Exit codes: 0 written, 1 the output could not be written, 2 bad file or option.");

  auto* rdf = post->add_subcommand(
      "rdf", "Radial distribution function g(r) and coordination number n(r) of a trajectory");
  rdf->add_option("TRAJ", o.inputs, "H5MD trajectory of the md solver")->required()->expected(1);
  rdf->add_option("--bins", o.bins, "Histogram bins over [0, rmax]")->default_str("200");
  rdf->add_option("--rmax", o.rmax, "Largest distance (default: half the shortest box edge)");
  rdf->add_option("--frames", o.frames, "Frames to average, Python slice A:B:S (default: all)")
      ->type_name("A:B:S");
  rdf->add_option("--types", o.types,
                  "Partial g(r) between atoms of type i and atoms of type j (1-based, as in the "
                  "deck; default: every atom)")
      ->type_name("I,J");
  add_output_option(rdf, o);

  auto* msd = post->add_subcommand(
      "msd", "Mean-square displacement vs lag time and the diffusion coefficient D");
  msd->add_option("TRAJ", o.inputs, "H5MD trajectory of the md solver")->required()->expected(1);
  msd->add_option("--frames", o.frames, "Frames to use, Python slice A:B:S (default: all)")
      ->type_name("A:B:S");
  msd->add_option("--fit-from", o.fit_from,
                  "Start of the window of the fit MSD = 6 D t + c, fraction of the longest lag")
      ->default_str("0.3");
  msd->add_option("--fit-to", o.fit_to, "End of that window, fraction of the longest lag")
      ->default_str("0.9");
  add_output_option(msd, o);

  auto* spectrum = post->add_subcommand(
      "spectrum", "Shell-averaged kinetic energy spectrum E(k) of a velocity field snapshot");
  spectrum
      ->add_option("FIELDS", o.inputs,
                   "Field snapshot file(s) of the spectral or euler solver (NAME.fields.*.h5)")
      ->required();
  spectrum
      ->add_option("--snapshot", o.snapshot,
                   "Which of the files, in step order: 0 the first, -1 the last")
      ->default_str("-1");
  add_output_option(spectrum, o);

  auto* dissipation = post->add_subcommand(
      "dissipation", "Kinetic energy and dissipation rate 2 nu sum k^2 E(k) of every snapshot");
  dissipation
      ->add_option("FIELDS", o.inputs,
                   "Field snapshot files of the spectral or euler solver (NAME.fields.*.h5)")
      ->required();
  dissipation->add_option("--nu", o.nu,
                          "Kinematic viscosity (default: from the deck stored in the files)");
  add_output_option(dissipation, o);
  return post;
}

std::vector<std::int64_t> parse_frame_slice(const std::string& text, std::int64_t count,
                                            const std::string& option) {
  const auto bad = [&](const std::string& why) {
    return InputError(
        fmt::format("{} {}: expected a frame slice A:B:S (Python rules, e.g. 10:, "
                    "0:100:2, -20:), {}",
                    option, text, why));
  };
  std::int64_t start = 0, stop = count, stride = 1;
  if (!text.empty()) {
    std::vector<std::string> parts{""};
    for (const char c : text) {
      if (c == ':')
        parts.emplace_back();
      else
        parts.back() += c;
    }
    if (parts.size() > 3) throw bad("found more than two ':'");
    const auto number = [&](const std::string& s, std::int64_t fallback) -> std::int64_t {
      if (s.empty()) return fallback;
      std::size_t used = 0;
      std::int64_t v = 0;
      try {
        v = std::stoll(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != s.size()) throw bad(fmt::format("found \"{}\", not an integer", s));
      return v;
    };
    if (parts.size() == 3) stride = number(parts[2], 1);
    if (stride <= 0) throw bad(fmt::format("found stride {} (must be >= 1)", stride));
    start = number(parts[0], 0);
    // A single number selects that one frame.
    stop = parts.size() == 1 ? (start == -1 ? count : start + 1) : number(parts[1], count);
    const auto clamp = [&](std::int64_t v) {
      if (v < 0) v += count;
      return std::min(std::max<std::int64_t>(v, 0), count);
    };
    start = clamp(start);
    stop = clamp(stop);
  }
  std::vector<std::int64_t> frames;
  for (std::int64_t f = start; f < stop; f += stride) frames.push_back(f);
  if (frames.empty())
    throw bad(fmt::format("found a slice that selects no frame (the file has {} frames)", count));
  return frames;
}

int run_post(Context& ctx, const SolverRegistry& registry, const CLI::App& post,
             const PostOptions& o) {
  PostResult result;
  if (post.got_subcommand("rdf"))
    result = post_rdf(o);
  else if (post.got_subcommand("msd"))
    result = post_msd(o);
  else if (post.got_subcommand("spectrum"))
    result = post_spectrum(o);
  else
    result = post_dissipation(registry, o);
  if (ctx.rank() != 0) return 0;
  if (o.output.empty() || o.output == "-") {
    std::fputs(result.csv.c_str(), stdout);
    std::fputs(result.summary.c_str(), stderr);
    return 0;
  }
  std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
  out << result.csv;
  out.close();
  if (!out)
    throw RuntimeError(
        fmt::format("{}: cannot be written (-o): check the directory exists and is "
                    "writable",
                    o.output));
  std::fputs(result.summary.c_str(), stdout);
  std::fputs(fmt::format("wrote {}\n", o.output).c_str(), stdout);
  return 0;
}

}  // namespace stratus::app
