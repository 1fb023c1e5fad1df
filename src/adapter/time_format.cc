// Durations (Go's time.ParseDuration) and RFC 3339 timestamps, with calendar arithmetic of our
// own so that no locale or time zone setting of the process changes a result.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "adapter/object_translation.h"

namespace tessera::adapter {

namespace {

struct DurationUnit {
  std::string_view text;
  double seconds;
};
constexpr DurationUnit kDurationUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\u00b5s", 1e-6}, {"\u03bcs", 1e-6},
                                           {"ms", 1e-3}, {"s", 1},     {"m", 60},         {"h", 3600}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads digits[.digits] or .digits from the front of `text`; nullopt when there is no digit.
std::optional<double> take_decimal(std::string_view& text) {
  size_t end = 0;
  size_t digit_count = 0;
  for (; end < text.size() && is_digit(text[end]); ++end) ++digit_count;
  if (end < text.size() && text[end] == '.') {
    for (++end; end < text.size() && is_digit(text[end]); ++end) ++digit_count;
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

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

struct CivilDate {
  int64_t year;
  int64_t month;
  int64_t day;
};

CivilDate civil_from_days(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t day_of_era = days - era * 146097;
  const int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_index = (5 * day_of_year + 2) / 153;
  const int64_t day = day_of_year - (153 * month_index + 2) / 5 + 1;
  const int64_t month = month_index < 10 ? month_index + 3 : month_index - 9;
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

bool is_leap_year(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int64_t days_in_month(int64_t year, int64_t month) {
  constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : kDays[month - 1];
}

// Reads exactly `width` digits from the front of `text`.
std::optional<int64_t> take_fixed(std::string_view& text, size_t width) {
  if (text.size() < width) return std::nullopt;
  int64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  text.remove_prefix(width);
  return value;
}

bool take_char(std::string_view& text, std::string_view allowed) {
  if (text.empty() || allowed.find(text[0]) == std::string_view::npos) return false;
  text.remove_prefix(1);
  return true;
}

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
std::optional<double> read_timestamp(std::string_view text) {
  const auto year = take_fixed(text, 4);
  if (!year || !take_char(text, "-")) return std::nullopt;
  const auto month = take_fixed(text, 2);
  if (!month || !take_char(text, "-")) return std::nullopt;
  const auto day = take_fixed(text, 2);
  if (!day || !take_char(text, "Tt")) return std::nullopt;
  const auto hour = take_fixed(text, 2);
  if (!hour || !take_char(text, ":")) return std::nullopt;
  const auto minute = take_fixed(text, 2);
  if (!minute || !take_char(text, ":")) return std::nullopt;
  const auto second = take_fixed(text, 2);
  if (!second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month) || *hour > 23 || *minute > 59 ||
      *second > 59) {
    return std::nullopt;
  }
  double fraction = 0;
  if (take_char(text, ".")) {
    double scale = 0.1;
    size_t digits = 0;
    while (digits < text.size() && is_digit(text[digits])) {
      fraction += (text[digits] - '0') * scale;
      scale /= 10;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    text.remove_prefix(digits);
  }
  int64_t offset_seconds = 0;
  if (!take_char(text, "Zz")) {
    if (text.empty() || (text[0] != '+' && text[0] != '-')) return std::nullopt;
    const int64_t sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
    const auto offset_hours = take_fixed(text, 2);
    if (!offset_hours || !take_char(text, ":")) return std::nullopt;
    const auto offset_minutes = take_fixed(text, 2);
    if (!offset_minutes || *offset_hours > 23 || *offset_minutes > 59) return std::nullopt;
    offset_seconds = sign * (*offset_hours * 3600 + *offset_minutes * 60);
  }
  if (!text.empty()) return std::nullopt;
  const int64_t local = days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second;
  return static_cast<double>(local - offset_seconds) + fraction;
}

// Years 0001 to 9999, the range RFC 3339 writes with four digits.
constexpr double kFirstSecond = -62135596800.0;  // 0001-01-01T00:00:00Z
constexpr double kLastSecond = 253402300799.0;   // 9999-12-31T23:59:59Z

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

std::string format_utc(int64_t seconds) {
  const int64_t days = floor_div(seconds, 86400);
  const int64_t second_of_day = seconds - days * 86400;
  const CivilDate date = civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", date.year, date.month, date.day, second_of_day / 3600,
                     second_of_day / 60 % 60, second_of_day % 60);
}

double clamp_time(double unix_seconds) {
  if (!std::isfinite(unix_seconds)) return 0;
  return std::clamp(unix_seconds, kFirstSecond, kLastSecond);
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

Result<double> parse_timestamp(std::string_view text) {
  std::optional<double> seconds = read_timestamp(text);
  if (!seconds) {
    return Error{
        fmt::format("'{}' is not an RFC 3339 timestamp: expected YYYY-MM-DDTHH:MM:SS with an optional "
                    "fraction and Z or an offset, as in \"2026-11-21T10:00:00Z\"",
                    text)};
  }
  return *seconds;
}

std::string format_timestamp(double unix_seconds) {
  return format_utc(static_cast<int64_t>(std::floor(clamp_time(unix_seconds))));
}

}  // namespace tessera::adapter
