// OutputDescriptor: the schedule the driver writes a solver's declared outputs on. A toy solver
// records which steps each output was written at, which steps were asked to prepare one, and
// the order of opens, syncs and closes; the expected lists are written out by hand.
#include "stratus/solvers/outputs.hpp"
#include "stratus/solvers/solver.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using stratus::Output;
using stratus::OutputDescriptor;

/// Steps the clock; stops by itself at `end_step` (as euler does at its end time) when > 0.
class Toy : public stratus::Solver {
 public:
  std::int64_t step = 0, end_step = 0;
  std::vector<std::int64_t> prepared;  // steps whose step was asked to prepare an output
  [[nodiscard]] std::int64_t current_step() const override { return step; }
  [[nodiscard]] double current_time() const override { return 0.5 * static_cast<double>(step); }
  [[nodiscard]] bool reached_end() const override { return end_step > 0 && step >= end_step; }
  void advance(bool prepare_output) override {
    ++step;
    if (prepare_output) prepared.push_back(step);
  }
  void declare_outputs(OutputDescriptor& /*outputs*/) override {}
  void declare_state(stratus::StateDescriptor& /*state*/) override {}
  [[nodiscard]] double work_per_step() const override { return 1; }
  [[nodiscard]] std::string work_unit() const override { return "steps"; }
};

struct Log {
  std::vector<std::string> events;
  std::vector<std::int64_t> at(const std::string& name) const {
    std::vector<std::int64_t> steps;
    for (const auto& e : events)
      if (e.rfind(name + "@", 0) == 0) steps.push_back(std::stoll(e.substr(name.size() + 1)));
    return steps;
  }
};

Output recorded(const std::string& name, std::int64_t every, Toy& toy, Log& log) {
  Output o;
  o.name = name;
  o.every = every;
  o.open = [name, &log](std::int64_t resumed_at) {
    log.events.push_back("open " + name + " " + std::to_string(resumed_at));
  };
  o.write = [name, &toy, &log] { log.events.push_back(name + "@" + std::to_string(toy.step)); };
  o.sync = [name, &log] { log.events.push_back("sync " + name); };
  o.close = [name, &log] { log.events.push_back("close " + name); };
  return o;
}

using Steps = std::vector<std::int64_t>;

TEST(Outputs, EveryStartEndAndPreparedSteps) {
  Toy toy;
  Log log;
  OutputDescriptor outputs;
  Output thermo = recorded("thermo", 4, toy, log);
  thermo.prepared_by_step = true;
  outputs.add(thermo);
  Output frames = recorded("frames", 3, toy, log);
  frames.at_end = false;
  outputs.add(frames);
  Output final_only = recorded("final", 0, toy, log);
  final_only.at_start = false;
  outputs.add(final_only);

  outputs.open(-1);
  bool last = false;
  while (!last) last = outputs.advance(toy, 10);
  outputs.close();
  EXPECT_EQ(toy.step, 10);
  EXPECT_EQ(log.at("thermo"), (Steps{0, 4, 8, 10}));
  EXPECT_EQ(log.at("frames"), (Steps{0, 3, 6, 9}));
  EXPECT_EQ(log.at("final"), (Steps{10}));
  // Only the thermo output asks its step to prepare (MD's energies): before 4, 8 and the end.
  EXPECT_EQ(toy.prepared, (Steps{4, 8, 10}));
  // Opened in order before the first writes; closed in order after the last.
  ASSERT_GE(log.events.size(), 5u);
  EXPECT_EQ(log.events[0], "open thermo -1");
  EXPECT_EQ(log.events[1], "open frames -1");
  EXPECT_EQ(log.events[2], "open final -1");
  EXPECT_EQ(log.events[3], "thermo@0");
  const std::vector<std::string> tail(log.events.end() - 3, log.events.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"close thermo", "close frames", "close final"}));
}

TEST(Outputs, AResumeWritesNothingAtItsStepAndSyncReachesEveryOutput) {
  Toy toy;
  toy.step = 6;  // restored from the checkpoint of step 6
  Log log;
  OutputDescriptor outputs;
  outputs.add(recorded("thermo", 3, toy, log));
  Output plain = recorded("plain", 2, toy, log);  // nothing to open, sync or close
  plain.open = nullptr;
  plain.sync = nullptr;
  plain.close = nullptr;
  outputs.add(plain);
  std::vector<std::string> summary;
  outputs.at_close([&] { summary.push_back("summary after " + log.events.back()); });

  outputs.open(6);
  EXPECT_EQ(log.events, (std::vector<std::string>{"open thermo 6"}));
  EXPECT_FALSE(outputs.advance(toy, 9));
  outputs.sync();
  EXPECT_EQ(log.events.back(), "sync thermo");
  EXPECT_FALSE(outputs.advance(toy, 9));
  EXPECT_TRUE(outputs.advance(toy, 9));
  outputs.close();
  EXPECT_EQ(log.at("thermo"), (Steps{9}));
  EXPECT_EQ(log.at("plain"), (Steps{8, 9}));
  EXPECT_EQ(summary, (std::vector<std::string>{"summary after close thermo"}));
}

TEST(Outputs, TheSolversOwnEndAndAConditionTrigger) {
  Toy toy;
  toy.end_step = 5;  // the solver reaches its end before run.steps
  Log log;
  OutputDescriptor outputs;
  outputs.add(recorded("series", 100, toy, log));
  Output frames = recorded("frames", 0, toy, log);
  frames.also_when = [&toy] { return toy.current_time() >= 1.0 && toy.step % 2 == 0; };
  outputs.add(frames);
  outputs.open(-1);
  bool last = false;
  while (!last) last = outputs.advance(toy, 1000);
  EXPECT_EQ(toy.step, 5);
  EXPECT_EQ(log.at("series"), (Steps{0, 5}));
  EXPECT_EQ(log.at("frames"), (Steps{0, 2, 4, 5}));
  // An end the step count cannot foresee asks for no preparation.
  EXPECT_TRUE(toy.prepared.empty());
}

TEST(Outputs, ADeclarationWithoutAWriteIsAProgrammingError) {
  OutputDescriptor outputs;
  Output o;
  o.name = "nothing";
  EXPECT_THROW(outputs.add(o), std::logic_error);
  o.write = [] {};
  o.every = -1;
  EXPECT_THROW(outputs.add(o), std::logic_error);
}

}  // namespace
