// The kubelets of the dev cluster's simulated nodes, in one thread: a pod bound to an existing
// node becomes Running after a start delay (phase, IPs, conditions, container statuses), and
// Succeeded once the run time in its `scheduling.tessera.dev/duration` annotation has passed; a
// pod marked for deletion is removed after a termination delay. Every change goes through the
// API (ResourceApi), so watches see the MODIFIED and DELETED events a real cluster would send.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "apiserver/resource_api.h"

namespace tessera::apiserver {

inline constexpr const char* kDurationAnnotation = "scheduling.tessera.dev/duration";

struct KubeletOptions {
  std::chrono::milliseconds pod_start_delay{500};
  std::chrono::milliseconds termination_delay{1000};
};

class KubeletSimulator {
 public:
  KubeletSimulator(ResourceApi& api, KubeletOptions options);
  ~KubeletSimulator();
  KubeletSimulator(const KubeletSimulator&) = delete;
  KubeletSimulator& operator=(const KubeletSimulator&) = delete;

  void start();
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  enum class Action { kStart, kComplete, kRemove };
  struct Task {
    Action action;
    std::string namespace_name;
    std::string name;
    std::string uid;
  };

  void run();
  void relist();
  void observe(const nlohmann::json& pod);
  void observe_safely(const nlohmann::json& pod);
  void schedule(Clock::time_point when, Action action, const nlohmann::json& pod);
  void perform(const Task& task);
  std::optional<std::string> node_ip(const std::string& node);
  std::string next_pod_ip(const std::string& node);

  ResourceApi& api_;
  const KubeletOptions options_;
  const ResourceType pods_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  uint64_t position_ = 0;
  std::multimap<Clock::time_point, Task> timers_;
  std::set<std::pair<std::string, Action>> scheduled_;  // (pod uid, action) already due
  std::map<std::string, uint32_t> pod_ip_counters_;     // per node
};

}  // namespace tessera::apiserver
