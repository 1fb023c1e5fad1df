// The victim search's pruning (VictimGpus; CycleOptions::prune_victim_search) changes no decision:
// worlds run with it and without it must bind, evict, move, start and reserve the same, in the
// same order, and give the same reasons for what still waits.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "scheduler/cycle.h"
#include "scheduler/victim_gpus.h"
#include "scheduler_world.h"
#include "sim/synthetic_cluster.h"

namespace tessera {
namespace {

using testing::SchedulerWorld;
using testing::WorkloadShape;

CycleOptions unpruned() {
  CycleOptions options;
  options.prune_victim_search = false;
  return options;
}

void expect_same_decisions(const CycleResult& pruned, const CycleResult& plain, const QueueTree& tree,
                           const std::string& where) {
  ASSERT_EQ(pruned.operations.size(), plain.operations.size()) << where;
  for (size_t i = 0; i < plain.operations.size(); ++i) {
    const Operation& a = pruned.operations[i];
    const Operation& b = plain.operations[i];
    ASSERT_TRUE(a.kind == b.kind && a.pod == b.pod && a.binding == b.binding) << where << ": operation " << i;
  }
  ASSERT_EQ(pruned.evictions.size(), plain.evictions.size()) << where;
  for (size_t i = 0; i < plain.evictions.size(); ++i) {
    const Eviction& a = pruned.evictions[i];
    const Eviction& b = plain.evictions[i];
    ASSERT_TRUE(a.workload == b.workload && a.pods == b.pods && a.whole_workload == b.whole_workload &&
                a.moved == b.moved && a.action == b.action && a.beneficiary == b.beneficiary &&
                a.gpu_milli == b.gpu_milli)
        << where << ": eviction " << i;
  }
  ASSERT_EQ(pruned.started.size(), plain.started.size()) << where;
  for (size_t i = 0; i < plain.started.size(); ++i) {
    ASSERT_TRUE(pruned.started[i].workload == plain.started[i].workload &&
                pruned.started[i].action == plain.started[i].action)
        << where << ": start " << i;
  }
  ASSERT_EQ(pruned.reservations.size(), plain.reservations.size()) << where;
  for (size_t i = 0; i < plain.reservations.size(); ++i) {
    ASSERT_TRUE(pruned.reservations[i].workload == plain.reservations[i].workload &&
                pruned.reservations[i].nodes == plain.reservations[i].nodes)
        << where << ": reservation " << i;
  }
  ASSERT_EQ(pruned.pending.size(), plain.pending.size()) << where;
  for (size_t i = 0; i < plain.pending.size(); ++i) {
    ASSERT_EQ(pruned.pending[i].workload, plain.pending[i].workload) << where;
    ASSERT_EQ(describe(pruned.pending[i].reason, tree), describe(plain.pending[i].reason, tree)) << where;
  }
  for (int action = 0; action < kActionCount; ++action) {
    ASSERT_EQ(pruned.actions[action].started, plain.actions[action].started) << where;
    ASSERT_EQ(pruned.actions[action].evictions, plain.actions[action].evictions) << where;
  }
}

// One synthetic world's cycle, pruned and plain, compared; the plain one's evictions by action.
std::array<int, kActionCount> evictions_if_same(const SyntheticSpec& spec) {
  const SyntheticWorld world = make_synthetic_world(spec);
  Result<LoadedWorld> pruned_world = load_world(world, "tessera");
  Result<LoadedWorld> plain_world = load_world(world, "tessera");
  EXPECT_TRUE(pruned_world.ok() && plain_world.ok());
  if (!pruned_world.ok() || !plain_world.ok()) return {};
  Result<CycleResult> pruned = run_cycle(pruned_world->inputs(), CycleOptions{});
  Result<CycleResult> plain = run_cycle(plain_world->inputs(), unpruned());
  EXPECT_TRUE(pruned.ok() && plain.ok());
  if (!pruned.ok() || !plain.ok()) return {};
  expect_same_decisions(*pruned, *plain, *plain_world->queues, fmt::format("seed {}", spec.seed));
  std::array<int, kActionCount> evictions{};
  for (int action = 0; action < kActionCount; ++action) evictions[action] = plain->actions[action].evictions;
  return evictions;
}

// The benchmark's worlds, small: full clusters, queues far above and below their share,
// gangs, fractions, elastic workloads, notebooks, three priorities.
TEST(VictimSearch, PruningDecidesAsThePlainSearchOnSyntheticClusters) {
  int reclaimed = 0, preempted = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SyntheticSpec spec;
    spec.nodes = static_cast<int>(20 + 15 * (seed % 5));
    spec.queues = static_cast<int>(4 + 6 * (seed % 4));
    spec.pending_pods = spec.nodes * 25;
    spec.running_pods = spec.nodes * (seed % 3 == 0 ? 7 : 12);  // full, or room left
    spec.seed = seed;
    const std::array<int, kActionCount> evictions = evictions_if_same(spec);
    if (::testing::Test::HasFatalFailure()) return;
    reclaimed += evictions[static_cast<int>(Action::kReclaim)];
    preempted += evictions[static_cast<int>(Action::kPreempt)];
  }
  // The worlds make the searches work: many victims taken by both actions.
  EXPECT_GT(reclaimed, 300);
  EXPECT_GT(preempted, 20);
}

// The same where CPU runs out before GPUs do (the nodes' CPU cut to 0.5–0.7 of the default's):
// most nodes have a pod's GPUs free, and the search passes over those whose victims it may take
// cannot free the pod's CPU.
TEST(VictimSearch, PruningDecidesAsThePlainSearchWhereCpuRunsOutFirst) {
  int reclaimed = 0;
  for (uint64_t seed = 11; seed <= 19; ++seed) {
    SyntheticSpec spec;
    spec.nodes = static_cast<int>(30 + 15 * (seed % 4));
    spec.queues = static_cast<int>(6 + 5 * (seed % 3));
    spec.pending_pods = spec.nodes * 25;
    spec.running_pods = spec.nodes * 12;
    spec.seed = seed;
    spec.node_cpu_share = 0.5 + 0.1 * static_cast<double>(seed % 3);
    const std::array<int, kActionCount> evictions = evictions_if_same(spec);
    if (::testing::Test::HasFatalFailure()) return;
    reclaimed += evictions[static_cast<int>(Action::kReclaim)];
  }
  EXPECT_GT(reclaimed, 300);
}

int draw(std::mt19937_64& random, int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); }

WorkloadShape drawn_shape(std::mt19937_64& random, int gpus_per_node) {
  WorkloadShape shape;
  shape.pods = draw(random, 1, 4);
  const int kind = draw(random, 0, 5);
  if (kind == 0) {
    shape.gpus_per_pod = 0;
    shape.portion_milli = 250 * draw(random, 1, 3);
  } else if (kind == 1) {
    shape.gpus_per_pod = 0;  // CPU only
  } else {
    shape.gpus_per_pod = std::min(gpus_per_node, 1 << draw(random, 0, 3));
  }
  shape.min_member = draw(random, 1, shape.pods);  // elastic extras beyond it
  shape.priority = 50 * draw(random, 0, 4);
  shape.preemptible = draw(random, 0, 6) != 0;
  return shape;
}

// Where CPU runs out first: pods ask 1 to 6 cores and nodes have 3 per GPU; some workloads of
// several GPU pods have a launcher that asks for none, or elastic extras that ask for none.
struct CpuDraw {
  bool scarce = false;
  int64_t node_cpu_milli(int gpus_per_node) const { return scarce ? 3000 * gpus_per_node : 32000; }
};

// Two copies of one world through many cycles, one pruned and one not, fed the same arrivals
// and departures: queues borrow and are reclaimed from, priorities preempt, gangs move. Returns
// the evictions.
int run_random_cycles(uint64_t seed, int worlds, CpuDraw cpu) {
  std::mt19937_64 random(seed);
  int evictions = 0;
  for (int world_index = 0; world_index < worlds; ++world_index) {
    const int gpus_per_node = 1 << draw(random, 1, 3);
    const int nodes = draw(random, 2, 16);
    const double capacity = nodes * gpus_per_node;
    std::vector<QueueSpec> queues;
    std::vector<std::string> leaves;
    const int departments = draw(random, 1, 3);
    for (int d = 0; d < departments; ++d) {
      const std::string department = fmt::format("d{}", d);
      queues.push_back(testing::gpu_queue(department, "", std::floor(capacity / departments), draw(random, 1, 3)));
      const int projects = draw(random, 1, 4);
      for (int p = 0; p < projects; ++p) {
        // Uneven deserved quotas: some projects borrow, others are owed.
        queues.push_back(testing::gpu_queue(fmt::format("{}-p{}", department, p), department,
                                            std::floor(capacity / departments * draw(random, 0, 6) / 10)));
        if (draw(random, 0, 3) == 0) queues.back().reclaim_min_runtime_seconds = 10.0 * draw(random, 0, 2);
        leaves.push_back(queues.back().name);
      }
    }
    const int64_t node_cpu = cpu.node_cpu_milli(gpus_per_node);
    SchedulerWorld pruned(testing::uniform_cluster(nodes, gpus_per_node, node_cpu), queues, "tessera");
    SchedulerWorld plain(testing::uniform_cluster(nodes, gpus_per_node, node_cpu), queues, "tessera");
    double now = 0;
    for (int cycle = 0; cycle < 6; ++cycle) {
      const int arrivals = draw(random, 0, 3 * nodes);
      for (int a = 0; a < arrivals; ++a) {
        const std::string name = fmt::format("w{}-{}", cycle, a);
        const std::string& leaf = leaves[static_cast<size_t>(draw(random, 0, static_cast<int>(leaves.size()) - 1))];
        WorkloadShape shape = drawn_shape(random, gpus_per_node);
        if (cpu.scarce) {
          shape.cpu_milli = 1000 * draw(random, 1, 6);
          const int mixed = shape.pods > 1 ? draw(random, 0, 3) : 0;
          shape.cpu_only_first = mixed == 1;
          shape.cpu_only_extras = mixed == 2;
        }
        pruned.submit(name, leaf, shape, now);
        plain.submit(name, leaf, shape, now);
      }
      for (WorkloadId id : plain.workloads().active()) {
        if (!plain.running(id) || draw(random, 0, 7) != 0) continue;
        pruned.workloads().finish(id, pruned.cluster());
        plain.workloads().finish(id, plain.cluster());
      }
      const CycleResult with = pruned.cycle(now);
      const CycleResult without = plain.cycle(now, unpruned());
      expect_same_decisions(with, without, plain.tree(), fmt::format("world {} cycle {}", world_index, cycle));
      if (::testing::Test::HasFatalFailure()) return evictions;
      evictions += static_cast<int>(without.evictions.size());
      now += 20;
    }
  }
  return evictions;
}

TEST(VictimSearch, PruningDecidesAsThePlainSearchThroughRandomCycles) {
  EXPECT_GT(run_random_cycles(20261126, 150, CpuDraw{}), 1000);
}

TEST(VictimSearch, PruningDecidesAsThePlainSearchThroughRandomCyclesWhereCpuRunsOutFirst) {
  EXPECT_GT(run_random_cycles(20261128, 100, CpuDraw{.scarce = true}), 500);
}

// The search stops before its hundred candidates once no node could beat the best one's victims
// (one pod, no more GPUs than the pod needs): not while a node further on has GPUs free and a
// victim holding fewer. Here the first node visited frees a whole GPU by evicting a whole-GPU pod,
// and the last one has half a GPU free beside a half-GPU pod, which is cheaper to take. (A
// CPU-only workload of lower priority, which reclaim may not take, keeps the victims above the
// lowest priority running, where the search stops whatever the GPUs.)
TEST(VictimSearch, ReclaimTakesTheSmallerVictimPastAnEqualOne) {
  SchedulerWorld world(testing::uniform_cluster(3, 1, 32000),
                       {testing::gpu_queue("owed", "", 3), testing::gpu_queue("borrower", "", 0)}, "tessera");
  WorkloadShape whole;
  whole.priority = 100;
  const WorkloadId first = world.submit("whole-a", "borrower", whole);
  const WorkloadId second = world.submit("whole-b", "borrower", whole);
  WorkloadShape cpu_only;
  cpu_only.gpus_per_pod = 0;
  cpu_only.priority = 50;
  world.submit("cpu-only", "owed", cpu_only);
  world.cycle(0);
  WorkloadShape half = whole;
  half.gpus_per_pod = 0;
  half.portion_milli = 500;
  const WorkloadId smaller = world.submit("half-a", "borrower", half);
  const WorkloadId leaving = world.submit("half-b", "borrower", half);
  world.cycle(0);
  ASSERT_TRUE(world.running(first) && world.running(second) && world.running(smaller) && world.running(leaving));
  const NodeIndex last = world.cluster().binding(world.workloads()[smaller].pods.front())->node;
  // The whole-GPU pods come first in the search's order, which starts at node 0.
  ASSERT_EQ(last, 2);
  world.workloads().finish(leaving, world.cluster());
  // Owed's demand (1 GPU now and 2 that cannot run on these nodes) gives it the whole cluster as
  // its fair share: the borrower may lose every GPU it holds.
  const WorkloadId pending = world.submit("wants-one", "owed", whole, 10);
  WorkloadShape two = whole;
  two.gpus_per_pod = 2;
  world.submit("wants-two", "owed", two, 10);
  const CycleResult result = world.cycle(10);
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(result.evictions.front().workload, smaller);
  EXPECT_EQ(result.evictions.front().action, Action::kReclaim);
  EXPECT_TRUE(world.running(pending));
  EXPECT_TRUE(world.running(first) && world.running(second));
}

// Where the node's CPU, not its GPUs, stops the pod (a GPU is free there), reclaim frees the CPU
// by taking one elastic extra of the borrowing queue: the search's bound on the CPU that victims
// could free counts what the units of the queue hold on the node.
TEST(VictimSearch, ReclaimFreesCpuWhereAGpuIsFreeByTakingAnExtra) {
  SchedulerWorld world(testing::uniform_cluster(1, 5, 8000),
                       {testing::gpu_queue("owed", "", 5), testing::gpu_queue("borrower", "", 0)}, "tessera");
  WorkloadShape elastic;
  elastic.pods = 4;
  elastic.min_member = 1;
  elastic.cpu_milli = 2000;  // four pods take the node's 8 cores and leave a GPU free
  const WorkloadId borrowed = world.submit("elastic", "borrower", elastic);
  world.cycle(0);
  ASSERT_TRUE(world.running(borrowed));
  for (PodId pod : world.workloads()[borrowed].pods) ASSERT_TRUE(world.cluster().binding(pod).has_value());
  // Owed asks for 2 GPUs in all: the borrower keeps 3 and may lose one, an extra's.
  WorkloadShape one;
  one.cpu_milli = 2000;
  const WorkloadId first = world.submit("first", "owed", one, 10);
  const WorkloadId second = world.submit("second", "owed", one, 10);
  const CycleResult result = world.cycle(10);
  ASSERT_EQ(result.evictions.size(), 1u);
  EXPECT_EQ(result.evictions.front().workload, borrowed);
  EXPECT_FALSE(result.evictions.front().whole_workload);
  EXPECT_EQ(result.evictions.front().action, Action::kReclaim);
  EXPECT_TRUE(world.running(first));
  EXPECT_FALSE(world.running(second));
}

// The nodes VictimGpus lists for the chosen givers are exactly those where a chosen queue's
// units of the level hold GPUs now, and what it says they hold on a node within the first levels
// is their sum, as counted from scratch, through random changes and choices.
TEST(VictimSearch, GpuNodesFollowWhatTheUnitsHold) {
  std::mt19937_64 random(11);
  for (int round = 0; round < 200; ++round) {
    const int nodes = draw(random, 1, 150);
    const int queues = draw(random, 1, 6);
    const int priorities = draw(random, 1, 12);  // more than kMaxLevels: levels share priorities
    struct Held {
      NodeIndex node;
      QueueIndex queue;
      int priority;
      int64_t milli;
      int64_t unit_milli;
    };
    std::vector<Held> held;
    VictimGpus gpus(static_cast<size_t>(nodes), static_cast<size_t>(queues));
    for (int i = draw(random, 0, 300); i > 0; --i) {
      const int64_t unit_milli = draw(random, 0, 4) * 500;
      held.push_back({draw(random, 0, nodes - 1), static_cast<QueueIndex>(draw(random, 0, queues - 1)),
                      10 * draw(random, 0, priorities - 1), unit_milli / draw(random, 1, 2), unit_milli});
      gpus.add(held.back().node, held.back().queue, held.back().priority, held.back().milli, held.back().unit_milli);
    }
    gpus.finish();
    for (int step = 0; step < 20; ++step) {
      // Some units go.
      for (Held& unit : held) {
        if (unit.milli == 0 || draw(random, 0, 4) != 0) continue;
        gpus.change(unit.node, unit.queue, unit.priority, -unit.milli);
        unit.milli = 0;
      }
      std::vector<int64_t> cap(static_cast<size_t>(queues));
      for (int64_t& c : cap) c = draw(random, 0, 3) == 0 ? INT64_MIN : 500 * draw(random, 0, 5);
      gpus.choose_givers(cap);
      // Per node: what the chosen queues' units hold within the first levels (index: levels).
      std::vector<std::vector<int64_t>> chosen_within(static_cast<size_t>(nodes),
                                                      std::vector<int64_t>(gpus.level_count() + 1, 0));
      for (size_t level = 0; level < gpus.level_count(); ++level) {
        const int floor = gpus.level_floor(level);
        const int next_floor = level + 1 < gpus.level_count() ? gpus.level_floor(level + 1) : INT_MAX;
        for (NodeIndex node = 0; node < nodes; ++node) {
          // Per queue of the level: the smallest unit holding GPUs (as added), what it holds here.
          std::vector<int64_t> smallest(static_cast<size_t>(queues), INT64_MAX), here(static_cast<size_t>(queues), 0);
          for (const Held& unit : held) {
            if (unit.priority < floor || unit.priority >= next_floor) continue;
            if (unit.unit_milli > 0) smallest[unit.queue] = std::min(smallest[unit.queue], unit.unit_milli);
            if (unit.node == node) here[unit.queue] += unit.milli;
          }
          bool expected = false;
          int64_t chosen_here = 0;
          for (int q = 0; q < queues; ++q) {
            expected |= here[q] > 0 && cap[q] >= smallest[q];
            if (cap[q] >= smallest[q]) chosen_here += here[q];
          }
          const bool listed = (gpus.nodes_of(level)[node / 64] >> (node % 64) & 1) != 0;
          ASSERT_EQ(listed, expected) << "round " << round << " step " << step << " level " << level << " node "
                                      << node;
          std::vector<int64_t>& within = chosen_within[static_cast<size_t>(node)];
          within[level + 1] = within[level] + chosen_here;
        }
      }
      for (NodeIndex node = 0; node < nodes; ++node) {
        for (size_t levels = 0; levels <= gpus.level_count(); ++levels) {
          ASSERT_EQ(gpus.chosen_held_on(node, levels), chosen_within[static_cast<size_t>(node)][levels])
              << "round " << round << " step " << step << " node " << node << " levels " << levels;
        }
      }
      int64_t total = 0;
      for (const Held& unit : held) total += unit.milli;
      int64_t listed_total = 0;
      for (NodeIndex node = 0; node < nodes; ++node) listed_total += gpus.held_on(node);
      ASSERT_EQ(listed_total, total);
    }
  }
}

}  // namespace
}  // namespace tessera
