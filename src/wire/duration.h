// Durations as Kubernetes objects and kubectl write them.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tessera::wire {

// Go's time.ParseDuration: an optional sign, then one or more decimal numbers each with a unit
// (ns, us or µs, ms, s, m, h), as in "90s", "1h30m", "1.5h", "-2m"; "0" alone needs no unit.
// Errors quote the text and say what was expected.
Result<double> parse_duration_seconds(std::string_view text);

// kubectl's age column: "45s", "3m12s", "5h", "12d" (apimachinery's duration.HumanDuration).
std::string human_duration(std::chrono::seconds duration);

}  // namespace tessera::wire
