// Small text helpers shared by the deck checker and the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stratus {

/// Levenshtein distance between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "a, b, c" (each item quoted with `quote` on both sides).
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ",
                 std::string_view quote = "");

/// `text` as a double-quoted string that is valid both in TOML (a basic string) and in JSON:
/// `"` and `\` escaped, newline, tab and carriage return as \n \t \r, other control
/// characters and DEL as \u00XX.
std::string quoted_string(std::string_view text);

}  // namespace stratus
