// One placement decision (Placer::find) per policy on the embedded Alibaba cluster, half full.
//   build/bench/tessera_microbench [--benchmark_filter=fgd]
#include <benchmark/benchmark.h>

#include <random>

#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/policy_registry.h"
#include "sim/scenario_loader.h"

namespace tessera {
namespace {

// The default pods, and the cluster filled to about half its GPUs by first-fit.
struct HalfFullCluster {
  Scenario scenario;
  std::vector<PodSpec> pods;
  std::unique_ptr<ClusterState> cluster;

  HalfFullCluster() {
    scenario = std::move(load_scenario(ScenarioRequest{}).value());
    pods = all_pods(scenario);
    cluster = std::make_unique<ClusterState>(scenario.cluster);
    auto first_fit = std::move(make_policy("first-fit", WorkloadMix()).value());
    Placer placer(*first_fit);
    std::mt19937_64 random(1);
    while (2 * cluster->totals().gpu_allocated_milli < cluster->totals().gpu_capacity_milli) {
      const PodSpec& pod = pods[random() % pods.size()];
      PodId id = cluster->add_pod(pod);
      if (auto binding = placer.find(*cluster, pod)) cluster->bind(id, std::move(*binding));
    }
  }
};

const HalfFullCluster& half_full() {
  static const HalfFullCluster instance;
  return instance;
}

// A fresh placer each time measures the decision without a warm verdict cache (the worst case:
// every node group scored); the cached case is what replays see between placements.
void BM_FindColdCache(benchmark::State& state, const std::string& policy_name) {
  const HalfFullCluster& world = half_full();
  auto policy = std::move(make_policy(policy_name, WorkloadMix::from_pods(world.pods)).value());
  size_t next = 0;
  for (auto _ : state) {
    Placer placer(*policy);
    benchmark::DoNotOptimize(placer.find(*world.cluster, world.pods[next++ % world.pods.size()]));
  }
  state.counters["node_groups"] = static_cast<double>(world.cluster->groups().group_count());
}

void BM_FindWarmCache(benchmark::State& state, const std::string& policy_name) {
  const HalfFullCluster& world = half_full();
  auto policy = std::move(make_policy(policy_name, WorkloadMix::from_pods(world.pods)).value());
  Placer placer(*policy);
  for (const PodSpec& pod : world.pods) benchmark::DoNotOptimize(placer.find(*world.cluster, pod));
  size_t next = 0;
  for (auto _ : state) benchmark::DoNotOptimize(placer.find(*world.cluster, world.pods[next++ % world.pods.size()]));
}

int register_benchmarks() {
  for (const std::string& name : policy_names()) {
    benchmark::RegisterBenchmark(("find_cold/" + name).c_str(), BM_FindColdCache, name)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("find_warm/" + name).c_str(), BM_FindWarmCache, name)->Unit(benchmark::kMicrosecond);
  }
  return 0;
}
const int registered = register_benchmarks();

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
