#include <gtest/gtest.h>

#include <memory>

#include "adapter/gpu_memory_metrics.h"

namespace tessera::adapter {
namespace {

TEST(GpuMemoryMetrics, EachPoolsCapacityRequestsLimitsAndCap) {
  auto spec = std::make_shared<ClusterSpec>();
  const GpuModelId model = *spec->models.intern("H100");
  for (int i = 0; i < 2; ++i) {
    NodeSpec node;
    node.name = "n" + std::to_string(i);
    node.allocatable = {64000, 256 * kGiB};
    node.gpus.assign(2, GpuDevice{model, 80 * kGiB});
    spec->nodes.push_back(node);
  }
  spec->nodes[1].labels = {{"scheduling.tessera.dev/node-pool", "inference"}};
  spec->nodes[1].gpu_memory_overcommit_milli = 1500;
  ClusterState cluster(spec);
  PodSpec infer;
  infer.gpu = GpuRequest::memory(20 * kGiB, 40 * kGiB);
  PodSpec half;
  half.gpu = GpuRequest::portion(500);
  const PodId a = cluster.add_pod(infer);
  const PodId b = cluster.add_pod(half);
  cluster.bind(a, Binding::on_device(1, 0, infer.gpu, 80 * kGiB));
  cluster.bind(b, Binding::on_device(0, 1, half.gpu, 80 * kGiB));

  const auto pools = gpu_memory_by_pool(cluster);
  ASSERT_EQ(pools.size(), 2u);
  const PoolGpuMemory& inference = pools.at("inference");
  EXPECT_EQ(inference.capacity_bytes, 160.0 * kGiB);
  EXPECT_EQ(inference.requested_bytes, 20.0 * kGiB);
  EXPECT_EQ(inference.limit_bytes, 40.0 * kGiB);
  EXPECT_EQ(inference.limit_cap_bytes, 240.0 * kGiB);
  const PoolGpuMemory& fallback = pools.at("default");
  EXPECT_EQ(fallback.requested_bytes, 40.0 * kGiB);  // a portion's share of its device
  EXPECT_EQ(fallback.limit_bytes, 40.0 * kGiB);
  EXPECT_EQ(fallback.limit_cap_bytes, 160.0 * kGiB);

  const GaugeSamples samples = gpu_memory_samples(pools);
  ASSERT_EQ(samples.size(), 8u);
  EXPECT_EQ(samples[0].first, (std::map<std::string, std::string>{{"measure", "capacity"}, {"pool", "default"}}));
}

TEST(GpuMemoryMetrics, PendingForLimitsCountsWorkloadsWhoseNodesHadRequestRoomOnly) {
  CycleResult result;
  PendingWorkload limited;
  limited.reason.nodes.nodes_by_predicate[static_cast<size_t>(Predicate::kGpuMemoryLimit)] = 3;
  PendingWorkload quota;
  quota.reason.code = PendingCode::kQueueLimit;
  result.pending = {limited, quota, limited};
  EXPECT_EQ(gpu_memory_limit_pending(result), 2);
}

}  // namespace
}  // namespace tessera::adapter
