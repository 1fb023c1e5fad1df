// Time as the Kubernetes API writes it (RFC 3339 in UTC, second precision), ages as kubectl prints
// them, and Go-style durations ("90s", "1h30m") as annotations carry them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::apiserver {

using WallClock = std::chrono::system_clock;

// "2024-05-01T12:00:00Z".
std::string rfc3339(WallClock::time_point time);
// Accepts "...Z" and numeric offsets, with or without fractional seconds.
std::optional<WallClock::time_point> parse_rfc3339(std::string_view text);

// kubectl's age: "45s", "3m12s", "5h", "12d" (apimachinery's duration.HumanDuration).
std::string human_duration(std::chrono::seconds duration);

// A Go time.ParseDuration string: a sequence of decimal numbers with units ns, us, ms, s, m, h.
std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text);

}  // namespace tessera::apiserver
