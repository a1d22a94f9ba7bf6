// Input decks: TOML files checked against the schema before any work starts.
//
// load_deck() parses the file, applies `--set section.key=value` overrides, checks the [run]
// section (which names the solver), lets the caller add the solver's sections to the schema,
// and checks everything else. Every problem is reported at once, each with file:line:column
// (or the --set option it came from), the key's full path, what was expected and what was
// found, and a "did you mean" for near-miss names. The result is a fully resolved Deck: every
// default filled in, every value's origin known.
#pragma once

#include "stratus/core/error.hpp"
#include "stratus/core/schema.hpp"

#include <mpi.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stratus::io {

/// Where a deck value came from.
struct Origin {
  std::string file;  ///< deck path as given on the command line
  int line = 0;      ///< 1-based; 0 when not from the file
  int column = 0;
  std::string option;  ///< "--set run.steps=10" when given on the command line
  bool is_default = false;

  /// "deck.toml:3:9", "--set run.steps=10" or "default".
  [[nodiscard]] std::string str() const;
};

/// One problem found in a deck.
struct DeckProblem {
  Origin where;
  std::string key;  ///< full path, e.g. "heat.initial.type" ("" for a syntax error)
  std::string message;
  [[nodiscard]] std::string str() const;  ///< "deck.toml:3:9: heat.dt: must be > 0, found -1"
};

/// A deck was rejected: carries every problem found. Exit code 2.
class DeckError : public InputError {
 public:
  explicit DeckError(std::vector<DeckProblem> problems,
                     std::source_location where = std::source_location::current());
  [[nodiscard]] const std::vector<DeckProblem>& problems() const noexcept { return problems_; }

 private:
  std::vector<DeckProblem> problems_;
};

/// One command-line override of a deck value.
struct Override {
  std::string key;       ///< "section.key"
  std::string value;     ///< TOML value text, or the literal string when `literal`
  bool literal = false;  ///< take `value` as a string as it is (e.g. a directory name)
  std::string option;    ///< as the user wrote it, for messages: "--set run.steps=10"

  /// From "--set section.key=value": a value that is not valid TOML is taken as a string.
  /// A text without '=' keeps the whole text as key and an empty value (reported by load_deck).
  static Override from_set(const std::string& text);
  /// A string value given by a dedicated option, e.g. --output-dir DIR.
  static Override literal_string(std::string key, std::string value, std::string option);
};

/// A checked deck with every default filled in.
class Deck {
 public:
  Deck() = default;

  [[nodiscard]] bool has(std::string_view key) const;
  /// True when the deck has values for section `path` (always, unless the section is optional
  /// and was left out).
  [[nodiscard]] bool has_section(std::string_view path) const;
  [[nodiscard]] bool boolean(std::string_view key) const { return get<bool>(key); }
  [[nodiscard]] std::int64_t integer(std::string_view key) const { return get<std::int64_t>(key); }
  [[nodiscard]] double real(std::string_view key) const { return get<double>(key); }
  [[nodiscard]] const std::string& string(std::string_view key) const {
    return get<std::string>(key);
  }
  [[nodiscard]] const std::vector<std::int64_t>& integer_list(std::string_view key) const {
    return get<std::vector<std::int64_t>>(key);
  }
  [[nodiscard]] const std::vector<double>& real_list(std::string_view key) const {
    return get<std::vector<double>>(key);
  }
  [[nodiscard]] const std::vector<std::string>& string_list(std::string_view key) const {
    return get<std::vector<std::string>>(key);
  }
  /// The enum value of a string key: `names` maps every value the schema allows (its one_of
  /// set) to one. Configuration is turned into typed values once, at setup, so no solver
  /// compares configuration strings afterwards. Throws std::logic_error when the deck holds a
  /// value `names` lacks (the schema and the mapping disagree: a programming error).
  template <class E>
  [[nodiscard]] E choice(std::string_view key,
                         std::initializer_list<std::pair<std::string_view, E>> names) const {
    const std::string& v = string(key);
    for (const auto& [name, e] : names)
      if (v == name) return e;
    throw_unmapped_choice(key, v);
  }

  /// Number of instances of a repeated section ([[path]]); their keys are "path[i].name".
  [[nodiscard]] std::size_t count(std::string_view repeated_section) const;

  /// Where `key`'s value came from. Throws std::logic_error for an undeclared key.
  [[nodiscard]] const Origin& origin(std::string_view key) const;
  /// True when the deck gives `key` a value other than its default (a resolved deck, which
  /// spells every default out, sets only what differs). Throws as origin() does.
  [[nodiscard]] bool differs_from_default(std::string_view key) const;
  /// An error about `key` for checks that need several values (e.g. a grid that cannot be
  /// split over the ranks); the message names the value's origin and the key.
  [[nodiscard]] DeckError error_at(
      std::string_view key, const std::string& message,
      std::source_location where = std::source_location::current()) const;

  /// The resolved deck as TOML: every section of the schema, every key, defaults marked.
  /// Reading it back with load_deck gives the same deck.
  [[nodiscard]] std::string to_toml() const;

  /// One key whose value differs between two decks; "(absent)" where a deck lacks it.
  struct Difference {
    std::string key, before, after;
  };
  /// Every key whose resolved value differs between this deck (before) and `other` (after),
  /// sorted by key. Defaults count as values: a default that changed is a difference.
  [[nodiscard]] std::vector<Difference> differences(const Deck& other) const;

  [[nodiscard]] const Schema& schema() const noexcept { return schema_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Typed access; throws std::logic_error when the key is undeclared or has another type
  /// (a programming error, not an input error: the deck was checked against the schema).
  template <class T>
  [[nodiscard]] const T& get(std::string_view key) const {
    const ParamValue& v = value(key);
    if (const T* p = std::get_if<T>(&v)) return *p;
    throw_type_mismatch(key);
  }

 private:
  friend Deck load_deck(const std::string&, const std::string&, const std::vector<Override>&,
                        Schema, const std::function<void(const std::string&, Schema&)>&);
  struct Entry {
    ParamValue value;
    Origin origin;
  };
  [[nodiscard]] const ParamValue& value(std::string_view key) const;
  [[noreturn]] void throw_type_mismatch(std::string_view key) const;
  [[noreturn]] void throw_unmapped_choice(std::string_view key, const std::string& value) const;

  std::string path_;
  Schema schema_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::size_t, std::less<>> counts_;
};

/// Reads a deck file on rank 0 of `comm` and gives its text to every rank. Throws InputError
/// (on every rank) if it cannot be read. Collective.
std::string read_deck_file(MPI_Comm comm, const std::string& path);

/// The same for any text input file; `what` names it in messages ("LAMMPS data file").
std::string read_text_file(MPI_Comm comm, const std::string& path, const std::string& what);

/// Reads, overrides and checks a deck (see the file comment).
/// - `path`: shown in messages; `text`: the file's contents.
/// - `overrides`: command-line overrides, applied before checking.
/// - `schema`: the sections known before the solver is known; must declare [run] with a
///   required string key `solver`.
/// - `add_solver_sections(solver, schema)`: called once [run] is valid, adds the solver's
///   sections.
/// Throws DeckError listing every problem.
Deck load_deck(const std::string& path, const std::string& text,
               const std::vector<Override>& overrides, Schema schema,
               const std::function<void(const std::string& solver, Schema&)>& add_solver_sections);

/// Same, with `--set` texts ("section.key=value").
Deck load_deck(const std::string& path, const std::string& text,
               const std::vector<std::string>& set_options, Schema schema,
               const std::function<void(const std::string& solver, Schema&)>& add_solver_sections);

}  // namespace stratus::io
