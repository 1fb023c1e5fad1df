// The JSONPath subset that CRD additionalPrinterColumns use: `.a.b.c`, `.items[0].name`,
// `.a[*].b`, and filters `[?(@.type=="Scheduled")]` (== or !=, quoted strings or numbers).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace tessera::apiserver {

// The values `path` selects in `root` (none when a step is missing); nullopt when the path does
// not parse. Braces around the path ("{.spec.x}") are accepted.
std::optional<std::vector<nlohmann::json>> evaluate_json_path(const nlohmann::json& root, std::string_view path);

}  // namespace tessera::apiserver
