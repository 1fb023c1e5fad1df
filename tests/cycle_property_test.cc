// Randomized worlds through many cycles: the safety rules of docs/design.md §4 hold whatever the mix of
// queues, gangs, fractions, priorities and arrivals.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/invariants.h"
#include "scheduler/cycle.h"
#include "scheduler_world.h"

namespace tessera {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;
using testing::WorkloadShape;

int uniform(std::mt19937_64& random, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(random);
}

std::vector<QueueSpec> random_tree(std::mt19937_64& random, double capacity, std::vector<std::string>& leaves) {
  std::vector<QueueSpec> queues;
  const int departments = uniform(random, 1, 3);
  for (int d = 0; d < departments; ++d) {
    const std::string department = fmt::format("dept{}", d);
    const int projects = uniform(random, 0, 3);
    const double deserved = std::floor(capacity / departments * uniform(random, 0, 12) / 10);
    std::optional<double> limit;
    if (uniform(random, 0, 3) == 0) limit = deserved + uniform(random, 0, 8);
    queues.push_back(gpu_queue(department, "", deserved, uniform(random, 0, 2), limit));
    if (uniform(random, 0, 2) == 0) queues.back().reclaim_min_runtime_seconds = uniform(random, 0, 3) * 10.0;
    if (projects == 0) leaves.push_back(department);
    for (int p = 0; p < projects; ++p) {
      const std::string project = fmt::format("{}-p{}", department, p);
      const double project_deserved = std::floor(deserved / projects);
      std::optional<double> project_limit;
      if (uniform(random, 0, 3) == 0) project_limit = project_deserved + uniform(random, 0, 8);
      queues.push_back(gpu_queue(project, department, project_deserved, uniform(random, 0, 2), project_limit));
      queues.back().priority = uniform(random, 0, 1);
      leaves.push_back(project);
    }
  }
  return queues;
}

WorkloadShape random_shape(std::mt19937_64& random, int gpus_per_node) {
  WorkloadShape shape;
  shape.pods = uniform(random, 1, 4);
  if (uniform(random, 0, 4) == 0) {
    shape.gpus_per_pod = 0;
    shape.portion_milli = 250 * uniform(random, 1, 3);
  } else {
    shape.gpus_per_pod = std::min(gpus_per_node, 1 << uniform(random, 0, 3));
  }
  shape.min_member = uniform(random, 1, shape.pods);
  shape.priority = uniform(random, 0, 3);
  shape.preemptible = uniform(random, 0, 4) != 0;
  return shape;
}

// Asserts the rules on one cycle's result; returns false (after reporting) on a violation.
void check_cycle(SchedulerWorld& world, const CycleResult& result, const CycleOptions& options, int world_index,
                 double now) {
  const std::string where = fmt::format("world {} at t={}", world_index, now);
  testing::assert_sound(world, where);
  if (::testing::Test::HasFatalFailure()) return;
  std::map<WorkloadId, int64_t> evicted_for;
  for (const Eviction& eviction : result.evictions) {
    const Workload& victim = world.workloads()[eviction.workload];
    ASSERT_TRUE(victim.spec.preemptible) << where << ": evicted non-preemptible " << victim.spec.name;
    if (eviction.whole_workload && !eviction.moved) {
      ASSERT_EQ(world.bound(eviction.workload), 0) << where << ": part of a gang evicted: " << victim.spec.name;
    }
    if (!eviction.moved) evicted_for[eviction.beneficiary] += eviction.gpu_milli;
  }
  for (const auto& [beneficiary, milli] : evicted_for) {
    int64_t needed = 0;
    for (PodId pod : world.workloads()[beneficiary].gang()) needed += world.cluster().pod(pod).gpu.nominal_milli();
    const double whole = std::ceil(static_cast<double>(needed) / 1000) * 1000;
    ASSERT_LE(static_cast<double>(milli), options.max_evicted_gpu_ratio * whole + 1e-9)
        << where << ": evicted " << milli << " milli-GPU for a gang needing " << needed;
  }
  // None evicted in vain: with one beneficiary (so nothing was freed after its statement), every
  // victim's old place is now taken by something.
  if (evicted_for.size() == 1) {
    std::map<PodId, Binding> old_binding;
    for (const Operation& operation : result.operations) {
      if (operation.kind == Operation::Kind::kEvict) old_binding[operation.pod] = operation.binding;
    }
    for (const Eviction& eviction : result.evictions) {
      if (eviction.moved) continue;
      // Put back one pod after the other, as a reprieve would.
      std::map<NodeIndex, NodeState> scratch;
      bool all_fit = true;
      for (PodId pod : eviction.pods) {
        const Binding& binding = old_binding.at(pod);
        NodeState& state = scratch.try_emplace(binding.node, world.cluster().node_state(binding.node)).first->second;
        const PodSpec& spec = world.cluster().pod(pod);
        bool fits =
            state.free.cpu_milli >= spec.request.cpu_milli && state.free.memory_bytes >= spec.request.memory_bytes;
        for (int16_t device : binding.devices)
          fits = fits && state.gpu_used_milli[device] + binding.milli_per_device <= 1000;
        if (!fits) {
          all_fit = false;
          break;
        }
        state.apply(spec, binding);
      }
      ASSERT_FALSE(all_fit) << where << ": " << world.workloads()[eviction.workload].spec.name
                            << " was evicted though its place is still free";
    }
  }
  // A queue that lost work to reclaim keeps at least its fair share of GPUs (every workload
  // here asks for GPUs, so GPUs are the key resource); preemption inside a queue may take it
  // lower, so queues that also preempted are left out. Work reclaim moved is not lost.
  std::set<QueueIndex> reclaimed, preempted;
  for (const Eviction& eviction : result.evictions) {
    const QueueIndex queue = world.workloads()[eviction.workload].queue;
    if (eviction.action == Action::kReclaim && !eviction.moved) reclaimed.insert(queue);
    if (eviction.action == Action::kPreempt) preempted.insert(queue);
  }
  for (QueueIndex queue : reclaimed) {
    if (preempted.count(queue)) continue;
    ASSERT_GE(result.allocated_after[queue][0], result.shares.share(queue, 0) - 1e-6)
        << where << ": reclaim took queue " << world.tree().spec(queue).name << " below its fair share";
  }
  const QueueTree& tree = world.tree();
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    const QueueQuota& quota = tree.quota(queue, 0);
    if (quota.limit) {
      ASSERT_LE(result.allocated_after[queue][0], *quota.limit + 1e-6)
          << where << ": queue " << tree.spec(queue).name << " over its limit";
    }
  }
  // Non-preemptible GPU work stays within deserved quota, on every queue of the path.
  std::vector<double> non_preemptible(tree.size(), 0);
  for (WorkloadId id : world.workloads().active()) {
    const Workload& workload = world.workloads()[id];
    if (workload.spec.preemptible) continue;
    double gpus = 0;
    for (PodId pod : workload.pods) {
      if (const auto& binding = world.cluster().binding(pod)) gpus += static_cast<double>(binding->gpu_milli()) / 1000;
    }
    for (QueueIndex queue = workload.queue; queue != QueueTree::kNoParent; queue = tree.parent(queue))
      non_preemptible[queue] += gpus;
  }
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    ASSERT_LE(non_preemptible[queue], tree.quota(queue, 0).deserved + 1e-6)
        << where << ": non-preemptible work of " << tree.spec(queue).name << " above its deserved quota";
  }
}

// Nodes reserved when the cycle began are used by allocate only for their holder (no workload
// here has a time limit, so none may backfill).
void check_reservations_held(SchedulerWorld& world, const CycleResult& result, const std::vector<Reservation>& before,
                             int world_index, double now) {
  std::map<NodeIndex, WorkloadId> holder_of;
  for (const Reservation& reservation : before) {
    for (NodeIndex node : reservation.nodes) holder_of[node] = reservation.workload;
  }
  for (const Start& start : result.started) {
    if (start.action != Action::kAllocate) continue;
    for (PodId pod : world.workloads()[start.workload].pods) {
      const auto& binding = world.cluster().binding(pod);
      if (!binding) continue;
      auto holder = holder_of.find(binding->node);
      ASSERT_TRUE(holder == holder_of.end() || holder->second == start.workload)
          << "world " << world_index << " at t=" << now << ": " << world.workloads()[start.workload].spec.name
          << " was placed on node " << binding->node << ", reserved for "
          << world.workloads()[holder->second].spec.name;
    }
  }
}

TEST(CycleProperties, RandomWorldsKeepEverySafetyRule) {
  std::mt19937_64 random(20261121);
  CycleOptions options;
  options.reservations.min_wait_seconds = 30;  // the worlds live 8 cycles of 15 s
  options.reservations.min_gpus = 0;           // any waiting workload may reserve
  int evictions = 0, started = 0, reservations = 0;
  for (int world_index = 0; world_index < 1500; ++world_index) {
    const int gpus_per_node = 1 << uniform(random, 1, 3);
    const int nodes = uniform(random, 1, 6);
    std::vector<std::string> leaves;
    std::vector<QueueSpec> queues = random_tree(random, nodes * gpus_per_node, leaves);
    SchedulerWorld world(uniform_cluster(nodes, gpus_per_node, 64000), queues,
                         uniform(random, 0, 1) ? "best-fit" : "tessera");
    double now = 0;
    for (int cycle = 0; cycle < 8; ++cycle) {
      const int arrivals = uniform(random, 0, 6);
      for (int a = 0; a < arrivals; ++a) {
        world.submit(fmt::format("w{}-{}", cycle, a),
                     leaves[static_cast<size_t>(uniform(random, 0, static_cast<int>(leaves.size()) - 1))],
                     random_shape(random, gpus_per_node), now);
      }
      // Some running workloads finish.
      std::vector<WorkloadId> active = world.workloads().active();
      for (WorkloadId id : active) {
        if (world.running(id) && uniform(random, 0, 5) == 0) world.workloads().finish(id, world.cluster());
      }
      const std::vector<Reservation> reserved_before = world.reservations();
      CycleResult result = world.cycle(now, options);
      check_cycle(world, result, options, world_index, now);
      check_reservations_held(world, result, reserved_before, world_index, now);
      if (::testing::Test::HasFatalFailure()) return;
      reservations += result.reservations_made;
      evictions += static_cast<int>(result.evictions.size());
      started += static_cast<int>(result.started.size());
      now += 15;
    }
  }
  // The worlds exercise the eviction actions, not only allocate.
  EXPECT_GT(evictions, 500);
  EXPECT_GT(started, 5000);
  EXPECT_GT(reservations, 100);
}

TEST(CycleProperties, AStarvedQueueIsServedWithinOneCycleWhenTheRoomIsReclaimable) {
  std::mt19937_64 random(7);
  for (int world_index = 0; world_index < 2000; ++world_index) {
    const int gpus_per_node = 1 << uniform(random, 1, 3);
    const int nodes = uniform(random, 1, 8);
    const int capacity = nodes * gpus_per_node;
    // A borrower with nothing deserved fills the cluster with preemptible one-GPU jobs of mixed
    // priorities and ages; the starved queue deserves room for its gang. Every borrowed GPU is
    // reclaimable: the borrower's fair share is what the starved queue does not claim.
    const int pods = uniform(random, 1, 4);
    const int gpus_per_pod = std::min(gpus_per_node, 1 << uniform(random, 0, 3));
    const int deserved = std::min(capacity, pods * gpus_per_pod + uniform(random, 0, 4));
    if (pods * gpus_per_pod > capacity || pods > nodes * (gpus_per_node / gpus_per_pod)) continue;
    std::vector<QueueSpec> queues = {gpu_queue("research", "", deserved), gpu_queue("starved", "research", deserved),
                                     gpu_queue("borrowers", "", 0), gpu_queue("b1", "borrowers", 0)};
    SchedulerWorld world(uniform_cluster(nodes, gpus_per_node, 256000), queues,
                         uniform(random, 0, 1) ? "best-fit" : "spread");
    for (int i = 0; i < capacity; ++i) {
      world.submit(fmt::format("borrow-{}", i), "b1", {.priority = uniform(random, 0, 5)}, uniform(random, 0, 100));
    }
    world.cycle(200);
    ASSERT_EQ(world.gpus_of("b1"), capacity) << "world " << world_index;
    const WorkloadId starved =
        world.submit("starved-job", "starved", {.pods = pods, .gpus_per_pod = gpus_per_pod}, 300);
    CycleResult result = world.cycle(310);
    ASSERT_TRUE(world.running(starved)) << "world " << world_index << ": " << nodes << "x" << gpus_per_node << " gang "
                                        << pods << "x" << gpus_per_pod << " deserved " << deserved;
    int evicted_gpus = 0;
    for (const Eviction& eviction : result.evictions) evicted_gpus += static_cast<int>(eviction.gpu_milli / 1000);
    // One-GPU victims: exactly as many evicted as the gang needs.
    EXPECT_EQ(evicted_gpus, pods * gpus_per_pod) << "world " << world_index;
  }
}

}  // namespace
}  // namespace tessera
