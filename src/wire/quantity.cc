#include "wire/quantity.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

namespace tessera::wire {

namespace {

// The grammar of k8s.io/apimachinery/pkg/api/resource:
//   quantity ::= [+-] number suffix
//   number   ::= digits | digits "." digits | digits "." | "." digits
//   suffix   ::= "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"   (powers of 10)
//              | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"                    (powers of 2)
//              | ("e" | "E") [+-] digits                                     (10^exponent)
struct DecimalSuffix {
  std::string_view text;
  int power_of_ten;
};
constexpr DecimalSuffix kDecimalSuffixes[] = {{"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
                                              {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};

struct BinarySuffix {
  std::string_view text;
  int power_of_two;
};
constexpr BinarySuffix kBinarySuffixes[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};

// A quantity read exactly: sign * digits * 10^power_of_ten * 2^power_of_two, where `digits` are
// the significant decimal digits, most significant first, without leading or trailing zeros.
struct ExactQuantity {
  bool negative = false;
  std::vector<uint8_t> digits;  // empty: zero
  int64_t power_of_ten = 0;
  int power_of_two = 0;
};

bool is_decimal_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view take_digits(std::string_view& text) {
  size_t end = 0;
  while (end < text.size() && is_decimal_digit(text[end])) ++end;
  std::string_view digits = text.substr(0, end);
  text.remove_prefix(end);
  return digits;
}

// Sets the power of ten and two `suffix` stands for; false when it is no suffix.
bool read_suffix(std::string_view suffix, ExactQuantity& quantity) {
  for (const DecimalSuffix& candidate : kDecimalSuffixes) {
    if (candidate.text == suffix) {
      quantity.power_of_ten += candidate.power_of_ten;
      return true;
    }
  }
  for (const BinarySuffix& candidate : kBinarySuffixes) {
    if (candidate.text == suffix) {
      quantity.power_of_two = candidate.power_of_two;
      return true;
    }
  }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  std::string_view exponent = suffix.substr(1);
  if (exponent.starts_with('+')) exponent.remove_prefix(1);  // from_chars takes '-' only
  std::string_view exponent_digits = exponent.substr(suffix[1] == '-' ? 1 : 0);
  if (exponent_digits.empty() || exponent_digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  int value = 0;
  const auto [end, error] = std::from_chars(exponent.data(), exponent.data() + exponent.size(), value);
  if (error != std::errc() || end != exponent.data() + exponent.size()) return false;
  quantity.power_of_ten += value;
  return true;
}

std::optional<ExactQuantity> read_exact(std::string_view text) {
  ExactQuantity quantity;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    quantity.negative = text[0] == '-';
    text.remove_prefix(1);
  }
  std::string_view integer_digits = take_digits(text);
  std::string_view fraction_digits;
  if (text.starts_with('.')) {
    text.remove_prefix(1);
    fraction_digits = take_digits(text);
  }
  if (integer_digits.empty() && fraction_digits.empty()) return std::nullopt;
  if (!read_suffix(text, quantity)) return std::nullopt;

  for (std::string_view part : {integer_digits, fraction_digits}) {
    for (char digit : part) {
      if (quantity.digits.empty() && digit == '0') continue;  // leading zeros
      quantity.digits.push_back(static_cast<uint8_t>(digit - '0'));
    }
  }
  // Fraction digits dropped as leading zeros still count in the exponent; only digits kept do not.
  quantity.power_of_ten -= static_cast<int64_t>(fraction_digits.size());
  while (!quantity.digits.empty() && quantity.digits.back() == 0) {
    quantity.digits.pop_back();
    ++quantity.power_of_ten;
  }
  return quantity;
}

// digits *= 2^power, in place (decimal long multiplication in steps of 2^10).
void multiply_by_power_of_two(std::vector<uint8_t>& digits, int power) {
  while (power > 0) {
    const int step = power < 10 ? power : 10;
    power -= step;
    uint32_t carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      const uint32_t product = (uint32_t{*it} << step) + carry;
      *it = static_cast<uint8_t>(product % 10);
      carry = product / 10;
    }
    for (; carry != 0; carry /= 10) digits.insert(digits.begin(), static_cast<uint8_t>(carry % 10));
  }
}

constexpr int kInt64Digits = 19;  // 9223372036854775807

// The magnitude of `quantity` times 10^scale, rounded up to a whole number; nullopt when it
// exceeds int64.
std::optional<int64_t> rounded_up_magnitude(ExactQuantity quantity, int scale) {
  if (quantity.digits.empty()) return 0;
  const int64_t power_of_ten = quantity.power_of_ten + scale;
  // The integer part has digits.size() + power_of_ten digits before multiplying by 2^k, which adds
  // at most 19 more; anything beyond cannot fit, and a negative count means a value below 1.
  const int64_t integer_digits_before = static_cast<int64_t>(quantity.digits.size()) + power_of_ten;
  if (integer_digits_before > kInt64Digits) return std::nullopt;
  if (integer_digits_before < -kInt64Digits) return 1;  // 0 < value < 1
  multiply_by_power_of_two(quantity.digits, quantity.power_of_two);
  const int64_t integer_digits = static_cast<int64_t>(quantity.digits.size()) + power_of_ten;
  if (integer_digits > kInt64Digits) return std::nullopt;

  // Positions past the digits are zeros of a positive power of ten.
  const auto size = static_cast<int64_t>(quantity.digits.size());
  uint64_t integer = 0;  // at most 19 digits: fits
  for (int64_t i = 0; i < integer_digits; ++i) {
    integer = integer * 10 + (i < size ? quantity.digits[static_cast<size_t>(i)] : 0);
  }
  bool has_fraction = false;
  for (int64_t i = std::max<int64_t>(integer_digits, 0); i < size; ++i) {
    has_fraction |= quantity.digits[static_cast<size_t>(i)] != 0;
  }
  if (has_fraction) ++integer;
  if (integer > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(integer);
}

// `text` times 10^scale, rounded away from zero as the API server rounds to a precision.
Result<int64_t> parse_scaled(std::string_view text, int scale, std::string_view unit_name) {
  std::optional<ExactQuantity> quantity = read_exact(text);
  if (!quantity) {
    return Error{
        fmt::format("'{}' is not a quantity: expected a number with an optional suffix (m, k, Ki, Mi, Gi...)", text)};
  }
  std::optional<int64_t> magnitude = rounded_up_magnitude(*quantity, scale);
  if (!magnitude) {
    return Error{fmt::format("'{}' is too large a quantity: at most {} {}", text, std::numeric_limits<int64_t>::max(),
                             unit_name)};
  }
  return quantity->negative ? -*magnitude : *magnitude;
}

}  // namespace

Result<int64_t> parse_quantity_milli(std::string_view text) { return parse_scaled(text, 3, "thousandths"); }

Result<int64_t> parse_quantity(std::string_view text) { return parse_scaled(text, 0, "units"); }

std::string format_quantity_milli(int64_t milli) {
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  return fmt::format("{}m", milli);
}

std::string format_bytes(int64_t bytes) {
  constexpr std::string_view kSuffixes[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  if (bytes == 0) return "0";
  int power = 60;
  for (std::string_view suffix : kSuffixes) {
    const int64_t unit = int64_t{1} << power;
    if (bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
    power -= 10;
  }
  return fmt::format("{}", bytes);
}

}  // namespace tessera::wire
