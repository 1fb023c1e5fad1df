// Faults injected on purpose, to test clients (Tessera's scheduler) against a hostile server:
// requests answered with 500, 503 or 429 without being applied; connections closed with no
// response, before or after the request was applied (so a client cannot know whether a write
// happened); kept-alive connections closed after a random idle time. Seeded, counted by kind.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace tessera::apiserver {

struct FaultOptions {
  uint64_t seed = 1;
  double idle_close_seconds = 0;  // > 0: an idle kept-alive connection goes after up to this long
  double drop_rate = 0;           // share of non-watch requests whose connection is closed unanswered
  double error_rate = 0;          // share of requests, watches included, answered 500, 503 or 429
  // Non-empty: drops and errors only for requests whose User-Agent starts with it (the client
  // under test), so that a test's own client is spared.
  std::string user_agent_prefix = {};

  bool any() const { return idle_close_seconds > 0 || drop_rate > 0 || error_rate > 0; }
};

enum class Fault : size_t {
  kIdleClose,
  kDropBeforeApplying,
  kDropAfterApplying,
  kInternalError,       // 500
  kServiceUnavailable,  // 503, Retry-After: 1
  kTooManyRequests,     // 429, Retry-After: 1
};
inline constexpr size_t kFaultKinds = 6;

class FaultInjector {
 public:
  explicit FaultInjector(FaultOptions options);

  // The fault for one request, counted; nullopt for none. Drops are drawn for non-watch requests
  // only; nothing for a client the user-agent prefix spares.
  std::optional<Fault> draw_for_request(bool watch, std::string_view user_agent);
  // How long the next idle wait of a kept-alive connection may last; nullopt without the fault.
  std::optional<std::chrono::milliseconds> draw_idle_limit();
  void count(Fault fault);

  // {"idleClose": N, "dropBeforeApplying": N, ..., "total": N}
  nlohmann::json counts() const;
  const FaultOptions& options() const { return options_; }

 private:
  bool chance(double rate);  // with mutex_ held

  const FaultOptions options_;
  mutable std::mutex mutex_;
  std::mt19937_64 random_;
  std::array<uint64_t, kFaultKinds> counts_ = {};
};

}  // namespace tessera::apiserver
