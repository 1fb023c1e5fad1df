// Leader election through a coordination.k8s.io/v1 Lease, as client-go does it: the holder
// renews spec.renewTime every retry period; a candidate takes the lease over when it has not
// seen the lease change for leaseDurationSeconds (measured on the candidate's own clock, so
// clock skew between replicas does not matter). Updates carry the resourceVersion read, so two
// candidates never both win (the loser gets 409 Conflict).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "kube/api_client.h"

namespace tessera::kube {

struct LeaderElectionConfig {
  std::string lease_namespace = "tessera-system";
  std::string lease_name = "tessera-scheduler";
  std::string identity;  // unique per replica (pod name + random suffix)
  double lease_duration_seconds = 15;
  double renew_deadline_seconds = 10;  // a leader that cannot renew for this long steps down
  double retry_period_seconds = 2;
  // Told why a read or write of the lease failed (not a 409 lost race), once per distinct cause
  // in a row: a missing RBAC rule would otherwise leave a replica waiting without a word.
  std::function<void(const std::string&)> on_failure;
};

class LeaderElector {
 public:
  LeaderElector(ApiClient& client, LeaderElectionConfig config);
  ~LeaderElector();  // stops renewing; does not release
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Blocks until this replica holds the lease (true) or `stop` is set (false). Then renews in
  // a background thread until it fails for renew_deadline_seconds, when is_leader() turns false
  // and `on_lost` (if set) is called once.
  bool acquire(const std::atomic<bool>& stop, std::function<void()> on_lost = {});
  bool is_leader() const;
  // Gives the lease up (holderIdentity cleared, as client-go's ReleaseOnCancel does) so a
  // standby takes over at once.
  void release();
  int64_t transitions_seen() const;  // spec.leaseTransitions when acquired

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::kube
