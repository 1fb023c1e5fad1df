#include "kube/micro_time.h"

#include <fmt/format.h>

#include <ctime>

namespace tessera::kube {

std::string format_micro_time(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto micros_since_epoch = duration_cast<microseconds>(time.time_since_epoch()).count();
  // Floor division, so that times before 1970 still get a fraction in [0, 1e6).
  std::time_t seconds = static_cast<std::time_t>(micros_since_epoch / 1'000'000);
  long long micros = micros_since_epoch % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, micros);
}

}  // namespace tessera::kube
