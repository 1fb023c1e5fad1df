// A statement: tentative allocations and evictions applied to a ClusterState, with checkpoints
// to roll back to, so what-ifs (a gang that might not fit, evictions that might not help) are
// cheap and nothing half-done escapes. Destroying an uncommitted statement rolls it all back.
#pragma once

#include <vector>

#include "core/binding.h"
#include "core/pod.h"
#include "engine/cluster_state.h"

namespace tessera {

struct Operation {
  enum class Kind : uint8_t { kAllocate, kEvict };
  Kind kind;
  PodId pod;
  Binding binding;  // the new binding (allocate) or the one given up (evict)
};

// Told of every change a statement makes to the cluster, undoing included, so that books kept
// beside the cluster (a cycle's queue ledger) follow it without each caller having to post to them.
class StatementListener {
 public:
  virtual void bound(PodId pod, const Binding& binding) = 0;
  virtual void unbound(PodId pod, const Binding& binding) = 0;

 protected:
  ~StatementListener() = default;
};

class Statement {
 public:
  using Checkpoint = size_t;

  explicit Statement(ClusterState& cluster, StatementListener* listener = nullptr)
      : cluster_(cluster), listener_(listener) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { rollback(0); }

  // Preconditions (asserted in debug builds): the pod is unbound and the binding fits.
  void allocate(PodId pod, Binding binding);
  // Precondition (asserted in debug builds): the pod is bound.
  void evict(PodId pod);

  Checkpoint checkpoint() const { return operations_.size(); }
  // Undoes, newest first, every operation after the checkpoint.
  void rollback(Checkpoint checkpoint);
  // Makes every operation permanent and returns them, oldest first, for the caller to carry out.
  std::vector<Operation> commit();

  const std::vector<Operation>& operations() const { return operations_; }
  const ClusterState& cluster() const { return cluster_; }
  const StatementListener* listener() const { return listener_; }

 private:
  ClusterState& cluster_;
  StatementListener* listener_;
  std::vector<Operation> operations_;
};

}  // namespace tessera
