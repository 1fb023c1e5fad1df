// Which queues of a user-written list can take part in scheduling, and why the others cannot.
// On Kubernetes anyone allowed to create Queue objects can write a bad one (a negative quota, a
// parent that does not exist or that leads back to itself); one bad queue must not stop the
// others. So the bad ones, and the queues below them, are left out one by one, each with a
// reason its owner can read, and the rest form the tree. A scenario file, in contrast, is
// refused whole by QueueTree::build: there the author is at hand to fix it.
#pragma once

#include <string>
#include <vector>

#include "core/queue.h"
#include "policy/fair_share.h"

namespace tessera {

struct QueueProblem {
  std::string queue;
  std::string reason;   // a CamelCase word: InvalidQuota, ParentMissing, CyclicParent, ...
  std::string message;  // a sentence naming the field or the queues involved
  bool excluded = true;  // false: a warning; the queue still takes part
};

struct UsableQueues {
  std::vector<QueueSpec> specs;  // in the order given; QueueTree::build accepts them
  std::vector<QueueProblem> problems;
};

// Leaves out queues with an empty or repeated name or an unusable quota (InvalidQuota), a
// parent that is not in the list (ParentMissing), a parent that was left out (ParentExcluded),
// or a parent chain that never reaches a top-level queue (CyclicParent).
UsableQueues usable_queues(std::vector<QueueSpec> specs, const ResourceNames& resources);

// Quotas that are accepted but cannot all be met (excluded = false): a child whose deserved
// quota of a resource exceeds its parent's (DeservedExceedsParent) — the parent's bounds it.
std::vector<QueueProblem> quota_warnings(const QueueTree& tree);

}  // namespace tessera
