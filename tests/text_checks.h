// Text checks shared by the report and chart tests.
#pragma once

#include <cctype>
#include <string>

namespace tessera::testing {

inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

// Whether the text holds "nan" or "inf" as a word of its own (not inside "dominant-baseline").
inline bool has_non_finite_token(const std::string& text) {
  const auto is_letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i + 3 <= text.size(); ++i) {
    std::string word = text.substr(i, 3);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word != "nan" && word != "inf") continue;
    const bool starts_word = i == 0 || !is_letter(text[i - 1]);
    const size_t end = word == "inf" && text.compare(i, 8, "Infinity") == 0 ? i + 8 : i + 3;
    const bool ends_word = end >= text.size() || !is_letter(text[end]);
    if (starts_word && ends_word) return true;
  }
  return false;
}

}  // namespace tessera::testing
