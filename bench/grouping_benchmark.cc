// What grouping pods by their controllers costs a Kubernetes cycle: the snapshot of 10,000
// pending pods made by 2,500 Jobs (4 pods each), beside the same pods in 2,500 PodGroups, on
// 1,250 nodes of 8 GPUs. The difference is the grouping's cost per cycle.
//   build/bench/tessera_adapter_bench [--benchmark_filter=Snapshot]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <memory>

#include "adapter/world_snapshot.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

constexpr int kNodes = 1250;
constexpr int kGangs = 2500;
constexpr int kPodsPerGang = 4;

kube::ObjectPtr shared(json value) { return std::make_shared<const json>(std::move(value)); }

json node(int index) {
  const std::string name = fmt::format("node-{}", index);
  return {{"metadata",
           {{"name", name}, {"labels", {{"nvidia.com/gpu.product", "H100"}, {"nvidia.com/gpu.memory", "81920"}}}}},
          {"status",
           {{"allocatable", {{"cpu", "96"}, {"memory", "768Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json pod(int gang, int index, bool by_job) {
  json metadata = {{"name", fmt::format("train-{}-{}", gang, index)},
                   {"namespace", "ml"},
                   {"uid", fmt::format("pod-{}-{}", gang, index)},
                   {"creationTimestamp", "2027-01-15T07:00:00Z"},
                   {"labels", {{"scheduling.tessera.dev/queue", "team"}}}};
  if (by_job) {
    metadata["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                {"kind", "Job"},
                                                {"name", fmt::format("train-{}", gang)},
                                                {"uid", fmt::format("job-{}", gang)},
                                                {"controller", true}}});
  } else {
    metadata["labels"]["scheduling.tessera.dev/pod-group"] = fmt::format("train-{}", gang);
  }
  json container = {
      {"name", "main"},
      {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}}};
  return {{"metadata", metadata},
          {"spec", {{"schedulerName", "tessera"}, {"containers", json::array({container})}}},
          {"status", {{"phase", "Pending"}}}};
}

ObservedObjects world(bool by_job) {
  ObservedObjects observed;
  for (int i = 0; i < kNodes; ++i) observed.nodes[fmt::format("node-{}", i)] = shared(node(i));
  json queue = {{"metadata", {{"name", "team"}}}};
  queue["spec"]["resources"]["gpu"]["deserved"] = kNodes * 8;
  observed.queues["team"] = shared(std::move(queue));
  for (int gang = 0; gang < kGangs; ++gang) {
    const std::string name = fmt::format("train-{}", gang);
    if (by_job) {
      observed.owners.jobs["ml/" + name] =
          shared({{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "job-" + std::to_string(gang)}}},
                  {"spec", {{"parallelism", kPodsPerGang}, {"completions", kPodsPerGang}}}});
    } else {
      observed.pod_groups["ml/" + name] =
          shared({{"metadata", {{"name", name}, {"namespace", "ml"}, {"creationTimestamp", "2027-01-15T07:00:00Z"}}},
                  {"spec", {{"minMember", kPodsPerGang}}}});
    }
    for (int index = 0; index < kPodsPerGang; ++index) {
      observed.pods[fmt::format("ml/train-{}-{}", gang, index)] = shared(pod(gang, index, by_job));
    }
  }
  return observed;
}

void snapshot(benchmark::State& state, bool by_job) {
  const ObservedObjects observed = world(by_job);
  const SchedulerMemory memory;
  for (auto _ : state) {
    auto built = build_snapshot(observed, memory, 1.8e9);
    if (!built || built->workloads.size() != static_cast<size_t>(kGangs)) state.SkipWithError("wrong snapshot");
    benchmark::DoNotOptimize(built);
  }
  state.SetItemsProcessed(state.iterations() * kGangs * kPodsPerGang);
}

void BM_SnapshotOfPodsInPodGroups(benchmark::State& state) { snapshot(state, false); }
void BM_SnapshotOfPodsMadeByJobs(benchmark::State& state) { snapshot(state, true); }
BENCHMARK(BM_SnapshotOfPodsInPodGroups)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SnapshotOfPodsMadeByJobs)->Unit(benchmark::kMillisecond);

// The grouping alone: each pod's workload from its owner.
void BM_OwnedWorkloadPerPod(benchmark::State& state) {
  const ObservedObjects observed = world(true);
  for (auto _ : state) {
    for (const auto& [key, object] : observed.pods) benchmark::DoNotOptimize(owned_workload(*object, observed.owners));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(observed.pods.size()));
}
BENCHMARK(BM_OwnedWorkloadPerPod)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tessera::adapter

BENCHMARK_MAIN();
