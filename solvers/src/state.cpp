#include "stratus/solvers/state.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <utility>

namespace stratus {

namespace {

std::vector<double> read_values(const io::CheckpointReader& in, const std::string& name, double) {
  return in.reals(name);
}
std::vector<std::int64_t> read_values(const io::CheckpointReader& in, const std::string& name,
                                      std::int64_t) {
  return in.ints(name);
}

template <class T>
std::string shape(const std::vector<T>& v) {
  return v.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(v, "x"));
}

}  // namespace

void StateDescriptor::identity(Identity id) { identity_ = std::move(id); }

std::function<std::string()> StateDescriptor::grid_layout(const CartDecomposition& decomposition) {
  return [&decomposition] {
    const auto& d = decomposition.dims();
    return fmt::format("{}x{}x{}", d[0], d[1], d[2]);
  };
}

io::CheckpointInfo StateDescriptor::info(std::int64_t step, double time,
                                         std::string backend) const {
  return {identity_.solver,
          step,
          time,
          identity_.dt != nullptr ? *identity_.dt : 0.0,
          identity_.units,
          identity_.layout ? identity_.layout() : std::string(),
          std::move(backend)};
}

void StateDescriptor::clock(std::int64_t* step, double* time, double* dt) {
  step_ = step;
  time_ = time;
  dt_ = dt;
}

void StateDescriptor::value(std::string name, double* v, Restore how) {
  reals_.push_back({std::move(name), nullptr, v, how});
}
void StateDescriptor::value(std::string name, std::int64_t* v, Restore how) {
  ints_.push_back({std::move(name), nullptr, v, how});
}
void StateDescriptor::values(std::string name, std::vector<double>* v, Restore how) {
  reals_.push_back({std::move(name), v, nullptr, how});
}
void StateDescriptor::values(std::string name, std::vector<std::int64_t>* v, Restore how) {
  ints_.push_back({std::move(name), v, nullptr, how});
}

void StateDescriptor::invariant(std::string name, std::vector<std::int64_t> value,
                                std::string what) {
  int_invariants_.push_back({std::move(name), std::move(what), std::move(value)});
}
void StateDescriptor::invariant(std::string name, std::vector<double> value, std::string what) {
  real_invariants_.push_back({std::move(name), std::move(what), std::move(value)});
}
void StateDescriptor::record(std::string name, std::function<std::vector<std::int64_t>()> get) {
  records_.push_back({std::move(name), std::move(get)});
}

void StateDescriptor::field(Field f) { fields_.push_back(std::move(f)); }
void StateDescriptor::particles(Particles p) { particles_.push_back(std::move(p)); }
void StateDescriptor::on_restored(std::function<void(const io::CheckpointReader&)> hook) {
  restored_.push_back(std::move(hook));
}

void StateDescriptor::save(io::CheckpointWriter& out) const {
  for (const Particles& p : particles_)
    out.write_particles(
        io::ParticleSource{*p.n_global, p.ids(), p.reals, p.ints, p.real_values, p.int_values});
  for (const Field& f : fields_) {
    const GridArray array = f.array();  // first: it may allocate what before_save fills
    if (f.before_save) f.before_save();
    out.write_field(f.name, array, f.ghost, f.block, f.global);
  }
  const auto put_values = [&out](const auto& entries) {
    for (const auto& e : entries) {
      if (e.many != nullptr)
        out.put(e.name, *e.many);
      else
        out.put(e.name, *e.one);
    }
  };
  put_values(reals_);
  put_values(ints_);
  for (const auto& e : int_invariants_) out.put(e.name, e.value);
  for (const auto& e : real_invariants_) out.put(e.name, e.value);
  for (const Record& r : records_) out.put(r.name, r.get());
}

void StateDescriptor::restore(const io::CheckpointReader& in) const {
  if (step_ != nullptr) *step_ = in.info().step;
  if (time_ != nullptr) *time_ = in.info().time;
  if (dt_ != nullptr) *dt_ = in.info().dt;

  const auto check_invariants = [&in](const auto& entries) {
    for (const auto& e : entries) {
      using T = typename std::decay_t<decltype(e.value)>::value_type;
      const auto saved = read_values(in, e.name, T{});
      if (saved != e.value)
        throw InputError(fmt::format("{}: {} {} in the checkpoint, {} now", in.path(), e.what,
                                     shape(saved), shape(e.value)));
    }
  };
  check_invariants(int_invariants_);
  check_invariants(real_invariants_);

  const auto get_values = [&in](const auto& entries) {
    for (const auto& e : entries) {
      using T = std::decay_t<decltype(*e.one)>;
      if (e.how == Restore::optional && !in.has(e.name)) continue;
      auto saved = read_values(in, e.name, T{});
      if (e.one != nullptr) {
        if (saved.size() != 1)
          throw InputError(fmt::format("{}: /state/{} holds {} values, expected one", in.path(),
                                       e.name, saved.size()));
        *e.one = saved[0];
        continue;
      }
      if (e.how == Restore::same_size && saved.size() != e.many->size())
        throw InputError(fmt::format(
            "{}: /state/{} holds {} values in the checkpoint, {} now (the deck fixes how many)",
            in.path(), e.name, saved.size(), e.many->size()));
      *e.many = std::move(saved);
    }
  };
  get_values(reals_);
  get_values(ints_);

  for (const Field& f : fields_) {
    in.read_field(f.name, f.array(), f.ghost, f.block, f.global);
    if (f.after_restore) f.after_restore();
  }
  for (const Particles& p : particles_) {
    std::vector<std::string> reals, ints;
    for (const Column& c : p.reals) reals.push_back(c.name);
    for (const Column& c : p.ints) ints.push_back(c.name);
    p.place(in, in.read_particles(reals, ints));
  }
  for (const auto& hook : restored_) hook(in);
}

std::vector<io::CheckpointReader::BoxRead> StateDescriptor::reads(
    const io::CheckpointReader& in) const {
  std::vector<io::CheckpointReader::BoxRead> out;
  for (const Field& f : fields_) {
    if (f.block.cells() == 0) continue;
    io::CheckpointReader::BoxRead r{"/fields/" + f.name, {}, {}};
    for (int d = 0; d < 3; ++d) {
      r.start.push_back(static_cast<std::uint64_t>(f.block.begin[d]));
      r.count.push_back(static_cast<std::uint64_t>(f.block.extent[d]));
    }
    out.push_back(std::move(r));
  }
  for (const Particles& p : particles_) {
    std::vector<std::string> names;
    for (const Column& c : p.reals) names.push_back(c.name);
    for (const Column& c : p.ints) names.push_back(c.name);
    for (auto& r : in.particle_reads(names)) out.push_back(std::move(r));
  }
  return out;
}

std::uint64_t StateDescriptor::bytes() const {
  std::uint64_t total = 0;
  for (const Field& f : fields_)
    total += static_cast<std::uint64_t>(f.global[0] * f.global[1] * f.global[2]) * sizeof(double);
  for (const Particles& p : particles_) {
    std::int64_t per_row = 0;
    for (const Column& c : p.reals) per_row += c.ncomp;
    for (const Column& c : p.ints) per_row += c.ncomp;
    total += static_cast<std::uint64_t>(*p.n_global * per_row) * 8u;
  }
  return total;
}

}  // namespace stratus
