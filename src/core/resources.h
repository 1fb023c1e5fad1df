// Scalar resources of a node or a pod: CPU in millicores and memory in bytes.
#pragma once

#include <cstdint>

namespace tessera {

inline constexpr int64_t kMiB = 1024 * 1024;
inline constexpr int64_t kGiB = 1024 * kMiB;

struct Resources {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;

  bool fits_in(const Resources& available) const {
    return cpu_milli <= available.cpu_milli && memory_bytes <= available.memory_bytes;
  }
  bool is_non_negative() const { return cpu_milli >= 0 && memory_bytes >= 0; }

  Resources& operator+=(const Resources& other) {
    cpu_milli += other.cpu_milli;
    memory_bytes += other.memory_bytes;
    return *this;
  }
  Resources& operator-=(const Resources& other) {
    cpu_milli -= other.cpu_milli;
    memory_bytes -= other.memory_bytes;
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend bool operator==(const Resources&, const Resources&) = default;
};

}  // namespace tessera
