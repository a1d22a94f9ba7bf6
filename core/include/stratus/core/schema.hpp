// The parameter schema: every module declares the deck sections it owns and, for each key,
// its type, default, unit, allowed range or set and a one-line doc. The deck checker
// (io/deck.hpp) validates decks against it; the input reference is generated from it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stratus {

enum class ParamType { boolean, integer, real, string, integer_list, real_list, string_list };

/// "boolean", "integer", "real", "string", "list of integers", ...
std::string_view type_name(ParamType type);

using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                                std::vector<double>, std::vector<std::string>>;

/// TOML spelling of a value: true, 3, 0.5, "text", [1, 2, 3].
std::string to_toml(const ParamValue& value);

/// One key of a section. Built with the fluent setters below, e.g.
///   section.add_real("dt", "Time step").unit("tau").positive().set_default(0.005);
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::real;
  std::string doc;
  std::string unit_name;                    ///< "" for dimensionless
  std::optional<ParamValue> default_value;  ///< none: the key is required
  std::optional<double> min, max;           ///< numeric bounds (on each element of a list)
  bool min_exclusive = false;
  bool max_exclusive = false;
  std::vector<std::string> choices;   ///< allowed strings (empty: any)
  std::optional<std::size_t> length;  ///< required list length
  bool file_name = false;             ///< a string that becomes part of a file name
  /// The key may differ between a checkpoint and its restart: it changes what is written or
  /// where the run stops, never the physics of the steps run.
  bool restart_free = false;

  ParamSpec& unit(std::string u) {
    unit_name = std::move(u);
    return *this;
  }
  ParamSpec& set_default(ParamValue v) {
    default_value = std::move(v);
    return *this;
  }
  ParamSpec& at_least(double v) {
    min = v;
    min_exclusive = false;
    return *this;
  }
  ParamSpec& greater_than(double v) {
    min = v;
    min_exclusive = true;
    return *this;
  }
  ParamSpec& at_most(double v) {
    max = v;
    max_exclusive = false;
    return *this;
  }
  ParamSpec& less_than(double v) {
    max = v;
    max_exclusive = true;
    return *this;
  }
  ParamSpec& positive() { return greater_than(0.0); }
  ParamSpec& one_of(std::vector<std::string> c) {
    choices = std::move(c);
    return *this;
  }
  /// The string becomes part of file names in the output directory: empty, or without '/' and
  /// control characters, not starting with '.' (nothing outside the directory, nothing hidden).
  ParamSpec& plain_file_name() {
    file_name = true;
    return *this;
  }
  ParamSpec& may_change_on_restart() {
    restart_free = true;
    return *this;
  }
  ParamSpec& list_length(std::size_t n) {
    length = n;
    return *this;
  }

  [[nodiscard]] bool required() const { return !default_value.has_value(); }
  /// Human description of what is allowed: "real > 0", "one of \"a\", \"b\"", ...
  [[nodiscard]] std::string expectation() const;
  /// Empty if `value` (already of the right type) satisfies range, choices and length;
  /// otherwise what is wrong, e.g. "must be > 0".
  [[nodiscard]] std::string violation(const ParamValue& value) const;
};

/// One TOML table of the deck, e.g. "run" or "heat.initial". A repeated section is an array
/// of tables ([[path]]) that may appear zero or more times.
struct SectionSpec {
  std::string path;
  std::string doc;
  std::string owner;  ///< module that reads it, for the reference ("run", "heat", ...)
  bool repeated = false;
  /// An optional section is either given whole or left out: when absent, nothing is filled in
  /// and its required keys are not asked for (Deck::has_section tells which).
  bool optional = false;
  /// Every key of this section and of the sections below it may change on restart (output
  /// settings; see ParamSpec::restart_free).
  bool restart_free = false;
  std::vector<ParamSpec> params;

  SectionSpec& may_change_on_restart() {
    restart_free = true;
    return *this;
  }

  ParamSpec& add(std::string name, ParamType type, std::string doc);
  ParamSpec& add_bool(std::string name, std::string doc) {
    return add(std::move(name), ParamType::boolean, std::move(doc));
  }
  ParamSpec& add_int(std::string name, std::string doc) {
    return add(std::move(name), ParamType::integer, std::move(doc));
  }
  ParamSpec& add_real(std::string name, std::string doc) {
    return add(std::move(name), ParamType::real, std::move(doc));
  }
  ParamSpec& add_string(std::string name, std::string doc) {
    return add(std::move(name), ParamType::string, std::move(doc));
  }
  ParamSpec& add_int_list(std::string name, std::string doc) {
    return add(std::move(name), ParamType::integer_list, std::move(doc));
  }
  ParamSpec& add_real_list(std::string name, std::string doc) {
    return add(std::move(name), ParamType::real_list, std::move(doc));
  }
  ParamSpec& add_string_list(std::string name, std::string doc) {
    return add(std::move(name), ParamType::string_list, std::move(doc));
  }

  [[nodiscard]] const ParamSpec* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
};

/// The sections a deck may contain, in declaration order.
class Schema {
 public:
  /// Declares a new section (throws std::logic_error if `path` is already declared).
  SectionSpec& section(std::string path, std::string doc, std::string owner, bool repeated = false);
  [[nodiscard]] const SectionSpec* find(std::string_view path) const;
  [[nodiscard]] const std::deque<SectionSpec>& sections() const noexcept { return sections_; }
  /// Paths of the sections directly below `parent` ("" for top level), e.g. {"run", "heat"}.
  [[nodiscard]] std::vector<std::string> children(std::string_view parent) const;
  /// Full key paths of every parameter ("run.steps", ...), for "did you mean" across sections.
  [[nodiscard]] std::vector<std::string> all_keys() const;
  /// Whether the full key path `key` ("md.thermo.every"; an index of a repeated section, as in
  /// "md.pair.coeff[1].sigma", is ignored) may differ between a checkpoint and its restart: the
  /// key is declared so, or its section or a section above it is. False for unknown keys.
  [[nodiscard]] bool may_change_on_restart(std::string_view key) const;

 private:
  std::deque<SectionSpec> sections_;  // deque: references stay valid as sections are added
};

}  // namespace stratus
