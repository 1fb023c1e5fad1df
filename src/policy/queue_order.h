// Which queue is served next (docs/design.md §3 step 4, §4 allocate): dominant resource fairness over
// fair shares, as Mesos' DRF sorter does it over weighted capacity. Pure and tiny: it answers
// "who is next?" and leaves what to do with the answer to the action that asked.
#pragma once

#include <span>
#include <vector>

#include "core/queue.h"
#include "policy/fair_share.h"

namespace tessera {

// max over resources with fair_share > 0 of allocated / fair_share. Holding any amount of a
// resource whose fair share is 0 makes it +infinity: the queue is using what it is not due.
// Nothing allocated: 0. Missing entries of either vector read as 0.
double dominant_share(const ResourceVector& fair_share, const ResourceVector& allocated);

// The leaf queues, lowest dominant share first; ties go to the higher queue priority, then to
// the name in byte order, so the order is total and deterministic. `loads` is indexed by queue
// index (its `allocated` is read); `shares` is what compute_fair_shares returned for the tree.
std::vector<QueueIndex> order_queues(const QueueTree& tree, const FairShares& shares, std::span<const QueueLoad> loads);

}  // namespace tessera
