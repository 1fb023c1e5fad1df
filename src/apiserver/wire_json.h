// JSON as it goes on the wire. Bytes that are not UTF-8 (a YAML body may carry them, and parse
// errors quote them) are replaced rather than failing the whole response.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessera::apiserver {

inline std::string wire_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tessera::apiserver
