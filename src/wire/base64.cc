#include "wire/base64.h"

#include <cstdint>

namespace tessera::wire {

namespace {

constexpr std::string_view kStandardAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode(std::string_view bytes, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(alphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(buffer << (6 - bits)) & 0x3F]);
  while (pad && out.size() % 4 != 0) out.push_back('=');
  return out;
}

int sextet(char c, bool url) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || (url && c == '-')) return 62;
  if (c == '/' || (url && c == '_')) return 63;
  return -1;
}

bool is_base64_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::optional<std::string> decode(std::string_view text, bool url) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int bit_count = 0;
  size_t digits = 0;
  bool padding_seen = false;
  for (char c : text) {
    if (!url && is_base64_space(c)) continue;
    if (c == '=') {
      padding_seen = true;
      continue;
    }
    const int value = sextet(c, url);
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

}  // namespace

std::string encode_base64(std::string_view bytes) { return encode(bytes, kStandardAlphabet, true); }

std::string encode_base64url(std::string_view bytes) { return encode(bytes, kUrlAlphabet, false); }

std::optional<std::string> decode_base64(std::string_view text) { return decode(text, false); }

std::optional<std::string> decode_base64url(std::string_view text) { return decode(text, true); }

}  // namespace tessera::wire
