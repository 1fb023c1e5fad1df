#include "sim/synthetic_cluster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>

#include "core/gpu_supply.h"
#include "engine/invariants.h"

namespace tessera {
namespace {

SyntheticSpec small_spec(uint64_t seed = 7) {
  SyntheticSpec spec;
  spec.nodes = 60;
  spec.pending_pods = 3000;
  spec.running_pods = 2000;
  spec.queues = 18;
  spec.seed = seed;
  return spec;
}

LoadedWorld load(const SyntheticWorld& world, std::string_view policy = "tessera") {
  Result<LoadedWorld> loaded = load_world(world, policy);
  if (!loaded) ADD_FAILURE() << loaded.error().message;
  return std::move(loaded).value();
}

std::vector<std::string> all_invariants(const LoadedWorld& loaded) {
  std::vector<std::string> problems = check_invariants(*loaded.cluster);
  for (WorkloadId id : loaded.workloads->active()) {
    const Workload& workload = (*loaded.workloads)[id];
    for (std::string& problem : check_gang(*loaded.cluster, workload.pods, workload.min_member()))
      problems.push_back(std::move(problem));
  }
  return problems;
}

double leaf_gpus_running(const SyntheticWorld& world, QueueIndex queue, bool non_preemptible_only) {
  double gpus = 0;
  for (const SyntheticWorkload& workload : world.workloads) {
    if (!workload.running || workload.queue != queue) continue;
    if (non_preemptible_only && workload.spec.preemptible) continue;
    for (const Binding& binding : workload.bindings) gpus += static_cast<double>(binding.gpu_milli()) / kMilliPerGpu;
  }
  return gpus;
}

TEST(SyntheticWorld, SameSeedSameWorld) {
  const SyntheticWorld a = make_synthetic_world(small_spec(7));
  const SyntheticWorld b = make_synthetic_world(small_spec(7));
  ASSERT_EQ(a.cluster->nodes.size(), b.cluster->nodes.size());
  for (size_t i = 0; i < a.cluster->nodes.size(); ++i) {
    EXPECT_EQ(a.cluster->nodes[i].name, b.cluster->nodes[i].name);
    EXPECT_EQ(a.cluster->nodes[i].gpus, b.cluster->nodes[i].gpus);
    EXPECT_EQ(a.cluster->nodes[i].allocatable, b.cluster->nodes[i].allocatable);
  }
  ASSERT_EQ(a.queues.size(), b.queues.size());
  for (size_t i = 0; i < a.queues.size(); ++i) {
    EXPECT_EQ(a.queues[i].name, b.queues[i].name);
    EXPECT_EQ(a.queues[i].parent, b.queues[i].parent);
    EXPECT_EQ(a.queues[i].quota, b.queues[i].quota);
  }
  ASSERT_EQ(a.workloads.size(), b.workloads.size());
  for (size_t i = 0; i < a.workloads.size(); ++i) {
    const SyntheticWorkload& x = a.workloads[i];
    const SyntheticWorkload& y = b.workloads[i];
    EXPECT_EQ(x.spec.name, y.spec.name);
    EXPECT_EQ(x.queue, y.queue);
    EXPECT_EQ(x.spec.priority, y.spec.priority);
    EXPECT_EQ(x.spec.preemptible, y.spec.preemptible);
    EXPECT_EQ(x.spec.min_member, y.spec.min_member);
    EXPECT_EQ(x.spec.pods.size(), y.spec.pods.size());
    EXPECT_EQ(x.submitted_at, y.submitted_at);
    EXPECT_EQ(x.running, y.running);
    EXPECT_EQ(x.started_at, y.started_at);
    EXPECT_EQ(x.bindings, y.bindings);
  }
  EXPECT_EQ(a.running_gpu_milli, b.running_gpu_milli);
  EXPECT_EQ(a.pending_gpu_milli, b.pending_gpu_milli);

  const SyntheticWorld other = make_synthetic_world(small_spec(8));
  bool differs = other.workloads.size() != a.workloads.size() || other.running_gpu_milli != a.running_gpu_milli;
  for (size_t i = 0; !differs && i < a.workloads.size(); ++i) {
    differs =
        other.workloads[i].queue != a.workloads[i].queue || other.workloads[i].bindings != a.workloads[i].bindings;
  }
  EXPECT_TRUE(differs) << "seeds 7 and 8 drew the same world";
}

TEST(SyntheticWorld, CountsAsRequested) {
  SyntheticSpec spec;
  spec.nodes = 200;  // 1,600 GPUs: room for every running pod asked for
  spec.pending_pods = 5000;
  spec.running_pods = 800;
  spec.queues = 200;
  const SyntheticWorld world = make_synthetic_world(spec);
  EXPECT_EQ(world.cluster->nodes.size(), 200u);
  EXPECT_EQ(world.cluster->gpu_capacity_milli(), 200 * 8 * kMilliPerGpu);
  EXPECT_EQ(world.running_pods, 800);
  EXPECT_EQ(world.pending_pods, 5000);
  int64_t running_pods = 0;
  int64_t pending_pods = 0;
  int running_workloads = 0;
  for (const SyntheticWorkload& workload : world.workloads) {
    const auto pods = static_cast<int64_t>(workload.spec.pods.size());
    if (workload.running) {
      running_pods += pods;
      ++running_workloads;
      EXPECT_EQ(workload.bindings.size(), workload.spec.pods.size());
      EXPECT_LE(workload.started_at, world.now);
    } else {
      pending_pods += pods;
      EXPECT_TRUE(workload.bindings.empty());
    }
    EXPECT_LE(workload.submitted_at, world.now);
  }
  EXPECT_EQ(running_pods, 800);
  EXPECT_EQ(pending_pods, 5000);
  EXPECT_EQ(running_workloads, world.running_workloads);
  EXPECT_EQ(static_cast<int>(world.workloads.size()) - running_workloads, world.pending_workloads);

  // 200 projects in 10 departments of 20.
  EXPECT_EQ(world.departments, 10);
  std::map<std::string, int> projects;
  for (const QueueSpec& queue : world.queues) {
    if (!queue.parent.empty()) ++projects[queue.parent];
  }
  EXPECT_EQ(projects.size(), 10u);
  for (const auto& [department, count] : projects) EXPECT_EQ(count, 20) << department;

  double popularity = 0;
  for (const PodType& type : world.mix.types()) popularity += type.popularity;
  EXPECT_NEAR(popularity, 1.0, 1e-9);
}

TEST(SyntheticWorld, StopsWhenTheClusterIsFull) {
  SyntheticSpec spec = small_spec();
  spec.running_pods = 100000;
  const SyntheticWorld world = make_synthetic_world(spec);
  EXPECT_LT(world.running_pods, spec.running_pods);
  // First-fit down to quarter-GPU pods leaves little idle.
  EXPECT_GT(world.running_gpu_milli, world.cluster->gpu_capacity_milli() * 95 / 100);
  EXPECT_EQ(world.pending_pods, spec.pending_pods);
}

// Nodes with a share of the default's CPU: every pod still fits a node its GPU models allow, and
// at 0.6 the pods, filling the GPUs, ask more CPU than the cluster has.
TEST(SyntheticWorld, NodesWithLessCpuMakeCpuRunOutFirst) {
  auto asked_share = [](const SyntheticWorld& world) {
    int64_t cpu = 0;
    for (const NodeSpec& node : world.cluster->nodes) cpu += node.allocatable.cpu_milli;
    return cpu_asked_share(world.mix.cpu_per_gpu_milli(), world.cluster->gpu_capacity_milli(), cpu);
  };
  const SyntheticWorld plain = make_synthetic_world(small_spec());
  SyntheticSpec spec = small_spec();
  spec.node_cpu_share = 0.6;
  const SyntheticWorld scarce = make_synthetic_world(spec);
  ASSERT_EQ(scarce.cluster->nodes.size(), plain.cluster->nodes.size());
  for (size_t i = 0; i < plain.cluster->nodes.size(); ++i) {
    const int64_t cores = plain.cluster->nodes[i].allocatable.cpu_milli / 1000;
    EXPECT_EQ(scarce.cluster->nodes[i].allocatable.cpu_milli, std::llround(cores * 0.6) * 1000);
  }
  EXPECT_LT(asked_share(plain), 1);
  EXPECT_GT(asked_share(scarce), 1.1);
  for (const SyntheticWorkload& workload : scarce.workloads) {
    for (const PodSpec& pod : workload.spec.pods) {
      bool fits_some_node = false;
      for (const NodeSpec& node : scarce.cluster->nodes) {
        fits_some_node |= pod.request.fits_in(node.allocatable) && pod.allowed_models.allows(node.gpus.front().model);
      }
      EXPECT_TRUE(fits_some_node) << workload.spec.name;
    }
  }
  Result<LoadedWorld> loaded = load_world(scarce, "tessera");
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(all_invariants(*loaded).empty());
}

TEST(SyntheticWorld, QueuesDeserveTheClusterUnevenly) {
  const SyntheticWorld world = make_synthetic_world(small_spec());
  Result<QueueTree> tree = QueueTree::build(world.queues, world.resources);
  ASSERT_TRUE(tree) << tree.error().message;
  const double gpus = static_cast<double>(world.cluster->gpu_capacity_milli()) / kMilliPerGpu;
  double leaves = 0;
  double departments = 0;
  double smallest = gpus;
  double largest = 0;
  for (QueueIndex queue = 0; queue < tree->size(); ++queue) {
    const QueueQuota& quota = tree->quota(queue, 0);
    EXPECT_GE(quota.over_quota_weight, 1);
    EXPECT_LE(quota.over_quota_weight, 3);
    if (quota.limit) {
      EXPECT_GE(*quota.limit, quota.deserved);
    }
    if (tree->is_leaf(queue)) {
      leaves += quota.deserved;
      smallest = std::min(smallest, quota.deserved);
      largest = std::max(largest, quota.deserved);
    } else {
      departments += quota.deserved;
      double children = 0;
      for (QueueIndex child : tree->children(queue)) children += tree->quota(child, 0).deserved;
      EXPECT_DOUBLE_EQ(quota.deserved, children) << tree->spec(queue).name;
    }
  }
  EXPECT_DOUBLE_EQ(leaves, gpus);
  EXPECT_DOUBLE_EQ(departments, gpus);
  EXPECT_GT(largest, 2 * smallest);

  // Some projects run far above their deserved quota, some far below; notebooks run
  // non-preemptible only within it.
  int above = 0;
  int below = 0;
  for (QueueIndex leaf : tree->leaves()) {
    const double deserved = tree->quota(leaf, 0).deserved;
    const double held = leaf_gpus_running(world, leaf, false);
    above += held > 1.5 * deserved ? 1 : 0;
    below += held < 0.5 * deserved ? 1 : 0;
    EXPECT_LE(leaf_gpus_running(world, leaf, true), deserved + 1e-9) << tree->spec(leaf).name;
  }
  EXPECT_GT(above, 0);
  EXPECT_GT(below, 0);
}

TEST(SyntheticWorld, LoadsWithoutOvercommit) {
  const SyntheticWorld world = make_synthetic_world(small_spec());
  const LoadedWorld loaded = load(world);
  ASSERT_EQ(loaded.workloads->size(), world.workloads.size());
  EXPECT_TRUE(all_invariants(loaded).empty()) << ::testing::PrintToString(all_invariants(loaded));
  EXPECT_EQ(loaded.cluster->totals().gpu_allocated_milli, world.running_gpu_milli);
  for (size_t i = 0; i < world.workloads.size(); ++i) {
    const auto id = static_cast<WorkloadId>(i);
    EXPECT_EQ(loaded.workloads->is_running(id, *loaded.cluster), world.workloads[i].running) << i;
    EXPECT_EQ(loaded.workloads->is_pending(id, *loaded.cluster), !world.workloads[i].running) << i;
    EXPECT_EQ((*loaded.workloads)[id].queue, world.workloads[i].queue);
  }
}

TEST(SyntheticWorld, OneCycleRunsAndStaysSafe) {
  const SyntheticWorld world = make_synthetic_world(small_spec());
  LoadedWorld loaded = load(world);
  Result<CycleResult> result = run_cycle(loaded.inputs());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_FALSE(result->started.empty());
  EXPECT_GT(result->total_seconds, 0);
  EXPECT_TRUE(all_invariants(loaded).empty()) << ::testing::PrintToString(all_invariants(loaded));
  for (const Eviction& eviction : result->evictions) {
    EXPECT_TRUE((*loaded.workloads)[eviction.workload].spec.preemptible) << eviction.workload;
  }
  for (const Start& start : result->started) {
    EXPECT_TRUE(loaded.workloads->is_running(start.workload, *loaded.cluster)) << start.workload;
  }
  for (const PendingWorkload& pending : result->pending) {
    EXPECT_TRUE(loaded.workloads->is_pending(pending.workload, *loaded.cluster)) << pending.workload;
  }
}

TEST(ReclaimWorld, EveryGpuRunsPreemptibleWorkAboveFairShare) {
  ReclaimSpec spec;
  spec.nodes = 20;
  spec.gang_pods = 2;
  Result<SyntheticWorld> world = make_reclaim_world(spec);
  ASSERT_TRUE(world) << world.error().message;
  EXPECT_EQ(world->running_gpu_milli, world->cluster->gpu_capacity_milli());
  EXPECT_EQ(world->pending_workloads, 1);
  const SyntheticWorkload& gang = world->workloads.back();
  EXPECT_FALSE(gang.running);
  EXPECT_EQ(gang.spec.min_member, 2);
  EXPECT_EQ(world->queues[gang.queue].name, "prod-urgent");
  EXPECT_GE(world->queues[gang.queue].quota_for(0).deserved, 16);
  for (size_t i = 0; i + 1 < world->workloads.size(); ++i) {
    EXPECT_TRUE(world->workloads[i].running);
    EXPECT_TRUE(world->workloads[i].spec.preemptible);
    EXPECT_LT(world->workloads[i].started_at, world->now - 600);
  }
  const LoadedWorld loaded = load(*world);
  EXPECT_TRUE(all_invariants(loaded).empty());
}

TEST(ReclaimWorld, TheGangStartsByReclaimWithinTheEvictionBound) {
  for (int gang_pods : {1, 2, 3}) {
    for (uint64_t seed : {1, 2}) {
      ReclaimSpec spec;
      spec.nodes = 20;
      spec.gang_pods = gang_pods;
      spec.seed = seed;
      Result<SyntheticWorld> world = make_reclaim_world(spec);
      ASSERT_TRUE(world) << world.error().message;
      LoadedWorld loaded = load(*world);
      const auto gang = static_cast<WorkloadId>(world->workloads.size() - 1);
      Result<CycleResult> result = run_cycle(loaded.inputs());
      ASSERT_TRUE(result) << result.error().message;
      ASSERT_EQ(result->started.size(), 1u) << "gang of " << gang_pods << ", seed " << seed;
      EXPECT_EQ(result->started[0].workload, gang);
      EXPECT_EQ(result->started[0].action, Action::kReclaim);
      EXPECT_TRUE(loaded.workloads->is_running(gang, *loaded.cluster));
      int64_t evicted_milli = 0;
      for (const Eviction& eviction : result->evictions) {
        EXPECT_FALSE(eviction.moved);
        EXPECT_EQ(eviction.beneficiary, gang);
        evicted_milli += eviction.gpu_milli;
      }
      const int64_t needed_milli = int64_t{gang_pods} * 8 * kMilliPerGpu;
      EXPECT_GE(evicted_milli, needed_milli);
      EXPECT_LE(evicted_milli, 2 * needed_milli);
      EXPECT_TRUE(all_invariants(loaded).empty()) << ::testing::PrintToString(all_invariants(loaded));
    }
  }
}

TEST(ReclaimWorld, RejectsWhatCannotBeBuilt) {
  ReclaimSpec spec;
  spec.nodes = 4;
  spec.gang_pods = 5;
  Result<SyntheticWorld> too_big = make_reclaim_world(spec);
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message.find("does not fit 4 nodes"), std::string::npos) << too_big.error().message;
  spec.gang_pods = 1;
  spec.gpus_per_pod = 9;
  Result<SyntheticWorld> wide = make_reclaim_world(spec);
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().message.find("--gpus-per-pod"), std::string::npos) << wide.error().message;
}

TEST(LoadWorld, UnknownPolicyIsAnError) {
  const SyntheticWorld world = make_synthetic_world(small_spec());
  Result<LoadedWorld> loaded = load_world(world, "worst-fit");
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("unknown policy 'worst-fit'"), std::string::npos);
}

}  // namespace
}  // namespace tessera
