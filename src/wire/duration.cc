#include "wire/duration.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace tessera::wire {

namespace {

struct DurationUnit {
  std::string_view text;
  double seconds;
};
// Go takes both micro signs: U+00B5 (micro) and U+03BC (Greek mu).
constexpr DurationUnit kDurationUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\u00b5s", 1e-6}, {"\u03bcs", 1e-6},
                                           {"ms", 1e-3}, {"s", 1},     {"m", 60},         {"h", 3600}};

bool is_duration_digit(char c) { return c >= '0' && c <= '9'; }

// Reads digits[.digits] or .digits from the front of `text`; nullopt when there is no digit.
std::optional<double> take_decimal(std::string_view& text) {
  size_t end = 0;
  size_t digit_count = 0;
  for (; end < text.size() && is_duration_digit(text[end]); ++end) ++digit_count;
  if (end < text.size() && text[end] == '.') {
    for (++end; end < text.size() && is_duration_digit(text[end]); ++end) ++digit_count;
  }
  if (digit_count == 0) return std::nullopt;
  std::string digits(text.substr(0, end));
  if (digits.ends_with('.')) digits.pop_back();  // "5." is 5; from_chars wants a digit after '.'
  double value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);  // locale-independent
  text.remove_prefix(end);
  return value;
}

std::optional<double> read_duration(std::string_view text) {
  double sign = 1;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  if (text == "0") return 0.0;
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    std::optional<double> number = take_decimal(text);
    if (!number) return std::nullopt;
    const DurationUnit* unit = nullptr;
    for (const DurationUnit& candidate : kDurationUnits) {
      // The longest unit that matches: "ms" before "m".
      if (text.starts_with(candidate.text) && (unit == nullptr || candidate.text.size() > unit->text.size())) {
        unit = &candidate;
      }
    }
    if (unit == nullptr) return std::nullopt;
    text.remove_prefix(unit->text.size());
    total += *number * unit->seconds;
  }
  if (!std::isfinite(total)) return std::nullopt;
  return sign * total;
}

}  // namespace

Result<double> parse_duration_seconds(std::string_view text) {
  std::optional<double> seconds = read_duration(text);
  if (!seconds) {
    return Error{
        fmt::format("'{}' is not a duration: expected numbers with units (ns, us, ms, s, m, h), "
                    "as in \"90s\", \"10m\" or \"1h30m\"",
                    text)};
  }
  return *seconds;
}

std::string human_duration(std::chrono::seconds duration) {
  const int64_t seconds = duration.count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return fmt::format("{}s", seconds);
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return seconds % 60 == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, seconds % 60);
  }
  if (minutes < 180) return fmt::format("{}m", minutes);
  const int64_t hours = seconds / 3600;
  if (hours < 8) return minutes % 60 == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, minutes % 60);
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, hours % 24);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    const int64_t days = (hours / 24) % 365;
    return days == 0 ? fmt::format("{}y", hours / 24 / 365) : fmt::format("{}y{}d", hours / 24 / 365, days);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

}  // namespace tessera::wire
