#include "kube/base64.h"

#include <cctype>
#include <cstdint>

namespace tessera::kube {
namespace {

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int bit_count = 0;
  int digits = 0;
  bool padding_seen = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      padding_seen = true;
      continue;
    }
    const int value = sextet(c);
    if (value < 0 || padding_seen) return std::nullopt;  // data after '=' is malformed too
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    ++digits;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xFF));
    }
  }
  // One leftover digit carries fewer than 8 bits: not a whole byte.
  if (digits % 4 == 1) return std::nullopt;
  return out;
}

}  // namespace tessera::kube
