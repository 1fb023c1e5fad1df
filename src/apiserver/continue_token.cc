#include "apiserver/continue_token.h"

#include <nlohmann/json.hpp>

#include "wire/base64.h"

namespace tessera::apiserver {

std::string encode_continue_token(const ContinuePoint& point) {
  std::string start = point.namespace_name.empty() ? point.name : point.namespace_name + "/" + point.name;
  start.push_back('\0');
  const nlohmann::json token = {{"v", "meta.k8s.io/v1"}, {"rv", point.revision}, {"start", start}};
  return wire::encode_base64url(token.dump());
}

std::optional<ContinuePoint> decode_continue_token(std::string_view token) {
  std::optional<std::string> text = wire::decode_base64url(token);
  if (!text) return std::nullopt;
  const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("v") || parsed["v"] != "meta.k8s.io/v1" || !parsed.contains("rv") ||
      !parsed["rv"].is_number_unsigned() || !parsed.contains("start") || !parsed["start"].is_string()) {
    return std::nullopt;
  }
  ContinuePoint point;
  point.revision = parsed["rv"].get<uint64_t>();
  std::string start = parsed["start"].get<std::string>();
  if (!start.empty() && start.back() == '\0') start.pop_back();
  const size_t slash = start.find('/');
  if (slash == std::string::npos) {
    point.name = start;
  } else {
    point.namespace_name = start.substr(0, slash);
    point.name = start.substr(slash + 1);
  }
  if (point.revision == 0 || point.name.empty()) return std::nullopt;
  return point;
}

}  // namespace tessera::apiserver
