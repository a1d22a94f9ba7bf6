// The parameter schema: declarations, expectations, violations, TOML spelling; text helpers.
#include "stratus/core/schema.hpp"
#include "stratus/core/text.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace stratus;

TEST(Text, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("cutoff", "cutof"), 1u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(Text, ClosestMatchAcceptsTyposRejectsStrangers) {
  const std::vector<std::string> keys{"diffusivity", "dt_fraction", "cells", "box"};
  EXPECT_EQ(closest_match("difusivity", keys), "diffusivity");
  EXPECT_EQ(closest_match("Cells", keys), "cells");
  EXPECT_EQ(closest_match("temperature", keys), "");
  EXPECT_EQ(closest_match("x", keys), "");
}

TEST(Schema, ExpectationAndViolation) {
  SectionSpec s;
  s.path = "a";
  auto& p = s.add_real("dt", "step").positive();
  EXPECT_EQ(p.expectation(), "real > 0");
  EXPECT_EQ(p.violation(ParamValue{0.5}), "");
  EXPECT_EQ(p.violation(ParamValue{0.0}), "must be > 0");
  auto& q = s.add_real("f", "fraction").greater_than(0.0).at_most(1.0);
  EXPECT_EQ(q.expectation(), "real 0 < x <= 1");
  EXPECT_NE(q.violation(ParamValue{1.5}), "");
  EXPECT_EQ(q.violation(ParamValue{1.0}), "");
  auto& l = s.add_int_list("cells", "cells").list_length(3).at_least(1);
  EXPECT_EQ(l.expectation(), "list of integers of length 3 (each >= 1)");
  EXPECT_EQ(l.violation(ParamValue{std::vector<std::int64_t>{1, 2}}),
            "must have 3 elements, has 2");
  EXPECT_EQ(l.violation(ParamValue{std::vector<std::int64_t>{1, 0, 2}}), "element 1 must be >= 1");
  auto& c = s.add_string("bc", "boundary").one_of({"periodic", "dirichlet"});
  EXPECT_EQ(c.violation(ParamValue{std::string("periodic")}), "");
  EXPECT_EQ(c.violation(ParamValue{std::string("periodc")}),
            "must be one of \"periodic\", \"dirichlet\" (did you mean \"periodic\"?)");
  EXPECT_TRUE(p.required());
  EXPECT_FALSE(s.add_bool("flag", "f").set_default(true).required());
}

TEST(Schema, DuplicatesAreProgrammingErrors) {
  Schema schema;
  auto& s = schema.section("run", "r", "run");
  s.add_int("steps", "n");
  EXPECT_THROW(s.add_int("steps", "again"), std::logic_error);
  EXPECT_THROW(schema.section("run", "again", "run"), std::logic_error);
}

TEST(Schema, ChildrenAndKeys) {
  Schema schema;
  schema.section("run", "", "run").add_int("steps", "");
  schema.section("heat", "", "heat").add_real("diffusivity", "");
  schema.section("heat.initial", "", "heat").add_real("amplitude", "");
  EXPECT_EQ(schema.children(""), (std::vector<std::string>{"run", "heat"}));
  EXPECT_EQ(schema.children("heat"), (std::vector<std::string>{"initial"}));
  EXPECT_EQ(schema.all_keys(),
            (std::vector<std::string>{"run.steps", "heat.diffusivity", "heat.initial.amplitude"}));
}

TEST(Schema, KeysThatMayChangeOnRestart) {
  // Declared on the key, or on its section or a section above it; nothing else.
  Schema schema;
  auto& run = schema.section("run", "", "run");
  run.add_int("steps", "").may_change_on_restart();
  run.add_string("solver", "");
  schema.section("md", "", "md").add_real("timestep", "");
  schema.section("md.thermo", "", "md").may_change_on_restart().add_int("every", "");
  schema.section("md.thermo.columns", "", "md").add_int("width", "");
  schema.section("md.pair", "", "md").add_real("cutoff", "");
  schema.section("md.pair.coeff", "", "md", true).add_real("sigma", "").may_change_on_restart();
  EXPECT_TRUE(schema.may_change_on_restart("run.steps"));
  EXPECT_FALSE(schema.may_change_on_restart("run.solver"));
  EXPECT_FALSE(schema.may_change_on_restart("md.timestep"));
  EXPECT_TRUE(schema.may_change_on_restart("md.thermo.every"));
  EXPECT_TRUE(schema.may_change_on_restart("md.thermo.columns.width"));  // below a free section
  EXPECT_FALSE(schema.may_change_on_restart("md.pair.cutoff"));
  EXPECT_TRUE(schema.may_change_on_restart("md.pair.coeff[2].sigma"));  // the index is ignored
  EXPECT_FALSE(schema.may_change_on_restart("md.thermostat.every"));    // unknown section
  EXPECT_FALSE(schema.may_change_on_restart("md.thermo"));              // a section, not a key
  EXPECT_FALSE(schema.may_change_on_restart("steps"));
  EXPECT_FALSE(schema.may_change_on_restart(""));
}

TEST(Schema, TomlSpelling) {
  EXPECT_EQ(to_toml(ParamValue{true}), "true");
  EXPECT_EQ(to_toml(ParamValue{std::int64_t{-3}}), "-3");
  EXPECT_EQ(to_toml(ParamValue{1.0}), "1.0");
  EXPECT_EQ(to_toml(ParamValue{0.1}), "0.1");
  EXPECT_EQ(to_toml(ParamValue{1e-300}), "1e-300");
  EXPECT_EQ(to_toml(ParamValue{std::string("a\"b")}), "\"a\\\"b\"");
  EXPECT_EQ(to_toml(ParamValue{std::vector<double>{1, 2.5}}), "[1.0, 2.5]");
}
