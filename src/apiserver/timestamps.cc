#include "apiserver/timestamps.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace tessera::apiserver {

std::string rfc3339(WallClock::time_point time) {
  const auto days = std::chrono::floor<std::chrono::days>(time);
  const std::chrono::year_month_day date{days};
  const std::chrono::hh_mm_ss clock{std::chrono::floor<std::chrono::seconds>(time - days)};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), clock.hours().count(),
                     clock.minutes().count(), clock.seconds().count());
}

namespace {

bool read_number(std::string_view text, size_t& position, size_t digits, int& value) {
  if (position + digits > text.size()) return false;
  const char* begin = text.data() + position;
  auto [end, error] = std::from_chars(begin, begin + digits, value);
  if (error != std::errc() || end != begin + digits) return false;
  position += digits;
  return true;
}

bool expect(std::string_view text, size_t& position, char wanted) {
  if (position >= text.size() || std::toupper(static_cast<unsigned char>(text[position])) != wanted) return false;
  ++position;
  return true;
}

}  // namespace

std::optional<WallClock::time_point> parse_rfc3339(std::string_view text) {
  size_t position = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_number(text, position, 4, year) || !expect(text, position, '-') || !read_number(text, position, 2, month) ||
      !expect(text, position, '-') || !read_number(text, position, 2, day) || !expect(text, position, 'T') ||
      !read_number(text, position, 2, hour) || !expect(text, position, ':') ||
      !read_number(text, position, 2, minute) || !expect(text, position, ':') ||
      !read_number(text, position, 2, second)) {
    return std::nullopt;
  }
  if (position < text.size() && text[position] == '.') {
    ++position;
    while (position < text.size() && std::isdigit(static_cast<unsigned char>(text[position])) != 0) ++position;
  }
  int offset_minutes = 0;
  if (position < text.size() && (text[position] == '+' || text[position] == '-')) {
    const int sign = text[position] == '-' ? -1 : 1;
    ++position;
    int offset_hours = 0, offset_rest = 0;
    if (!read_number(text, position, 2, offset_hours) || !expect(text, position, ':') ||
        !read_number(text, position, 2, offset_rest)) {
      return std::nullopt;
    }
    offset_minutes = sign * (offset_hours * 60 + offset_rest);
  } else if (!expect(text, position, 'Z')) {
    return std::nullopt;
  }
  if (position != text.size()) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  return std::chrono::sys_days{date} + std::chrono::hours{hour} + std::chrono::minutes{minute - offset_minutes} +
         std::chrono::seconds{second};
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
  if (hours < 24 * 8)
    return hours % 24 == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, hours % 24);
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    const int64_t days = (hours / 24) % 365;
    return days == 0 ? fmt::format("{}y", hours / 24 / 365) : fmt::format("{}y{}d", hours / 24 / 365, days);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::milliseconds{0};
  double total_ms = 0;
  size_t position = 0;
  while (position < text.size()) {
    size_t number_end = position;
    while (number_end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[number_end])) != 0 || text[number_end] == '.')) {
      ++number_end;
    }
    if (number_end == position) return std::nullopt;
    double value = 0;
    auto [end, error] = std::from_chars(text.data() + position, text.data() + number_end, value);
    if (error != std::errc() || end != text.data() + number_end) return std::nullopt;
    size_t unit_end = number_end;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])) != 0) ++unit_end;
    const std::string_view unit = text.substr(number_end, unit_end - number_end);
    double unit_ms = 0;
    if (unit == "h")
      unit_ms = 3600e3;
    else if (unit == "m")
      unit_ms = 60e3;
    else if (unit == "s")
      unit_ms = 1e3;
    else if (unit == "ms")
      unit_ms = 1;
    else if (unit == "us" || unit == "µs")
      unit_ms = 1e-3;
    else if (unit == "ns")
      unit_ms = 1e-6;
    else
      return std::nullopt;
    total_ms += value * unit_ms;
    position = unit_end;
  }
  return std::chrono::milliseconds{static_cast<int64_t>(std::llround(total_ms))};
}

}  // namespace tessera::apiserver
