// Deck checking: defaults, origins, overrides, every kind of rejection, round trip.
#include "stratus/io/deck.hpp"

#include <gtest/gtest.h>

#include <sstream>

using namespace stratus;
using stratus::io::Deck;
using stratus::io::DeckError;
using stratus::io::load_deck;

namespace {

Schema base_schema() {
  Schema schema;
  auto& run = schema.section("run", "run", "run");
  run.add_string("solver", "solver").one_of({"toy", "other"});
  run.add_int("steps", "steps").at_least(0);
  return schema;
}

void toy_sections(const std::string& solver, Schema& schema) {
  ASSERT_EQ(solver, "toy");
  auto& t = schema.section("toy", "toy solver", "toy");
  t.add_real("dt", "time step").positive();
  t.add_real("temperature", "T").at_least(0).set_default(1.5);
  t.add_int_list("cells", "cells")
      .list_length(3)
      .at_least(1)
      .set_default(std::vector<std::int64_t>{4, 4, 4});
  t.add_string("mode", "mode").one_of({"fast", "exact"}).set_default(std::string("fast"));
  t.add_bool("verbose", "v").set_default(false);
  auto& n = schema.section("toy.inner", "nested", "toy");
  n.add_real("scale", "scale").set_default(2.0);
  auto& sp = schema.section("toy.species", "repeated", "toy", true);
  sp.add_string("name", "name");
  sp.add_real("mass", "mass").positive().set_default(1.0);
}

Deck load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_deck("deck.toml", text, overrides, base_schema(), toy_sections);
}

/// The problems of a rejected deck, as "origin: key: message" lines.
std::vector<std::string> problems(const std::string& text,
                                  const std::vector<std::string>& overrides = {}) {
  try {
    load(text, overrides);
  } catch (const DeckError& e) {
    std::vector<std::string> out;
    for (const auto& p : e.problems()) out.push_back(p.str());
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    return out;
  }
  ADD_FAILURE() << "deck was accepted:\n" << text;
  return {};
}

const std::string kGood =
    "[run]\n"             // 1
    "solver = \"toy\"\n"  // 2
    "steps = 10\n"        // 3
    "\n"                  // 4
    "[toy]\n"             // 5
    "dt = 1\n"            // 6
    "mode = \"exact\"\n"  // 7
    "[[toy.species]]\n"   // 8
    "name = \"Ar\"\n"     // 9
    "mass = 39.9\n"       // 10
    "[[toy.species]]\n"   // 11
    "name = \"He\"\n";    // 12

}  // namespace

TEST(Deck, ValuesDefaultsAndOrigins) {
  const Deck d = load(kGood);
  EXPECT_EQ(d.string("run.solver"), "toy");
  EXPECT_EQ(d.integer("run.steps"), 10);
  EXPECT_DOUBLE_EQ(d.real("toy.dt"), 1.0);  // an integer is accepted for a real
  EXPECT_DOUBLE_EQ(d.real("toy.temperature"), 1.5);
  EXPECT_EQ(d.integer_list("toy.cells"), (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_DOUBLE_EQ(d.real("toy.inner.scale"), 2.0);  // absent nested section: defaults
  EXPECT_EQ(d.string("toy.mode"), "exact");
  EXPECT_EQ(d.origin("toy.dt").str(), "deck.toml:6:6");
  EXPECT_EQ(d.origin("run.steps").str(), "deck.toml:3:9");
  EXPECT_EQ(d.origin("toy.temperature").str(), "default");
  ASSERT_EQ(d.count("toy.species"), 2u);
  EXPECT_EQ(d.string("toy.species[1].name"), "He");
  EXPECT_DOUBLE_EQ(d.real("toy.species[0].mass"), 39.9);
  EXPECT_DOUBLE_EQ(d.real("toy.species[1].mass"), 1.0);
  EXPECT_THROW((void)d.real("toy.nope"), std::logic_error);
  EXPECT_THROW((void)d.integer("toy.dt"), std::logic_error);
}

TEST(Deck, ResolvedDeckRoundTrips) {
  const Deck d = load(kGood, {"toy.temperature=3"});
  const std::string resolved = d.to_toml();
  EXPECT_NE(resolved.find("temperature = 3.0"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("# default"), std::string::npos);
  const Deck again =
      load_deck("resolved.toml", resolved, std::vector<std::string>{}, base_schema(), toy_sections);
  // Same values line by line; only the origin comments (# default, # --set ...) differ.
  auto strip_comments = [](const std::string& text) {
    std::string out, line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
      if (line.rfind('#', 0) == 0) continue;  // header comment
      const auto hash = line.find("  #");
      if (hash != std::string::npos) line = line.substr(0, hash);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ(strip_comments(again.to_toml()), strip_comments(resolved));
  EXPECT_EQ(again.to_toml().find("# default"), std::string::npos);
  EXPECT_DOUBLE_EQ(again.real("toy.temperature"), 3.0);
  EXPECT_EQ(again.count("toy.species"), 2u);
  EXPECT_EQ(again.string("toy.species[0].name"), "Ar");
  EXPECT_EQ(again.integer_list("toy.cells"), d.integer_list("toy.cells"));
  EXPECT_EQ(again.string("toy.mode"), "exact");
}

TEST(Deck, OverridesAreCheckedAndTracked) {
  const Deck d = load(kGood, {"toy.dt=0.25", "toy.mode=fast", "toy.inner.scale=5", "run.steps=3"});
  EXPECT_DOUBLE_EQ(d.real("toy.dt"), 0.25);
  EXPECT_EQ(d.string("toy.mode"), "fast");  // bare word taken as a string
  EXPECT_DOUBLE_EQ(d.real("toy.inner.scale"), 5.0);
  EXPECT_EQ(d.origin("toy.dt").str(), "--set toy.dt=0.25");
  EXPECT_EQ(d.integer("run.steps"), 3);

  EXPECT_EQ(problems(kGood, {"toy.dt=-1"}),
            (std::vector<std::string>{"--set toy.dt=-1: toy.dt: must be > 0, found -1.0"}));
  EXPECT_EQ(problems(kGood, {"toy.dtt=1"}),
            (std::vector<std::string>{
                "--set toy.dtt=1: toy.dtt: unknown key 'dtt' in [toy]; did you mean 'dt'?"}));
  EXPECT_EQ(problems(kGood, {"run.steps=abc"}),
            (std::vector<std::string>{
                "--set run.steps=abc: run.steps: expected integer >= 0, found string \"abc\""}));
  EXPECT_EQ(problems(kGood, {"steps"}),
            (std::vector<std::string>{"--set steps: expected section.key=value, found no '='"}));
  EXPECT_EQ(
      problems(kGood, {"steps=3"}),
      (std::vector<std::string>{"--set steps=3: expected section.key=value, found key 'steps'"}));
  EXPECT_EQ(problems(kGood, {"toy.dt.x=3"}).size(), 1u);
}

TEST(Deck, SyntaxErrorNamesLineAndColumn) {
  const auto p = problems("[run]\nsolver = \"toy\"\nsteps = = 3\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rfind("deck.toml:3:", 0), 0u) << p[0];
  EXPECT_NE(p[0].find("TOML syntax error"), std::string::npos);
}

TEST(Deck, EveryProblemIsReportedAtOnce) {
  const std::string text =
      "[run]\n"
      "solver = \"toy\"\n"
      "steps = 1\n"
      "[toy]\n"
      "dt = \"fast\"\n"      // 5: wrong type
      "temprature = 2\n"     // 6: typo
      "cells = [1, 0, 3]\n"  // 7: element out of range
      "mode = \"exakt\"\n"   // 8: not in set
      "[toy.inner]\n"
      "scale = [1]\n"  // 10: list for a real
      "[toyy]\n";      // 11: unknown section
  const auto p = problems(text);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0], "deck.toml:5:6: toy.dt: expected real > 0, found string \"fast\"");
  EXPECT_EQ(p[1],
            "deck.toml:6:1: toy.temprature: unknown key 'temprature' in [toy]; did you mean "
            "'temperature'?");
  EXPECT_EQ(p[2], "deck.toml:7:9: toy.cells: element 1 must be >= 1, found [1, 0, 3]");
  EXPECT_EQ(p[3],
            "deck.toml:8:8: toy.mode: must be one of \"fast\", \"exact\" (did you mean "
            "\"exact\"?), found \"exakt\"");
  EXPECT_EQ(p[4], "deck.toml:10:9: toy.inner.scale: expected real, found an array of 1 elements");
  EXPECT_EQ(p[5].rfind("deck.toml:11:", 0), 0u) << p[5];
  EXPECT_NE(p[5].find("toyy: unknown section [toyy]; did you mean [toy]?"), std::string::npos)
      << p[5];
}

TEST(Deck, MissingRequiredKeysAndSections) {
  auto p = problems("[run]\nsolver = \"toy\"\n");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], "deck.toml:1:1: run.steps: missing required key 'steps' (integer >= 0) in [run]");
  EXPECT_EQ(p[1], "deck.toml:1:1: toy.dt: missing required key 'dt' (real > 0) in [toy]");
  p = problems("[run]\nsolver = \"toy\"\nsteps = 1\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "deck.toml:1:1: toy.dt: missing required key 'dt' (real > 0) in [toy]");
  p = problems("# nothing\n");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NE(p[0].find("missing required key 'solver'"), std::string::npos);
  p = problems("[run]\nsolver = \"toy\"\nsteps = 1\n[[toy.species]]\nmass = 2\n");
  EXPECT_NE(p[0].find("deck.toml:4:1: toy.species[0].name: missing required key 'name'"),
            std::string::npos)
      << p[0];
}

TEST(Deck, UnknownSolverSuggestsTheNearestOne) {
  const auto p = problems("[run]\nsolver = \"tyo\"\nsteps = 1\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0],
            "deck.toml:2:10: run.solver: must be one of \"toy\", \"other\" (did you mean "
            "\"toy\"?), found \"tyo\"");
}

TEST(Deck, KeyInTheWrongSectionIsPointedAt) {
  const auto p = problems("[run]\nsolver = \"toy\"\nsteps = 1\nscale = 3\n[toy]\ndt = 1\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(
      p[0],
      "deck.toml:4:1: run.scale: unknown key 'scale' in [run]; 'scale' belongs in [toy.inner]");
}

TEST(Deck, NonFiniteAndWrongShapesAreRejected) {
  auto p = problems("[run]\nsolver = \"toy\"\nsteps = 1\n[toy]\ndt = nan\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("toy.dt: expected real > 0"), std::string::npos) << p[0];
  p = problems("[run]\nsolver = \"toy\"\nsteps = 1\n[toy]\ndt = 1\ncells = [1, 2.5, 3]\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0],
            "deck.toml:6:13: toy.cells: expected list of integers of length 3 (each >= 1), found "
            "real 2.5 at element 1");
  p = problems("toy = 3\n[run]\nsolver = \"toy\"\nsteps = 1\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "deck.toml:1:1: toy: expected a table [toy], found integer 3");
  p = problems("[run]\nsolver = \"toy\"\nsteps = 1\n[toy]\ndt = 1\n[toy.species]\nname = \"x\"\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("expected an array of tables [[toy.species]]"), std::string::npos) << p[0];
  p = problems("[run]\nsolver = \"toy\"\nsteps = 1.5\n[toy]\ndt = 1\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "deck.toml:3:9: run.steps: expected integer >= 0, found real 1.5");
}

TEST(Deck, ErrorAtNamesTheOrigin) {
  const Deck d = load(kGood);
  const DeckError e = d.error_at("toy.dt", "too large for this grid");
  EXPECT_STREQ(e.what(), "deck.toml:6:6: toy.dt: too large for this grid");
  EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
}
