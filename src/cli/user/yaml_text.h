// JSON values written as YAML, the way kubectl prints objects: maps and lists in block style,
// strings quoted only where YAML would read them as something else (a number, a boolean, null).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessera::cli {

std::string yaml_text(const nlohmann::json& value);

}  // namespace tessera::cli
