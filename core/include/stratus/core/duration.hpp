// Wall-clock durations as users write them in decks, on the command line and as Slurm prints
// them: "90", "90s", "15min", "2h", "1.5h", "1:30:00", "1-02:00:00".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stratus {

/// Seconds in `text`, or nothing when it is not a duration. Accepted: a non-negative number
/// with an optional unit (s, min, h, d; no unit means seconds), or Slurm's clock forms MM:SS,
/// HH:MM:SS and D-HH:MM:SS.
std::optional<double> parse_duration(std::string_view text);

/// What parse_duration accepts, for error messages.
inline constexpr const char* kDurationHelp =
    "a duration such as \"90s\", \"15min\", \"2h\", \"1:30:00\" or \"1-00:00:00\"";

/// "1 h 02 min 03 s", "4.2 s": a readable duration for logs.
std::string format_duration(double seconds);

}  // namespace stratus
