// Kubernetes resource quantities ("500m", "2", "1.5Gi", "4e3", "128974848") as numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tessera::wire {

// The quantity's value in thousandths ("500m" -> 500, "2" -> 2000, "1Ki" -> 1024000), rounded
// up as the API server does. Errors say what was expected.
Result<int64_t> parse_quantity_milli(std::string_view text);
// The value in whole units, rounded up ("1Gi" -> 1073741824, "100m" -> 1).
Result<int64_t> parse_quantity(std::string_view text);
// Canonical text for a value in thousandths: "500m", "2", "1500m".
std::string format_quantity_milli(int64_t milli);
// Bytes as the largest exact binary suffix: "20Gi", "1536Mi", "1000".
std::string format_bytes(int64_t bytes);

}  // namespace tessera::wire
