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

}  // namespace stratus
