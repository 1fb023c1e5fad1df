#include "kube/leader_election.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "wire/timestamp.h"

namespace tessera::kube {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double value) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
}

std::string text_field(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

int64_t integer_field(const nlohmann::json& object, const char* key, int64_t fallback) {
  const auto found = object.find(key);
  return found != object.end() && found->is_number_integer() ? found->get<int64_t>() : fallback;
}

}  // namespace

struct LeaderElector::Impl {
  enum class Attempt { kHolding, kHeldByOther, kFailed };

  Impl(ApiClient& api_client, LeaderElectionConfig election_config)
      : client(api_client),
        config(std::move(election_config)),
        collection_path(
            fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", url_encode(config.lease_namespace))),
        lease_path(fmt::format("{}/{}", collection_path, url_encode(config.lease_name))),
        lease_duration_seconds(std::max<int64_t>(1, std::llround(config.lease_duration_seconds))) {}

  nlohmann::json spec_now(std::chrono::system_clock::time_point now, const std::string& acquire_time,
                          int64_t transitions) const {
    return {{"holderIdentity", config.identity},
            {"leaseDurationSeconds", lease_duration_seconds},
            {"acquireTime", acquire_time},
            {"renewTime", wire::format_micro_time(now)},
            {"leaseTransitions", transitions}};
  }

  // Whether the call succeeded; a failure other than a lost race (409) goes to on_failure unless
  // the last failure of the same operation had the same cause and none succeeded since.
  bool succeeded(const Result<ApiResponse>& response, const char* operation) {
    if (response && response->ok()) {
      std::lock_guard lock(failure_mutex);
      last_failure.erase(operation);
      return true;
    }
    if (response && response->status == 409) return false;
    const std::string cause =
        response ? fmt::format("HTTP {} {}", response->status, response->reason()) : response.error().message;
    {
      std::lock_guard lock(failure_mutex);
      auto [it, inserted] = last_failure.try_emplace(operation, cause);
      if (!inserted && it->second == cause) return false;
      it->second = cause;
    }
    if (config.on_failure) {
      config.on_failure(fmt::format(
          "leader election: {} the lease {}/{} failed: {}", operation, config.lease_namespace, config.lease_name,
          response ? response->failure_text() : cause));
    }
    return false;
  }

  void observe(const nlohmann::json& spec, Clock::time_point now) {
    if (spec != observed_spec) {
      observed_spec = spec;
      observed_at = now;
    }
  }

  // One round of client-go's tryAcquireOrRenew: create the lease, renew it, or take it over
  // once its holder has let it lapse; every write carries the resourceVersion read, so of two
  // candidates racing only one succeeds.
  Attempt try_acquire_or_renew() {
    const Clock::time_point now = Clock::now();
    const auto wall_now = std::chrono::system_clock::now();
    auto read = client.get(lease_path);
    if (read && read->status == 404) {
      nlohmann::json spec = spec_now(wall_now, wire::format_micro_time(wall_now), 0);
      const nlohmann::json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                                    {"kind", "Lease"},
                                    {"metadata", {{"name", config.lease_name}, {"namespace", config.lease_namespace}}},
                                    {"spec", spec}};
      auto created = client.post(collection_path, lease);
      if (!succeeded(created, "creating")) return Attempt::kFailed;  // 409: another candidate created it first
      observe(spec, now);
      transitions.store(0);
      return Attempt::kHolding;
    }
    if (!succeeded(read, "reading")) return Attempt::kFailed;
    nlohmann::json lease = read->json();
    if (!lease.is_object()) return Attempt::kFailed;
    const nlohmann::json spec =
        lease.contains("spec") && lease["spec"].is_object() ? lease["spec"] : nlohmann::json::object();
    observe(spec, now);

    const std::string holder = text_field(spec, "holderIdentity");
    const bool held_by_us = holder == config.identity;
    if (!holder.empty() && !held_by_us) {
      // Lapsed only when the record has stood still for its duration on our own clock.
      const int64_t duration = integer_field(spec, "leaseDurationSeconds", lease_duration_seconds);
      if (now < observed_at + seconds(static_cast<double>(duration))) return Attempt::kHeldByOther;
    }
    const int64_t previous_transitions = integer_field(spec, "leaseTransitions", 0);
    const std::string acquire_time = text_field(spec, "acquireTime");
    nlohmann::json next =
        held_by_us ? spec_now(wall_now, acquire_time.empty() ? wire::format_micro_time(wall_now) : acquire_time,
                              previous_transitions)
                   : spec_now(wall_now, wire::format_micro_time(wall_now), previous_transitions + 1);
    lease["spec"] = next;  // metadata.resourceVersion stays: the write is conditional on it
    auto written = client.put(lease_path, lease);
    if (!succeeded(written, "updating")) return Attempt::kFailed;  // 409: someone else wrote first
    observe(next, now);
    transitions.store(integer_field(next, "leaseTransitions", 0));
    return Attempt::kHolding;
  }

  void start_renewing(std::function<void()> lost_callback) {
    on_lost = std::move(lost_callback);
    last_renewed.store(Clock::now().time_since_epoch().count());
    leader.store(true);
    {
      std::lock_guard lock(mutex);
      stopping = false;
    }
    renewer = std::thread([this] { renew_loop(); });
  }

  void renew_loop() {
    std::unique_lock lock(mutex);
    while (!renewal_stopped.wait_for(lock, seconds(config.retry_period_seconds), [this] { return stopping; })) {
      lock.unlock();
      const Attempt attempt = try_acquire_or_renew();
      const Clock::time_point now = Clock::now();
      if (attempt == Attempt::kHolding) {
        last_renewed.store(now.time_since_epoch().count());
      } else if (attempt == Attempt::kHeldByOther ||
                 now - last_renewed_at() >= seconds(config.renew_deadline_seconds)) {
        // Someone else holds the lease now, or we could not renew in time: step down.
        leader.store(false);
        if (on_lost) on_lost();
        return;
      }
      lock.lock();
    }
  }

  void stop_renewing() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    renewal_stopped.notify_all();
    // on_lost may call release() from the renewer itself, which then just returns.
    if (renewer.joinable() && renewer.get_id() != std::this_thread::get_id()) renewer.join();
  }

  Clock::time_point last_renewed_at() const { return Clock::time_point(Clock::duration(last_renewed.load())); }

  bool is_leader() const {
    // Time-based as well: a renewal stuck in a slow request must not leave us claiming the lease.
    return leader.load() && Clock::now() - last_renewed_at() < seconds(config.renew_deadline_seconds);
  }

  void release() {
    stop_renewing();
    if (!leader.exchange(false)) return;
    auto read = client.get(lease_path);
    if (!read || !read->ok()) return;
    nlohmann::json lease = read->json();
    if (!lease.is_object() || !lease.contains("spec") ||
        text_field(lease["spec"], "holderIdentity") != config.identity) {
      return;
    }
    const std::string now = wire::format_micro_time(std::chrono::system_clock::now());
    lease["spec"] = {{"holderIdentity", ""},
                     {"leaseDurationSeconds", 1},
                     {"acquireTime", now},
                     {"renewTime", now},
                     {"leaseTransitions", integer_field(lease["spec"], "leaseTransitions", 0)}};
    (void)client.put(lease_path, lease);  // best effort: failing, the lease simply lapses
  }

  ApiClient& client;
  const LeaderElectionConfig config;
  const std::string collection_path;
  const std::string lease_path;
  const int64_t lease_duration_seconds;

  // What we last saw of the lease and when (our clock). Used by one thread at a time: the
  // caller of acquire(), then the renewer, then the caller of release().
  nlohmann::json observed_spec;
  Clock::time_point observed_at{};

  std::atomic<bool> leader{false};
  std::atomic<Clock::rep> last_renewed{0};
  std::atomic<int64_t> transitions{0};
  std::function<void()> on_lost;

  std::mutex failure_mutex;
  std::map<std::string, std::string> last_failure;  // operation -> cause of its last failure reported

  std::mutex mutex;
  std::condition_variable renewal_stopped;
  bool stopping = false;
  std::thread renewer;
};

LeaderElector::LeaderElector(ApiClient& client, LeaderElectionConfig config)
    : impl_(std::make_unique<Impl>(client, std::move(config))) {}

LeaderElector::~LeaderElector() { impl_->stop_renewing(); }

bool LeaderElector::acquire(const std::atomic<bool>& stop, std::function<void()> on_lost) {
  if (impl_->is_leader()) return true;
  impl_->stop_renewing();  // joins a renewer that lost the lease earlier
  while (!stop.load()) {
    if (impl_->try_acquire_or_renew() == Impl::Attempt::kHolding) {
      impl_->start_renewing(std::move(on_lost));
      return true;
    }
    // Wait one retry period, looking at `stop` (which comes with no notification) meanwhile.
    const auto retry_at = Clock::now() + seconds(impl_->config.retry_period_seconds);
    while (!stop.load() && Clock::now() < retry_at) {
      std::this_thread::sleep_for(std::min<Clock::duration>(retry_at - Clock::now(), std::chrono::milliseconds(50)));
    }
  }
  return false;
}

bool LeaderElector::is_leader() const { return impl_->is_leader(); }

void LeaderElector::release() { impl_->release(); }

int64_t LeaderElector::transitions_seen() const { return impl_->transitions.load(); }

}  // namespace tessera::kube
