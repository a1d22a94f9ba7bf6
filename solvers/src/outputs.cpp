#include "stratus/solvers/outputs.hpp"

#include "stratus/solvers/solver.hpp"

#include <stdexcept>
#include <utility>

namespace stratus {

Output series_output(const Context& ctx, std::unique_ptr<io::SeriesFile>& file, std::string name,
                     std::int64_t every, std::string path, std::string header,
                     std::string log_header, std::function<void()> row,
                     std::function<void(std::int64_t resumed_at)> after_open) {
  Output o;
  o.name = std::move(name);
  o.every = every;
  o.open = [&ctx, &file, path = std::move(path), header = std::move(header),
            log_header = std::move(log_header),
            after_open = std::move(after_open)](std::int64_t resumed_at) {
    file = std::make_unique<io::SeriesFile>(ctx.comm(), path, header, resumed_at);
    if (after_open) after_open(resumed_at);
    if (!log_header.empty()) ctx.log().info("{}", log_header);
  };
  o.write = std::move(row);
  o.sync = [&file] { file->sync(); };
  o.close = [&file] { file->close(); };
  return o;
}

void OutputDescriptor::add(Output output) {
  if (!output.write) throw std::logic_error("output '" + output.name + "' declares no write");
  if (output.every < 0)
    throw std::logic_error("output '" + output.name + "' declares a negative interval");
  outputs_.push_back(std::move(output));
}

void OutputDescriptor::at_close(std::function<void()> summary) {
  summaries_.push_back(std::move(summary));
}

void OutputDescriptor::open(std::int64_t resumed_at) const {
  for (const auto& o : outputs_)
    if (o.open) o.open(resumed_at);
  if (resumed_at >= 0) return;  // step `resumed_at` is in the outputs already
  for (const auto& o : outputs_)
    if (o.at_start) o.write();
}

bool OutputDescriptor::scheduled(const Output& o, std::int64_t step, bool last) {
  return (o.every > 0 && step % o.every == 0) || (last && o.at_end);
}

bool OutputDescriptor::advance(Solver& solver, std::int64_t final_step) const {
  const std::int64_t next = solver.current_step() + 1;
  bool prepare = false;
  for (const auto& o : outputs_)
    prepare = prepare || (o.prepared_by_step && scheduled(o, next, next >= final_step));
  solver.advance(prepare);
  const std::int64_t step = solver.current_step();
  const bool last = step >= final_step || solver.reached_end();
  for (const auto& o : outputs_)
    if (scheduled(o, step, last) || (o.also_when && o.also_when())) o.write();
  return last;
}

void OutputDescriptor::sync() const {
  for (const auto& o : outputs_)
    if (o.sync) o.sync();
}

void OutputDescriptor::close() const {
  for (const auto& o : outputs_)
    if (o.close) o.close();
  for (const auto& s : summaries_) s();
}

}  // namespace stratus
