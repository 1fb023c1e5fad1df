// Calendar arithmetic of our own, so that no locale or time zone setting of the process changes a
// result.
#include "wire/timestamp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace tessera::wire {

namespace {

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

bool is_time_digit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `width` digits from the front of `text`.
std::optional<int64_t> take_fixed(std::string_view& text, size_t width) {
  if (text.size() < width) return std::nullopt;
  int64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    if (!is_time_digit(text[i])) return std::nullopt;
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

// Seconds since the epoch and the fraction's microseconds (further digits are dropped).
struct ReadTime {
  int64_t seconds = 0;
  int64_t micros = 0;
  double fraction = 0;
};

std::optional<ReadTime> read_time(std::string_view text) {
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
  ReadTime time;
  if (take_char(text, ".")) {
    double scale = 0.1;
    size_t digits = 0;
    while (digits < text.size() && is_time_digit(text[digits])) {
      time.fraction += (text[digits] - '0') * scale;
      if (digits < 6) time.micros = time.micros * 10 + (text[digits] - '0');
      scale /= 10;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    for (size_t padding = digits; padding < 6; ++padding) time.micros *= 10;
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
  time.seconds = days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second - offset_seconds;
  return time;
}

Error not_a_time(std::string_view text) {
  return Error{
      fmt::format("'{}' is not an RFC 3339 timestamp: expected YYYY-MM-DDTHH:MM:SS with an optional "
                  "fraction and Z or an offset, as in \"2026-11-21T10:00:00Z\"",
                  text)};
}

// Years 0001 to 9999, the range RFC 3339 writes with four digits.
constexpr int64_t kFirstSecond = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kLastSecond = 253402300799;   // 9999-12-31T23:59:59Z

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

// "YYYY-MM-DDTHH:MM:SS" of a second already within the four-digit years.
std::string format_utc_seconds(int64_t seconds) {
  const int64_t days = floor_div(seconds, 86400);
  const int64_t second_of_day = seconds - days * 86400;
  const CivilDate date = civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", date.year, date.month, date.day, second_of_day / 3600,
                     second_of_day / 60 % 60, second_of_day % 60);
}

int64_t clamp_seconds(int64_t seconds) { return std::clamp(seconds, kFirstSecond, kLastSecond); }

}  // namespace

std::string format_time(double unix_seconds) {
  if (!std::isfinite(unix_seconds)) unix_seconds = 0;
  const double clamped =
      std::clamp(std::floor(unix_seconds), static_cast<double>(kFirstSecond), static_cast<double>(kLastSecond));
  return format_utc_seconds(static_cast<int64_t>(clamped)) + "Z";
}

std::string format_time(WallClock::time_point time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time).time_since_epoch().count();
  return format_utc_seconds(clamp_seconds(seconds)) + "Z";
}

std::string format_micro_time(WallClock::time_point time) {
  const int64_t micros = std::chrono::floor<std::chrono::microseconds>(time).time_since_epoch().count();
  const int64_t seconds = floor_div(micros, 1'000'000);
  const int64_t clamped = clamp_seconds(seconds);
  return fmt::format("{}.{:06}Z", format_utc_seconds(clamped), clamped == seconds ? micros - seconds * 1'000'000 : 0);
}

Result<double> parse_time(std::string_view text) {
  std::optional<ReadTime> time = read_time(text);
  if (!time) return not_a_time(text);
  return static_cast<double>(time->seconds) + time->fraction;
}

Result<WallClock::time_point> parse_time_point(std::string_view text) {
  std::optional<ReadTime> time = read_time(text);
  if (!time) return not_a_time(text);
  return WallClock::time_point{std::chrono::duration_cast<WallClock::duration>(
      std::chrono::seconds{time->seconds} + std::chrono::microseconds{time->micros})};
}

}  // namespace tessera::wire
