#include "stratus/io/deck.hpp"

#include "stratus/core/text.hpp"
#include "stratus/core/version.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stratus::io {

std::string Origin::str() const {
  if (!option.empty()) return option;
  if (is_default) return "default";
  if (line > 0) return fmt::format("{}:{}:{}", file, line, column);
  return file;
}

std::string DeckProblem::str() const {
  if (key.empty()) return fmt::format("{}: {}", where.str(), message);
  return fmt::format("{}: {}: {}", where.str(), key, message);
}

namespace {

std::string join_problems(const std::vector<DeckProblem>& problems) {
  std::string out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) out += "\n";
    out += problems[i].str();
  }
  if (problems.size() > 1) out += fmt::format("\n({} problems in the deck)", problems.size());
  return out;
}

}  // namespace

DeckError::DeckError(std::vector<DeckProblem> problems, std::source_location where)
    : InputError(join_problems(problems), where), problems_(std::move(problems)) {}

// ---------------------------------------------------------------------------------------------
// Deck accessors
// ---------------------------------------------------------------------------------------------

bool Deck::has(std::string_view key) const { return entries_.find(key) != entries_.end(); }

bool Deck::has_section(std::string_view path) const {
  const std::string prefix = std::string(path) + ".";
  auto it = entries_.lower_bound(prefix);
  return it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

std::size_t Deck::count(std::string_view repeated_section) const {
  auto it = counts_.find(repeated_section);
  return it == counts_.end() ? 0 : it->second;
}

const ParamValue& Deck::value(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end())
    throw std::logic_error(fmt::format("deck key '{}' is not declared in the schema", key));
  return it->second.value;
}

void Deck::throw_type_mismatch(std::string_view key) const {
  throw std::logic_error(fmt::format("deck key '{}' read with the wrong type", key));
}

void Deck::throw_unmapped_choice(std::string_view key, const std::string& value) const {
  throw std::logic_error(
      fmt::format("deck key '{}': value '{}' has no typed counterpart in the code", key, value));
}

const Origin& Deck::origin(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end())
    throw std::logic_error(fmt::format("deck key '{}' is not declared in the schema", key));
  return it->second.origin;
}

bool Deck::differs_from_default(std::string_view key) const {
  if (origin(key).is_default) return false;
  const auto dot = key.rfind('.');
  std::string section(key.substr(0, dot));
  if (const auto bracket = section.rfind('[');
      bracket != std::string::npos && section.back() == ']')
    section.erase(bracket);  // "path[i]" of a repeated section
  const SectionSpec* s = schema_.find(section);
  const ParamSpec* p = s != nullptr ? s->find(key.substr(dot + 1)) : nullptr;
  return p == nullptr || !p->default_value ||
         !(*p->default_value == entries_.find(key)->second.value);
}

DeckError Deck::error_at(std::string_view key, const std::string& message,
                         std::source_location where) const {
  return DeckError({DeckProblem{origin(key), std::string(key), message}}, where);
}

std::string Deck::to_toml() const {
  std::string out =
      fmt::format("# Resolved deck (stratus {}): every default filled in.\n", stratus_version());
  auto emit_params = [&](const SectionSpec& s, const std::string& prefix) {
    std::size_t width = 0;
    for (const auto& p : s.params) width = std::max(width, p.name.size());
    for (const auto& p : s.params) {
      auto it = entries_.find(prefix + p.name);
      if (it == entries_.end()) continue;
      std::string line =
          fmt::format("{:<{}} = {}", p.name, width, stratus::to_toml(it->second.value));
      if (it->second.origin.is_default)
        line = fmt::format("{:<40} # default", line);
      else if (!it->second.origin.option.empty())
        line = fmt::format("{:<40} # {}", line, it->second.origin.option);
      out += line + "\n";
    }
  };
  for (const auto& s : schema_.sections()) {
    if (s.repeated) {
      for (std::size_t i = 0; i < count(s.path); ++i) {
        out += fmt::format("\n[[{}]]\n", s.path);
        emit_params(s, fmt::format("{}[{}].", s.path, i));
      }
    } else if (!s.params.empty() && has_section(s.path)) {
      out += fmt::format("\n[{}]\n", s.path);
      emit_params(s, s.path + ".");
    }
  }
  return out;
}

std::vector<Deck::Difference> Deck::differences(const Deck& other) const {
  std::vector<Difference> out;
  auto a = entries_.begin();
  auto b = other.entries_.begin();
  const std::string absent = "(absent)";
  while (a != entries_.end() || b != other.entries_.end()) {
    if (b == other.entries_.end() || (a != entries_.end() && a->first < b->first)) {
      out.push_back({a->first, stratus::to_toml(a->second.value), absent});
      ++a;
    } else if (a == entries_.end() || b->first < a->first) {
      out.push_back({b->first, absent, stratus::to_toml(b->second.value)});
      ++b;
    } else {
      if (!(a->second.value == b->second.value))
        out.push_back(
            {a->first, stratus::to_toml(a->second.value), stratus::to_toml(b->second.value)});
      ++a;
      ++b;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------------------------

namespace {

/// Collects problems while walking the TOML tree.
class Checker {
 public:
  Checker(const std::string& file, const Schema& schema,
          const std::map<std::string, std::string>& override_options)
      : file_(file), schema_(schema), overrides_(override_options) {}

  std::vector<DeckProblem> problems;
  std::map<std::string, std::pair<ParamValue, Origin>> values;
  std::map<std::string, std::size_t> counts;

  Origin origin_of(const std::string& key, const toml::source_region& src) const {
    Origin o;
    o.file = file_;
    // A value set on the command line, or a table that an override created.
    for (const auto& [k, option] : overrides_) {
      if (k == key || k.rfind(key + ".", 0) == 0) {
        if (k == key || src.begin.line == 0) {
          o.option = option;
          return o;
        }
      }
    }
    o.line = static_cast<int>(src.begin.line);
    o.column = static_cast<int>(src.begin.column);
    return o;
  }

  Origin file_start() const {
    Origin o;
    o.file = file_;
    o.line = 1;
    o.column = 1;
    return o;
  }

  void problem(Origin where, std::string key, std::string message) {
    problems.push_back(DeckProblem{std::move(where), std::move(key), std::move(message)});
  }

  /// Checks the top-level table; `only` restricts the walk to one section (the [run] pass).
  void check_root(const toml::table& root, std::string_view only = {}) {
    for (auto&& [k, node] : root) {
      const std::string name(k.str());
      if (!only.empty() && name != only) continue;
      const std::string key = name;
      if (const SectionSpec* s = schema_.find(key)) {
        check_section_node(*s, key, node, k.source());
      } else {
        unknown(key, "", schema_.children(""), {}, origin_of(key, k.source()));
      }
    }
    // Sections with required keys that are absent altogether.
    for (const auto& s : schema_.sections()) {
      if (!only.empty() && s.path != only) continue;
      if (s.repeated || s.optional || s.params.empty() || present(root, s.path)) continue;
      // Defaults for an absent section; its required keys are reported missing.
      fill_section(s, s.path, nullptr, file_start());
    }
  }

 private:
  static bool present(const toml::table& root, const std::string& path) {
    return root.at_path(path).node() != nullptr;
  }

  void check_section_node(const SectionSpec& s, const std::string& key, const toml::node& node,
                          const toml::source_region& key_src) {
    if (s.repeated) {
      const auto* arr = node.as_array();
      if (!arr || !arr->is_array_of_tables()) {
        problem(origin_of(key, node.source()), key,
                fmt::format("expected an array of tables [[{}]], found {}", key, describe(node)));
        return;
      }
      counts[s.path] = arr->size();
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const auto& t = *arr->get(i)->as_table();
        fill_section(s, fmt::format("{}[{}]", key, i), &t, origin_of(key, t.source()));
      }
      return;
    }
    const auto* t = node.as_table();
    if (!t) {
      problem(origin_of(key, key_src), key,
              fmt::format("expected a table [{}], found {}", key, describe(node)));
      return;
    }
    fill_section(s, key, t, origin_of(key, t->source()));
  }

  /// Checks one table against its section spec (t == nullptr: the table is absent).
  void fill_section(const SectionSpec& s, const std::string& prefix, const toml::table* t,
                    const Origin& table_origin) {
    if (t) {
      for (auto&& [k, node] : *t) {
        const std::string name(k.str());
        const std::string key = prefix + "." + name;
        if (const ParamSpec* p = s.find(name)) {
          check_value(*p, key, node);
        } else if (const SectionSpec* sub = schema_.find(s.path + "." + name)) {
          check_section_node(*sub, key, node, k.source());
        } else {
          unknown(key, s.path, s.names(), schema_.children(s.path), origin_of(key, k.source()));
        }
      }
    }
    for (const auto& p : s.params) {
      const std::string key = prefix + "." + p.name;
      if (t && t->contains(p.name)) continue;
      if (p.default_value) {
        Origin o;
        o.file = file_;
        o.is_default = true;
        values[key] = {*p.default_value, o};
      } else {
        problem(table_origin, key,
                fmt::format("missing required key '{}' ({}{}{}) in [{}]", p.name, p.expectation(),
                            p.unit_name.empty() ? "" : ", unit ", p.unit_name, prefix));
      }
    }
  }

  /// An unknown key or section: suggests a near-miss at this level, else the same key in
  /// another section, else lists what is allowed here.
  void unknown(const std::string& key, const std::string& section_path,
               const std::vector<std::string>& keys, const std::vector<std::string>& subsections,
               Origin where) {
    const auto dot = key.rfind('.');
    const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
    // Candidates at this level: bare names to match against, labels to print.
    std::vector<std::string> names;
    std::vector<std::string> labels;
    for (const auto& k : keys) {
      names.push_back(k);
      labels.push_back(section_path.empty() ? "[" + k + "]" : "'" + k + "'");
    }
    for (const auto& sub : subsections) {
      names.push_back(sub);
      labels.push_back("[" + section_path + "." + sub + "]");
    }
    std::string msg = section_path.empty()
                          ? fmt::format("unknown section [{}]", name)
                          : fmt::format("unknown key '{}' in [{}]", name, section_path);
    const std::string near = closest_match(name, names);
    std::string home;
    for (const auto& full : schema_.all_keys())
      if (home.empty() && full.substr(full.rfind('.') + 1) == name)
        home = full.substr(0, full.rfind('.'));
    if (!near.empty()) {
      const auto at =
          static_cast<std::size_t>(std::find(names.begin(), names.end(), near) - names.begin());
      msg += fmt::format("; did you mean {}?", labels[at]);
    } else if (!home.empty()) {
      msg += fmt::format("; '{}' belongs in [{}]", name, home);
    } else if (!labels.empty()) {
      msg += fmt::format("; expected one of {}", join(labels));
    }
    problem(std::move(where), key, msg);
  }

  static std::string describe(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::string:
        return fmt::format("string \"{}\"", node.value<std::string>().value_or(""));
      case toml::node_type::integer:
        return fmt::format("integer {}", node.value<std::int64_t>().value_or(0));
      case toml::node_type::floating_point:
        return fmt::format("real {}", node.value<double>().value_or(0));
      case toml::node_type::boolean:
        return node.value<bool>().value_or(false) ? "boolean true" : "boolean false";
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return fmt::format("an array of {} elements", node.as_array()->size());
      case toml::node_type::date:
        return "a date";
      case toml::node_type::time:
        return "a time";
      case toml::node_type::date_time:
        return "a date-time";
      default:
        return "nothing";
    }
  }

  /// A number for a real key: a real as written, an integer only when a double holds it
  /// exactly (beyond 2^53 it would silently become another number). Empty otherwise.
  static std::optional<double> exact_real(const toml::node& node) {
    if (node.is_floating_point()) return *node.value_exact<double>();
    const std::int64_t i = *node.value_exact<std::int64_t>();
    constexpr std::int64_t kExact = std::int64_t{1} << 53;
    if (i >= -kExact && i <= kExact) return static_cast<double>(i);
    return std::nullopt;
  }

  /// The problem of an integer a real key cannot hold exactly.
  void inexact(const Origin& where, const std::string& key, const toml::node& node,
               const std::string& element) {
    problem(where, key,
            fmt::format("expected a real, found {}{}: beyond 2^53 an integer has no exact double; "
                        "write the value as a real (e.g. {:.16e})",
                        describe(node), element,
                        static_cast<double>(*node.value_exact<std::int64_t>())));
  }

  void check_value(const ParamSpec& p, const std::string& key, const toml::node& node) {
    const Origin where = origin_of(key, node.source());
    auto wrong_type = [&] {
      problem(where, key, fmt::format("expected {}, found {}", p.expectation(), describe(node)));
    };
    ParamValue v;
    switch (p.type) {
      case ParamType::boolean:
        if (!node.is_boolean()) return wrong_type();
        v = *node.value<bool>();
        break;
      case ParamType::integer:
        if (!node.is_integer()) return wrong_type();
        v = *node.value<std::int64_t>();
        break;
      case ParamType::real: {
        if (!node.is_number()) return wrong_type();
        const auto real = exact_real(node);
        if (!real) return inexact(where, key, node, "");
        v = *real;
        break;
      }
      case ParamType::string:
        if (!node.is_string()) return wrong_type();
        v = *node.value<std::string>();
        break;
      case ParamType::integer_list:
      case ParamType::real_list:
      case ParamType::string_list: {
        const auto* arr = node.as_array();
        if (!arr) return wrong_type();
        std::vector<std::int64_t> ints;
        std::vector<double> reals;
        std::vector<std::string> strings;
        for (std::size_t i = 0; i < arr->size(); ++i) {
          const toml::node& e = *arr->get(i);
          const bool ok = p.type == ParamType::integer_list ? e.is_integer()
                          : p.type == ParamType::real_list  ? e.is_number()
                                                            : e.is_string();
          if (!ok) {
            problem(origin_of(key, e.source()), key,
                    fmt::format("expected {}, found {} at element {}", p.expectation(), describe(e),
                                i));
            return;
          }
          if (p.type == ParamType::integer_list) ints.push_back(*e.value<std::int64_t>());
          if (p.type == ParamType::real_list) {
            const auto real = exact_real(e);
            if (!real)
              return inexact(origin_of(key, e.source()), key, e, fmt::format(" at element {}", i));
            reals.push_back(*real);
          }
          if (p.type == ParamType::string_list) strings.push_back(*e.value<std::string>());
        }
        if (p.type == ParamType::integer_list) v = ints;
        if (p.type == ParamType::real_list) v = reals;
        if (p.type == ParamType::string_list) v = strings;
        break;
      }
    }
    if (p.type == ParamType::real && !std::isfinite(std::get<double>(v))) {
      problem(where, key, fmt::format("expected {}, found {}", p.expectation(), describe(node)));
      return;
    }
    if (p.type == ParamType::real_list) {
      const auto& list = std::get<std::vector<double>>(v);
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (!std::isfinite(list[i])) {
          problem(origin_of(key, node.as_array()->get(i)->source()), key,
                  fmt::format("expected {}, found {} at element {}", p.expectation(),
                              describe(*node.as_array()->get(i)), i));
          return;
        }
      }
    }
    if (const std::string bad = p.violation(v); !bad.empty()) {
      problem(where, key, fmt::format("{}, found {}", bad, to_toml(v)));
      return;
    }
    values[key] = {std::move(v), where};
  }

  const std::string& file_;
  const Schema& schema_;
  const std::map<std::string, std::string>& overrides_;
};

/// Applies one override to the tree; returns false (and records why) if it cannot be applied.
bool apply_override(toml::table& root, const Override& o, std::vector<DeckProblem>& problems) {
  auto fail = [&](const std::string& msg) {
    Origin where;
    where.option = o.option;
    problems.push_back(DeckProblem{where, "", msg});
    return false;
  };
  if (o.key.empty() && o.value.empty()) return fail("expected section.key=value, found nothing");
  if (o.option.find('=') == std::string::npos && !o.literal)
    return fail("expected section.key=value, found no '='");
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = o.key.find('.', start);
    parts.push_back(o.key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() < 2 ||
      std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); }))
    return fail(fmt::format("expected section.key=value, found key '{}'", o.key));
  if (o.value.empty() && !o.literal) return fail(fmt::format("no value given for '{}'", o.key));

  toml::table parsed;
  if (o.literal) {
    parsed = toml::table{{"v", o.value}};
  } else {
    try {
      parsed = toml::parse("v = " + o.value);
    } catch (const toml::parse_error&) {
      parsed = toml::table{{"v", o.value}};  // not TOML: a bare word (--set heat.boundary=neumann)
    }
  }
  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* next = t->get(parts[i]);
    if (!next) {
      t->insert(parts[i], toml::table{});
      next = t->get(parts[i]);
    }
    if (!next->is_table())
      return fail(
          fmt::format("'{}' is not a table in the deck; --set cannot address it",
                      fmt::join(parts.begin(), parts.begin() + static_cast<long>(i) + 1, ".")));
    t = next->as_table();
  }
  parsed.get("v")->visit([&](auto&& n) { t->insert_or_assign(parts.back(), n); });
  return true;
}

}  // namespace

std::string read_deck_file(MPI_Comm comm, const std::string& path) {
  return read_text_file(comm, path, "deck file (TOML)");
}

std::string read_text_file(MPI_Comm comm, const std::string& path, const std::string& what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  std::string failure;
  if (rank == 0) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      failure = fmt::format("{}: no such {}", path, what);
    } else if (std::filesystem::is_directory(path, ec)) {
      failure = fmt::format("{}: is a directory, expected a {}", path, what);
    } else {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream buffer;
      buffer << in.rdbuf();
      if (!in && !in.eof()) failure = fmt::format("{}: cannot read the {}", path, what);
      text = buffer.str();
    }
  }
  // One broadcast carries either the failure or the text, so every rank throws the same error.
  std::string payload = failure.empty() ? "T" + text : "F" + failure;
  long long size = static_cast<long long>(payload.size());
  MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm);
  payload.resize(static_cast<std::size_t>(size));
  MPI_Bcast(payload.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  if (payload[0] == 'F') throw InputError(payload.substr(1));
  return payload.substr(1);
}

Override Override::from_set(const std::string& text) {
  Override o;
  o.option = "--set " + text;
  const auto eq = text.find('=');
  o.key = text.substr(0, eq);
  if (eq != std::string::npos) o.value = text.substr(eq + 1);
  return o;
}

Override Override::literal_string(std::string key, std::string value, std::string option) {
  Override o;
  o.key = std::move(key);
  o.value = std::move(value);
  o.literal = true;
  o.option = std::move(option);
  return o;
}

Deck load_deck(const std::string& path, const std::string& text,
               const std::vector<std::string>& set_options, Schema schema,
               const std::function<void(const std::string& solver, Schema&)>& add_solver_sections) {
  std::vector<Override> overrides;
  for (const auto& s : set_options) overrides.push_back(Override::from_set(s));
  return load_deck(path, text, overrides, std::move(schema), add_solver_sections);
}

Deck load_deck(const std::string& path, const std::string& text,
               const std::vector<Override>& overrides, Schema schema,
               const std::function<void(const std::string& solver, Schema&)>& add_solver_sections) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    Origin o;
    o.file = path;
    o.line = static_cast<int>(e.source().begin.line);
    o.column = static_cast<int>(e.source().begin.column);
    throw DeckError({DeckProblem{o, "", fmt::format("TOML syntax error: {}", e.description())}});
  }

  std::vector<DeckProblem> override_problems;
  std::map<std::string, std::string> override_options;
  for (const auto& o : overrides)
    if (apply_override(root, o, override_problems)) override_options[o.key] = o.option;
  if (!override_problems.empty()) throw DeckError(std::move(override_problems));

  // Pass 1: [run] alone, to learn the solver.
  {
    // Other problems in [run] are reported by pass 2, with the solver's sections known.
    Checker run_check(path, schema, override_options);
    run_check.check_root(root, "run");
    const bool solver_ok = run_check.values.count("run.solver") > 0;
    if (!solver_ok) throw DeckError(std::move(run_check.problems));
  }
  add_solver_sections(*root.at_path("run.solver").value<std::string>(), schema);

  // Pass 2: everything.
  Checker check(path, schema, override_options);
  check.check_root(root);
  if (!check.problems.empty()) {
    std::stable_sort(
        check.problems.begin(), check.problems.end(), [](const auto& a, const auto& b) {
          return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
        });
    throw DeckError(std::move(check.problems));
  }

  Deck deck;
  deck.path_ = path;
  deck.schema_ = std::move(schema);
  for (auto& [key, vo] : check.values)
    deck.entries_[key] = Deck::Entry{std::move(vo.first), vo.second};
  for (auto& [key, n] : check.counts) deck.counts_[key] = n;
  return deck;
}

}  // namespace stratus::io
