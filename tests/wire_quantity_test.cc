// Kubernetes quantities: the API server's grammar and rounding.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "wire/quantity.h"

namespace tessera::wire {
namespace {

int64_t milli(std::string_view text) {
  auto value = parse_quantity_milli(text);
  EXPECT_TRUE(value.ok()) << text << ": " << (value.ok() ? "" : value.error().message);
  return value.ok() ? *value : -424242;
}

int64_t units(std::string_view text) {
  auto value = parse_quantity(text);
  EXPECT_TRUE(value.ok()) << text << ": " << (value.ok() ? "" : value.error().message);
  return value.ok() ? *value : -424242;
}

TEST(WireQuantity, ReadsPlainAndFractionalNumbers) {
  EXPECT_EQ(milli("2"), 2000);
  EXPECT_EQ(milli("0"), 0);
  EXPECT_EQ(milli("1.5"), 1500);
  EXPECT_EQ(milli(".5"), 500);
  EXPECT_EQ(milli("5."), 5000);
  EXPECT_EQ(milli("007"), 7000);
  EXPECT_EQ(milli("+3"), 3000);
  EXPECT_EQ(units("128974848"), 128974848);
}

TEST(WireQuantity, ReadsDecimalSuffixes) {
  EXPECT_EQ(milli("500m"), 500);
  EXPECT_EQ(milli("250u"), 1);  // 0.25 thousandths, rounded up
  EXPECT_EQ(milli("1000000n"), 1);
  EXPECT_EQ(units("1k"), 1000);
  EXPECT_EQ(units("129M"), 129'000'000);
  EXPECT_EQ(units("1G"), 1'000'000'000);
  EXPECT_EQ(units("2T"), 2'000'000'000'000);
  EXPECT_EQ(units("1P"), 1'000'000'000'000'000);
  EXPECT_EQ(units("1E"), 1'000'000'000'000'000'000);
  EXPECT_EQ(units("1.5k"), 1500);
}

TEST(WireQuantity, ReadsBinarySuffixes) {
  EXPECT_EQ(milli("1Ki"), 1'024'000);
  EXPECT_EQ(units("1Ki"), 1024);
  EXPECT_EQ(units("123Mi"), 123 * 1024 * 1024);
  EXPECT_EQ(units("1.5Gi"), 1'610'612'736);
  EXPECT_EQ(units("64Gi"), int64_t{64} << 30);
  EXPECT_EQ(units("2Ti"), int64_t{2} << 40);
  EXPECT_EQ(units("3Pi"), int64_t{3} << 50);
  EXPECT_EQ(units("7Ei"), int64_t{7} << 60);
  EXPECT_EQ(units("0.1Ki"), 103);  // 102.4 rounded up
}

TEST(WireQuantity, ReadsDecimalExponents) {
  EXPECT_EQ(milli("4e3"), 4'000'000);
  EXPECT_EQ(units("4e3"), 4000);
  EXPECT_EQ(units("1E3"), 1000);
  EXPECT_EQ(units("1e+3"), 1000);
  EXPECT_EQ(milli("1e-3"), 1);
  EXPECT_EQ(milli("12e-4"), 2);  // 1.2 thousandths
  EXPECT_EQ(units("1.5e2"), 150);
  EXPECT_EQ(units("1e-100000"), 1);  // tiny but positive
  EXPECT_EQ(units("0e100000"), 0);
}

TEST(WireQuantity, RoundsUpLikeTheApiServer) {
  EXPECT_EQ(units("100m"), 1);  // a pod asking 100m of a whole-unit resource counts 1
  EXPECT_EQ(units("1001m"), 2);
  EXPECT_EQ(milli("0.0001"), 1);
  EXPECT_EQ(milli("0.0000000000000000000000000001"), 1);
  EXPECT_EQ(units("1.000000000000000000000000001"), 2);
  EXPECT_EQ(units("1234567890123456789.5"), 1234567890123456790);
  EXPECT_EQ(milli("1.0000"), 1000);  // zeros are not a fraction
  // Negative values round away from zero, as the API server rounds them.
  EXPECT_EQ(units("-100m"), -1);
  EXPECT_EQ(milli("-1.5"), -1500);
  EXPECT_EQ(milli("-0"), 0);
}

TEST(WireQuantity, AcceptsTheLargestInt64AndRejectsOverflow) {
  EXPECT_EQ(units("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(units("-9223372036854775807"), -std::numeric_limits<int64_t>::max());
  for (std::string_view text : {"9223372036854775808", "8Ei", "1e19", "10E", "99999999999999999999999999"}) {
    auto value = parse_quantity(text);
    ASSERT_FALSE(value.ok()) << text;
    EXPECT_NE(value.error().message.find("too large"), std::string::npos) << value.error().message;
  }
  // In thousandths the limit is a thousand times lower.
  EXPECT_EQ(milli("9223372036854775.807"), std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(parse_quantity_milli("9223372036854776").ok());
  EXPECT_FALSE(parse_quantity_milli("1E").ok());
  EXPECT_TRUE(parse_quantity("1E").ok());
}

TEST(WireQuantity, RejectsWhatIsNotAQuantity) {
  for (std::string_view text : {"",    "12Q", "1.2.3", "Ki", "1 Gi", " 1",  "1e",   "1e+-3", "1e1.5", "1ki", "1KiB",
                                "--1", "+-1", ".",     "+",  "-",    "1,5", "0x10", "1Gi ",  "e3",    "1mm", "1Mi1"}) {
    auto value = parse_quantity_milli(text);
    EXPECT_FALSE(value.ok()) << "'" << text << "' read as " << (value.ok() ? *value : 0);
  }
  auto value = parse_quantity("12Q");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message,
            "'12Q' is not a quantity: expected a number with an optional suffix (m, k, Ki, Mi, Gi...)");
}

TEST(WireQuantity, FormatsThousandths) {
  EXPECT_EQ(format_quantity_milli(500), "500m");
  EXPECT_EQ(format_quantity_milli(2000), "2");
  EXPECT_EQ(format_quantity_milli(1500), "1500m");
  EXPECT_EQ(format_quantity_milli(0), "0");
  EXPECT_EQ(format_quantity_milli(-250), "-250m");
  EXPECT_EQ(format_quantity_milli(96000), "96");  // a node's CPU as the dev cluster registers it
  EXPECT_EQ(format_quantity_milli(95500), "95500m");
  for (int64_t value : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{64000}, int64_t{123456789}}) {
    EXPECT_EQ(milli(format_quantity_milli(value)), value);
  }
}

TEST(WireQuantity, FormatsBytesWithTheLargestExactBinarySuffix) {
  EXPECT_EQ(format_bytes(int64_t{20} << 30), "20Gi");
  EXPECT_EQ(format_bytes(int64_t{1536} << 20), "1536Mi");
  EXPECT_EQ(format_bytes(1000), "1000");
  EXPECT_EQ(format_bytes(1024), "1Ki");
  EXPECT_EQ(format_bytes(0), "0");
  EXPECT_EQ(format_bytes(int64_t{3} << 60), "3Ei");
  EXPECT_EQ(format_bytes(int64_t{768} << 30), "768Gi");  // a node's memory as the dev cluster registers it
  EXPECT_EQ(format_bytes(int64_t{1} << 40), "1Ti");
  EXPECT_EQ(format_bytes(1536 * 1024), "1536Ki");
  for (int64_t value : {int64_t{1}, int64_t{4096}, int64_t{81920} << 20, int64_t{1} << 40, int64_t{123456789}}) {
    EXPECT_EQ(units(format_bytes(value)), value);
  }
}

}  // namespace
}  // namespace tessera::wire
