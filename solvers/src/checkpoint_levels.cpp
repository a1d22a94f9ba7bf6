#include "checkpoint_levels.hpp"

#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/text.hpp"
#include "stratus/core/timers.hpp"
#include "stratus/io/checkpoint_flush.hpp"
#include "stratus/io/deck.hpp"
#include "stratus/solvers/solver.hpp"
#include "stratus/solvers/state.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace stratus {

namespace fs = std::filesystem;

HostLayout::HostLayout(MPI_Comm world) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &comm_);
  MPI_Comm_rank(comm_, &host_rank_);
  std::vector<int> flags(static_cast<std::size_t>(size));
  int mine = host_rank_ == 0 ? 1 : 0;
  MPI_Allgather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, world);
  for (int r = 0; r < size; ++r)
    if (flags[static_cast<std::size_t>(r)] != 0) leaders_.push_back(r);
  int first = rank;
  MPI_Bcast(&first, 1, MPI_INT, 0, comm_);
  for (std::size_t h = 0; h < leaders_.size(); ++h)
    if (leaders_[h] == first) host_ = static_cast<int>(h);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  name_.assign(name, static_cast<std::size_t>(length));
}

HostLayout::~HostLayout() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::string Levels::dirs() const {
  return local != nullptr
             ? fmt::format("{} (durable) and {} (node-local)", durable.dir(), local->dir())
             : durable.dir();
}

namespace {

/// Rank 0's text to every rank.
std::string bcast_text(MPI_Comm comm, std::string text) {
  auto n = static_cast<long long>(text.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(n));
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, comm);
  return text;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto end = line.find(sep, start);
    out.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

/// A file of the run on some level: where it is, who sees it, which part of which step.
struct Found {
  io::CheckpointStore::Entry entry;
  int holder = 0;  ///< world rank that sees it
  bool durable = true;
  std::string host;  ///< the holder's host (node-local files)
};

/// What each host's first rank finds (and removes) on its node-local disk, gathered at rank 0:
/// its files of the run, and the partial files it removed or (with `remove_all`) every file.
struct LocalScan {
  std::vector<Found> found;
  std::vector<std::string> removed;  ///< "path (host)" lines, for rank 0 to log
};

LocalScan scan_local(const Context& ctx, const Levels& levels, bool remove_all) {
  std::string mine;
  if (levels.local != nullptr && levels.layout.leader()) {
    const auto& name = levels.layout.name();
    for (const auto& p : levels.local->partials()) {
      std::error_code ec;
      fs::remove(p, ec);
      mine += fmt::format("P\t{}\t{}\n", p, name);
    }
    for (const auto& e : levels.local->list()) {
      if (remove_all) {
        std::error_code ec;
        fs::remove(e.path, ec);
        mine += fmt::format("P\t{}\t{}\n", e.path, name);
      } else {
        mine += fmt::format("E\t{}\t{}\t{}\t{}\t{}\n", e.step, e.part, e.parts, e.path, name);
      }
    }
  }
  LocalScan scan;
  const auto texts = gather_text(ctx.comm(), mine);
  for (std::size_t r = 0; r < texts.size(); ++r) {
    std::istringstream in(texts[r]);
    std::string line;
    while (std::getline(in, line)) {
      const auto f = split(line, '\t');
      if (f[0] == "P" && f.size() == 3)
        scan.removed.push_back(fmt::format("{} (on {})", f[1], f[2]));
      if (f[0] != "E" || f.size() != 6) continue;
      Found found;
      found.entry = {std::stoll(f[1]), f[4], std::stoi(f[2]), std::stoi(f[3])};
      found.holder = static_cast<int>(r);
      found.durable = false;
      found.host = f[5];
      scan.found.push_back(std::move(found));
    }
  }
  return scan;
}

/// Rank 0: the candidates from every file found, newest step first.
std::vector<RestartCandidate> assemble(const Context& ctx, const Levels& levels,
                                       const std::vector<Found>& found) {
  // (step, parts) -> for each part, its copies.
  std::map<std::pair<std::int64_t, int>, std::vector<std::vector<const Found*>>> sets;
  for (const auto& f : found) {
    auto& set = sets[{f.entry.step, f.entry.parts}];
    set.resize(static_cast<std::size_t>(f.entry.parts));
    set[static_cast<std::size_t>(f.entry.part)].push_back(&f);
  }
  const bool one_host = levels.layout.hosts() == 1;
  std::vector<RestartCandidate> out;
  for (auto it = sets.rbegin(); it != sets.rend(); ++it) {
    const auto [step, parts] = it->first;
    // A whole node-local file is read in place when every rank of this run sees that disk (it
    // is copied to the durable level in the background once the run goes on). Otherwise a
    // part only a node-local disk holds is copied to the durable level first, so that the
    // durable level holds the whole checkpoint before the run goes on.
    const bool in_place = one_host && parts == 1;
    RestartCandidate c;
    c.step = step;
    std::vector<std::string> fetched;
    bool complete = true, any_local = false;
    for (int k = 0; k < parts; ++k) {
      const auto& copies = it->second[static_cast<std::size_t>(k)];
      if (copies.empty()) {
        ctx.log().info(
            "checkpoint: step {}: part {} of {} is on no level this run sees (it was on the "
            "node-local disk of a host not in this run): not usable",
            step, k, parts);
        complete = false;
        break;
      }
      const Found* pick = copies.front();
      for (const Found* f : copies) {
        c.files.push_back({f->holder, f->entry.path});
        // In place: the node-local copy is the faster read. Otherwise the durable one.
        if (f->durable != in_place) pick = f;
      }
      if (pick->durable || in_place) {
        c.read.push_back(pick->entry.path);
        any_local = any_local || !pick->durable;
      } else {
        const std::string to = levels.durable.path_for(step, k, parts);
        c.copies.push_back({pick->holder, pick->entry.path, to});
        c.files.push_back({0, to});
        c.read.push_back(to);
        fetched.push_back(fmt::format("part {} from {}", k, pick->host));
      }
    }
    if (!complete) continue;
    c.level = !fetched.empty()
                  ? fmt::format("durable level, after copying from the node-local disks: {}",
                                fmt::join(fetched, ", "))
              : any_local ? std::string("node-local level")
                          : std::string("durable level");
    out.push_back(std::move(c));
  }
  return out;
}

std::string encode(const std::vector<RestartCandidate>& cs) {
  std::string t;
  for (const auto& c : cs) {
    t += fmt::format("C\t{}\t{}\n", c.step, c.level);
    for (const auto& r : c.read) t += fmt::format("R\t{}\n", r);
    for (const auto& x : c.copies) t += fmt::format("X\t{}\t{}\t{}\n", x.holder, x.from, x.to);
    for (const auto& f : c.files) t += fmt::format("F\t{}\t{}\n", f.holder, f.path);
  }
  return t;
}

std::vector<RestartCandidate> decode(const std::string& text) {
  std::vector<RestartCandidate> cs;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split(line, '\t');
    if (f[0] == "C") {
      cs.emplace_back();
      cs.back().step = std::stoll(f.at(1));
      cs.back().level = f.at(2);
    } else if (f[0] == "R") {
      cs.back().read.push_back(f.at(1));
    } else if (f[0] == "X") {
      cs.back().copies.push_back({std::stoi(f.at(1)), f.at(2), f.at(3)});
    } else if (f[0] == "F") {
      cs.back().files.push_back({std::stoi(f.at(1)), f.at(2)});
    }
  }
  return cs;
}

}  // namespace

std::vector<RestartCandidate> restart_candidates(const Context& ctx, const RunOptions& options,
                                                 const Levels& levels,
                                                 const std::string& run_name) {
  const std::string& how = options.restart;
  const auto& log = ctx.log();
  if (how != "none" && how != "auto") {
    // One file the user names; a part brings its sibling parts from the same directory.
    RestartCandidate c;
    c.level = "named on the command line";
    c.read = io::checkpoint_files(how);
    return {c};
  }
  const bool none = how == "none";
  const LocalScan scan = scan_local(ctx, levels, none);
  std::string text;
  if (ctx.rank() == 0) {
    std::vector<std::string> removed = scan.removed;
    for (const auto& p : levels.durable.partials()) {
      std::error_code ec;
      fs::remove(p, ec);
      removed.push_back(p);
    }
    for (const auto& r : removed)
      log.warn("checkpoint: removed {} ({})", r,
               none ? "--restart none starts the run afresh"
                    : "left by a checkpoint write that never finished");
    std::vector<Found> found = scan.found;
    for (auto& e : levels.durable.list()) {
      if (none) {
        std::error_code ec;
        fs::remove(e.path, ec);
        log.warn("checkpoint: removed {} (--restart none starts the run afresh)", e.path);
        continue;
      }
      found.push_back({std::move(e), 0, true, {}});
    }
    if (!none) text = encode(assemble(ctx, levels, found));
  }
  if (none) {
    log.info("checkpoint: --restart none: starting from step 0");
    return {};
  }
  auto candidates = decode(bcast_text(ctx.comm(), text));
  if (candidates.empty())
    log.info("checkpoint: no checkpoint of run '{}' in {}: starting from step 0", run_name,
             levels.dirs());
  return candidates;
}

std::string fetch_parts(const Context& ctx, const RestartCandidate& c) {
  std::string failure;
  double seconds = 0;
  for (const auto& x : c.copies) {
    if (x.holder != ctx.rank() || !failure.empty()) continue;
    try {
      const double start = MPI_Wtime();
      io::copy_verified(x.from, x.to);
      seconds += MPI_Wtime() - start;
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  failure = agree_on_message(ctx.comm(), failure);
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
  if (failure.empty() && !c.copies.empty())
    ctx.log().info(
        "checkpoint: step {}: {} part(s) copied from node-local disks to the durable level and "
        "read back equal ({:.3f} s)",
        c.step, c.copies.size(), seconds);
  return failure;
}

void set_aside(const Context& ctx, const RestartCandidate& c, const char* suffix,
               const std::string& why) {
  std::set<std::string> seen;
  for (const auto& f : c.files) {
    if (!seen.insert(fmt::format("{}:{}", f.holder, f.path)).second) continue;
    if (f.holder == ctx.rank()) {
      std::error_code ec;
      if (fs::exists(f.path, ec)) fs::rename(f.path, f.path + suffix, ec);
    }
    ctx.log().warn("checkpoint: {} renamed to {}{} ({})", f.path, f.path, suffix, why);
  }
  MPI_Barrier(ctx.comm());
}

namespace {

/// Thrown when a checkpoint cannot be used with this deck (never a reason to fall back).
class DeckMismatch : public InputError {
 public:
  using InputError::InputError;
};

// --- The resumer: which checkpoint a run continues from ---------------------------------

/// Refuses a checkpoint of another solver, or one whose deck differs from this one in a key
/// that changes the physics (DeckMismatch), unless --allow-deck-change.
void check_deck(const Context& ctx, const io::Deck& deck, const RunOptions& options,
                const io::CheckpointReader& r) {
  const auto& info = r.info();
  const std::string& name = deck.string("run.solver");
  if (info.solver != name)
    throw DeckMismatch(
        fmt::format("{}: written by solver '{}', this deck runs '{}': refusing to resume from it "
                    "(use --restart none to start fresh, or another checkpoint directory)",
                    r.path(), info.solver, name));
  io::Deck stored;
  try {
    stored = io::load_deck(r.path() + ":/stratus/deck", r.deck_text(), std::vector<io::Override>{},
                           deck.schema(), [](const std::string&, Schema&) {});
  } catch (const InputError& e) {
    throw DeckMismatch(fmt::format(
        "{}: its deck does not load with this deck's schema ({}): refusing to resume from it",
        r.path(), e.what()));
  }
  std::vector<std::string> changed;
  for (const auto& d : stored.differences(deck)) {
    if (deck.schema().may_change_on_restart(d.key)) continue;
    changed.push_back(fmt::format("  {}: {} in the checkpoint, {} now", d.key, d.before, d.after));
  }
  if (changed.empty()) return;
  if (options.allow_deck_change) {
    ctx.log().warn("checkpoint: resuming with {} changed deck key(s) (--allow-deck-change):\n{}",
                   changed.size(), join(changed, "\n"));
    return;
  }
  throw DeckMismatch(fmt::format(
      "{}: the deck changed since this checkpoint in {} key(s) that change the physics:\n{}\n"
      "Only the keys docs/input-reference.md marks \"may change on restart\" (run.steps, "
      "[output], [checkpoint], output settings) may change; "
      "pass --allow-deck-change to resume anyway, or --restart none to start fresh.",
      r.path(), changed.size(), join(changed, "\n")));
}

}  // namespace

/// Restores `solver` from the newest usable checkpoint: verified, then checked against the
/// deck (check_deck). Returns the step resumed at, -1 for a fresh start. Collective. The deck
/// is the resumer's argument: the time loop that follows never sees it.
std::int64_t resume(Context& ctx, const io::Deck& deck, Solver& solver,
                    const StateDescriptor& state, const RunOptions& options, const Levels& levels,
                    const std::string& run_name) {
  const auto& log = ctx.log();
  const io::CheckpointStore& store = levels.durable;
  const auto candidates = restart_candidates(ctx, options, levels, run_name);
  if (candidates.empty()) return -1;
  const bool automatic = options.restart == "auto";
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const RestartCandidate& c = candidates[k];
    const std::string shown =
        c.read.size() == 1 ? c.read.front()
                           : fmt::format("{} (+{} parts)", c.read.front(), c.read.size() - 1);
    try {
      const double start = wall_seconds();
      const std::string fetch = fetch_parts(ctx, c);
      if (!fetch.empty())
        throw InputError(
            fmt::format("step {}: a part on a node-local disk could not be copied "
                        "to the durable level: {}",
                        c.step, fetch));
      io::CheckpointReader reader(ctx.comm(), c.read);
      // In the layout that wrote it, the blocks the restore reads are checked as they are read
      // (one pass over the file); the others, and every block in another layout, first.
      const bool one_pass = reader.verify_unread(state.reads(reader));
      const double verified = wall_seconds();
      const auto& info = reader.info();
      // The name says which step a checkpoint should hold; the verified content says which it
      // does. A file whose two disagree (copied, renamed, or written by another run) is not
      // trusted: an older checkpoint whose name and content agree is taken instead.
      if (automatic)
        for (const auto& p : c.read)
          if (const auto e = store.parse(p); !e || e->step != info.step)
            throw InputError(fmt::format(
                "{}: holds step {}, but its name says another step: not trusted", p, info.step));
      check_deck(ctx, deck, options, reader);
      state.restore(reader);
      if (one_pass) reader.finish_one_pass();
      log.info(
          "checkpoint: resumed from {} (step {}, time {:.6g}; written with decomposition {} on {}; "
          "{}): {:.1f} MB verified in {:.3f} s, restored in {:.3f} s ({})",
          shown, info.step, info.time, info.decomposition, info.backend, c.level,
          static_cast<double>(reader.bytes()) / 1e6, verified - start, wall_seconds() - verified,
          one_pass ? "one pass: the blocks restored were verified as they were read"
                   : "two passes: another layout");
      // Checkpoints newer than this one belong to a history that this run now replaces.
      if (automatic)
        for (std::size_t j = 0; j < k; ++j)
          set_aside(ctx, candidates[j], ".damaged", "it could not be resumed from: see above");
      return info.step;
    } catch (const DeckMismatch&) {
      throw;
    } catch (const InputError& e) {
      if (!automatic) throw;
      log.warn("checkpoint: cannot resume from {}\n  {}\n  trying an older checkpoint", shown,
               e.what());
    }
  }
  throw InputError(fmt::format(
      "none of the {} checkpoint(s) in {} is usable (see the warnings above); move them away or "
      "run with --restart none to start from step 0",
      candidates.size(), levels.dirs()));
}

}  // namespace stratus
