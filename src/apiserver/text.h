// Small text helpers shared by the request parsers (selectors, Accept headers).
#pragma once

#include <cctype>
#include <string_view>

namespace tessera::apiserver {

// `text` without leading and trailing white space.
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return text;
}

}  // namespace tessera::apiserver
