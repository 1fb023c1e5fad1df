// Time as the Kubernetes API writes it: metav1.Time (RFC 3339 in UTC, whole seconds) and
// metav1.MicroTime (the same with microseconds), and RFC 3339 read back with any offset.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tessera::wire {

using WallClock = std::chrono::system_clock;

// "2026-11-21T10:00:00Z": whole seconds, rounded toward the past; years outside 0001-9999 (and a
// non-finite time) are clamped into them, as four digits are all RFC 3339 writes.
std::string format_time(double unix_seconds);
std::string format_time(WallClock::time_point time);
// "2026-11-21T10:00:00.123456Z".
std::string format_micro_time(WallClock::time_point time);

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), 'T' and 'Z' in either case: seconds since the
// epoch with the fraction kept. Errors quote the text and say what was expected.
Result<double> parse_time(std::string_view text);
// The same, as a point in time (microsecond precision).
Result<WallClock::time_point> parse_time_point(std::string_view text);

}  // namespace tessera::wire
