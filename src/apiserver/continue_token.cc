#include "apiserver/continue_token.h"

#include <nlohmann/json.hpp>

namespace tessera::apiserver {

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (6 - bits)) & 0x3F]);
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    const size_t value = kAlphabet.find(c == '+' ? '-' : c == '/' ? '_' : c);
    if (value == std::string_view::npos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace

std::string encode_continue_token(const ContinuePoint& point) {
  std::string start = point.namespace_name.empty() ? point.name : point.namespace_name + "/" + point.name;
  start.push_back('\0');
  const nlohmann::json token = {{"v", "meta.k8s.io/v1"}, {"rv", point.revision}, {"start", start}};
  return base64url_encode(token.dump());
}

std::optional<ContinuePoint> decode_continue_token(std::string_view token) {
  std::optional<std::string> text = base64url_decode(token);
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
