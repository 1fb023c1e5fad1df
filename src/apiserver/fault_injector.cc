#include "apiserver/fault_injector.h"

namespace tessera::apiserver {

namespace {

constexpr std::array<const char*, kFaultKinds> kFaultNames = {
    "idleClose", "dropBeforeApplying", "dropAfterApplying", "internalError500", "serviceUnavailable503",
    "tooManyRequests429"};

}  // namespace

FaultInjector::FaultInjector(FaultOptions options) : options_(options), random_(options.seed) {}

bool FaultInjector::chance(double rate) {
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  return std::uniform_real_distribution<double>(0, 1)(random_) < rate;
}

std::optional<Fault> FaultInjector::draw_for_request(bool watch, std::string_view user_agent) {
  if (!user_agent.starts_with(options_.user_agent_prefix)) return std::nullopt;
  std::lock_guard lock(mutex_);
  std::optional<Fault> fault;
  if (!watch && chance(options_.drop_rate)) {
    fault = random_() % 2 == 0 ? Fault::kDropBeforeApplying : Fault::kDropAfterApplying;
  } else if (chance(options_.error_rate)) {
    constexpr std::array<Fault, 3> kErrors = {Fault::kInternalError, Fault::kServiceUnavailable,
                                              Fault::kTooManyRequests};
    fault = kErrors[random_() % kErrors.size()];
  }
  if (fault) ++counts_[static_cast<size_t>(*fault)];
  return fault;
}

std::optional<std::chrono::milliseconds> FaultInjector::draw_idle_limit() {
  if (options_.idle_close_seconds <= 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  const double seconds = std::uniform_real_distribution<double>(0, options_.idle_close_seconds)(random_);
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

void FaultInjector::count(Fault fault) {
  std::lock_guard lock(mutex_);
  ++counts_[static_cast<size_t>(fault)];
}

nlohmann::json FaultInjector::counts() const {
  std::lock_guard lock(mutex_);
  nlohmann::json counts = nlohmann::json::object();
  uint64_t total = 0;
  for (size_t kind = 0; kind < kFaultKinds; ++kind) {
    counts[kFaultNames[kind]] = counts_[kind];
    total += counts_[kind];
  }
  counts["total"] = total;
  return counts;
}

}  // namespace tessera::apiserver
