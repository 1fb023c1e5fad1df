// Kubernetes' text formats other than quantities: timestamps, durations, base64, taint effects.
// The client, the adapter, the scenarios and the test API server all read and write through these.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "wire/base64.h"
#include "wire/duration.h"
#include "wire/taint_effect.h"
#include "wire/timestamp.h"

namespace tessera::wire {
namespace {

template <typename T>
void expect_error(const Result<T>& result, std::initializer_list<std::string_view> parts) {
  ASSERT_FALSE(result.ok());
  for (std::string_view part : parts) {
    EXPECT_NE(result.error().message.find(part), std::string::npos) << result.error().message << " lacks " << part;
  }
}

WallClock::time_point at_micros(int64_t micros) { return WallClock::time_point(std::chrono::microseconds(micros)); }

// ----- Durations -----

TEST(WireDuration, ParsesGoDurations) {
  const std::pair<std::string_view, double> cases[] = {
      {"90s", 90},     {"10m", 600},       {"1h30m", 5400}, {"1.5h", 5400},     {"250ms", 0.25},
      {"0", 0},        {"2h45m30s", 9930}, {"1us", 1e-6},   {"1\u00b5s", 1e-6}, {"1\u03bcs", 1e-6},
      {"100ns", 1e-7}, {".5s", 0.5},       {"-1m", -60},    {"+5s", 5},         {"1m1m", 120}};
  for (const auto& [text, seconds] : cases) {
    auto parsed = parse_duration_seconds(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message;
    EXPECT_DOUBLE_EQ(*parsed, seconds) << text;
  }
  for (std::string_view bad :
       {"", "10", "10x", "m", "1.5", "1 h", "h1", ".s", "1hm", "-", "10M", "5 minutes", "1e3s", "1h 30m"}) {
    expect_error(parse_duration_seconds(bad), {"is not a duration", "1h30m"});
  }
}

TEST(WireDuration, HumanDurationAsKubectlPrintsIt) {
  using std::chrono::seconds;
  EXPECT_EQ(human_duration(seconds(5)), "5s");
  EXPECT_EQ(human_duration(seconds(119)), "119s");
  EXPECT_EQ(human_duration(seconds(200)), "3m20s");
  EXPECT_EQ(human_duration(seconds(600)), "10m");
  EXPECT_EQ(human_duration(seconds(3 * 3600 + 120)), "3h2m");
  EXPECT_EQ(human_duration(seconds(30 * 3600)), "30h");
  EXPECT_EQ(human_duration(seconds(3 * 86400 + 7200)), "3d2h");
  EXPECT_EQ(human_duration(seconds(400 * 86400)), "400d");
  EXPECT_EQ(human_duration(seconds(3 * 365 * 86400 + 10 * 86400)), "3y10d");
  EXPECT_EQ(human_duration(seconds(-1)), "0s");  // clock skew of a second
  EXPECT_EQ(human_duration(seconds(-5)), "<invalid>");
}

// ----- Timestamps -----

TEST(WireTimestamp, ParsesRfc3339) {
  const std::pair<std::string_view, double> cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2026-11-21T10:00:00Z", 1795255200},
      {"2026-11-21T10:00:00.5Z", 1795255200.5},
      {"2026-11-21T12:30:00+02:30", 1795255200},
      {"2026-11-21T05:00:00-05:00", 1795255200},
      {"2024-02-29T00:00:00Z", 1709164800},
      {"1969-12-31T23:59:59Z", -1},
      {"2000-03-01t00:00:00z", 951868800},
  };
  for (const auto& [text, seconds] : cases) {
    auto parsed = parse_time(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message;
    EXPECT_DOUBLE_EQ(*parsed, seconds) << text;
  }
  auto micro = parse_time("2026-11-21T10:00:00.123456Z");
  ASSERT_TRUE(micro.ok());
  EXPECT_NEAR(*micro, 1795255200.123456, 1e-6);
  for (std::string_view bad :
       {"", "2026-11-21", "2026-11-21T10:00:00", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-21T24:00:00Z",
        "2026-11-21T10:60:00Z", "2026-11-21T10:00:60Z", "2026-11-21 10:00:00Z", "2026-11-21T10:00:00.Z",
        "2026-11-21T10:00:00+0200", "2026-11-21T10:00:00Z junk", "21/11/2026"}) {
    expect_error(parse_time(bad), {"is not an RFC 3339 timestamp", "2026-11-21T10:00:00Z"});
    expect_error(parse_time_point(bad), {"is not an RFC 3339 timestamp"});
  }
}

TEST(WireTimestamp, PointsInTimeKeepMicroseconds) {
  const WallClock::time_point time = std::chrono::sys_days{std::chrono::year{2024} / 5 / 1} + std::chrono::hours{13} +
                                     std::chrono::minutes{4} + std::chrono::seconds{5};
  EXPECT_EQ(format_time(time), "2024-05-01T13:04:05Z");
  EXPECT_EQ(*parse_time_point("2024-05-01T13:04:05Z"), time);
  EXPECT_EQ(*parse_time_point("2024-05-01T15:04:05.123+02:00"), time + std::chrono::milliseconds(123));
  EXPECT_EQ(*parse_time_point("2024-05-01T13:04:05.1234567Z"), time + std::chrono::microseconds(123456));
  EXPECT_EQ(*parse_time_point("1969-12-31T23:59:59.5Z"), at_micros(-500'000));
}

TEST(WireTimestamp, FormatsUtcInWholeSeconds) {
  EXPECT_EQ(format_time(0.0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_time(1795255200.0), "2026-11-21T10:00:00Z");
  EXPECT_EQ(format_time(1795255200.999), "2026-11-21T10:00:00Z");  // whole seconds, truncated
  EXPECT_EQ(format_time(1709164800.0), "2024-02-29T00:00:00Z");
  EXPECT_EQ(format_time(-1.0), "1969-12-31T23:59:59Z");
  EXPECT_EQ(format_time(-0.5), "1969-12-31T23:59:59Z");  // toward the past, not toward zero
  EXPECT_EQ(format_time(1e300), "9999-12-31T23:59:59Z");
  EXPECT_EQ(format_time(-1e300), "0001-01-01T00:00:00Z");
  EXPECT_EQ(format_time(std::numeric_limits<double>::quiet_NaN()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_time(at_micros(1795255200'999999)), "2026-11-21T10:00:00Z");
  EXPECT_EQ(format_time(at_micros(-1)), "1969-12-31T23:59:59Z");
}

TEST(WireTimestamp, FormatsMicroTime) {
  EXPECT_EQ(format_micro_time(at_micros(1795255200'250000)), "2026-11-21T10:00:00.250000Z");
  EXPECT_EQ(format_micro_time(at_micros(1795255200'123456)), "2026-11-21T10:00:00.123456Z");
  EXPECT_EQ(format_micro_time(at_micros(0)), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_micro_time(at_micros(-1)), "1969-12-31T23:59:59.999999Z");
}

TEST(WireTimestamp, WhatIsWrittenReadsBack) {
  for (int64_t seconds : {int64_t{-86401}, int64_t{0}, int64_t{951868800}, int64_t{1795255200}, int64_t{4102444799}}) {
    EXPECT_DOUBLE_EQ(*parse_time(format_time(static_cast<double>(seconds))), static_cast<double>(seconds));
    const WallClock::time_point micro = at_micros(seconds * 1'000'000 + 500'001);
    EXPECT_DOUBLE_EQ(*parse_time(format_micro_time(micro)), static_cast<double>(seconds) + 0.500001);
    EXPECT_EQ(*parse_time_point(format_micro_time(micro)), micro);
  }
}

// ----- Base64 -----

TEST(WireBase64, StandardRoundTripsWithPadding) {
  EXPECT_EQ(encode_base64(""), "");
  EXPECT_EQ(encode_base64("f"), "Zg==");
  EXPECT_EQ(encode_base64("fo"), "Zm8=");
  EXPECT_EQ(encode_base64("foo"), "Zm9v");
  EXPECT_EQ(encode_base64("\xfb\xff"), "+/8=");
  std::string every_byte;
  for (int byte = 0; byte < 256; ++byte) every_byte.push_back(static_cast<char>(byte));
  EXPECT_EQ(decode_base64(encode_base64(every_byte)), every_byte);
  EXPECT_EQ(decode_base64url(encode_base64url(every_byte)), every_byte);
}

TEST(WireBase64, DecodesAsKubeconfigsWriteIt) {
  EXPECT_EQ(decode_base64("Zm9v\nYmFy\n"), "foobar");  // line breaks in long values
  EXPECT_EQ(decode_base64("Zg"), "f");                 // padding optional
  EXPECT_EQ(decode_base64("+/8="), "\xfb\xff");
  for (std::string_view bad : {"Z", "Zm9vY", "Zg==Zg", "Zm9v!", "-_8="}) {
    EXPECT_FALSE(decode_base64(bad).has_value()) << bad;
  }
}

TEST(WireBase64, UrlAlphabetUnpaddedAsContinueTokens) {
  EXPECT_EQ(encode_base64url("\xfb\xff"), "-_8");
  EXPECT_EQ(encode_base64url("f"), "Zg");
  EXPECT_EQ(decode_base64url("-_8"), "\xfb\xff");
  EXPECT_EQ(decode_base64url("+/8="), "\xfb\xff");  // the standard alphabet is taken too
  for (std::string_view bad : {"Z", "Zm 9v", "Zm9v!"}) EXPECT_FALSE(decode_base64url(bad).has_value()) << bad;
}

// ----- Taint effects -----

TEST(WireTaintEffect, NamesReadBack) {
  for (TaintEffect effect : {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    EXPECT_EQ(parse_taint_effect(taint_effect_name(effect)), effect);
    EXPECT_NE(kTaintEffectNames.find(taint_effect_name(effect)), std::string_view::npos);
  }
  EXPECT_EQ(taint_effect_name(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
  for (std::string_view bad : {"", "noschedule", "NoSchedule ", "Evict"}) {
    EXPECT_FALSE(parse_taint_effect(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace tessera::wire
