#include "sim/gpu_memory_burst.h"

#include <gtest/gtest.h>

#include "core/resources.h"
#include "sim/embedded_traces.h"

namespace tessera {
namespace {

// 1 MiB of weights, 1 MiB of cache per token, 0.5 s per output token: memory reads in tokens.
InferenceServerModel tiny_server(int horizon) {
  return {.weights_bytes = kMiB,
          .kv_bytes_per_token = kMiB,
          .seconds_per_output_token = 0.5,
          .min_requests_per_second = 1,
          .max_requests_per_second = 1,
          .horizon_seconds = horizon};
}

TEST(GpuMemoryBurst, ARequestHoldsItsPromptAndWhatItGeneratedUntilItEnds) {
  // Arrives at 2 s with 4 prompt tokens and 4 to generate over 2 s: 4 tokens at 2 s, 6 at 3 s, gone at 4 s.
  const std::vector<TimedRequest> one = {{2.0, {4, 4}}};
  EXPECT_EQ(memory_series(tiny_server(6), one), (std::vector<int32_t>{1, 1, 5, 7, 1, 1}));
  // A request arriving between seconds counts from the next second: at 0 s only the first (2 tokens),
  // which ends at 1 s; then the second, 1 + 4 x 0.25 tokens at 1 s and 1 + 4 x 0.75 at 2 s.
  const std::vector<TimedRequest> two = {{0.0, {2, 2}}, {0.5, {1, 4}}};
  EXPECT_EQ(memory_series(tiny_server(4), two), (std::vector<int32_t>{3, 3, 5, 1}));
  // Overlapping requests add up.
  const std::vector<TimedRequest> overlapping = {{0.0, {2, 4}}, {0.0, {3, 2}}};
  EXPECT_EQ(memory_series(tiny_server(3), overlapping), (std::vector<int32_t>{6, 5, 1}));
}

TEST(GpuMemoryBurst, RequestIsTheMedianAndLimitThePeak) {
  const PodMemory pod = pod_memory({10, 30, 20, 50, 20});
  EXPECT_EQ(pod.request_mib, 20);
  EXPECT_EQ(pod.limit_mib, 50);
  EXPECT_EQ(pod_memory({10, 40}).request_mib, 10);  // the lower median of an even count
}

TEST(GpuMemoryBurst, PackingCountsRequestsAgainstMemoryAndLimitsAgainstTheOvercommit) {
  // One device of 100 MiB; pods of request 30 MiB and limit 50 MiB.
  const GpuMemoryCluster cluster{.nodes = 1, .gpus_per_node = 1, .device_bytes = 100 * kMiB};
  const std::vector<PodMemory> pods(4, PodMemory{30, 50, {}});
  EXPECT_EQ(pack_pods(cluster, pods, true, 1000).pods_held, 2);   // static: 2 peaks of 50
  EXPECT_EQ(pack_pods(cluster, pods, false, 1000).pods_held, 2);  // limits: 2 x 50 <= 100
  EXPECT_EQ(pack_pods(cluster, pods, false, 1500).pods_held, 3);  // limits: 3 x 50 <= 150
  EXPECT_EQ(pack_pods(cluster, pods, false, 2000).pods_held, 3);  // requests: 4 x 30 > 100
  const Packing packing = pack_pods(cluster, pods, false, 1500);
  EXPECT_EQ(packing.device_of, (std::vector<int>{0, 0, 0, -1}));
}

TEST(GpuMemoryBurst, ACollisionIsASecondWhenTheDevicesPodsUseMoreThanItsMemory) {
  const GpuMemoryCluster cluster{.nodes = 1, .gpus_per_node = 2, .device_bytes = 100 * kMiB};
  const std::vector<PodMemory> pods = {
      {40, 60, {40, 60, 40}}, {40, 70, {40, 50, 70}}, {10, 10, {10, 10, 10}}, {90, 90, {90, 90, 90}}};
  Packing packing;
  packing.device_of = {0, 0, 1, -1};  // the last pod left out: it counts nowhere
  const Collisions collisions = count_collisions(cluster, pods, packing);
  // Device 0 sums 80, 110, 110: two of its three seconds collide, with two pods on it; device 1 never.
  EXPECT_EQ(collisions.device_seconds, 6);
  EXPECT_EQ(collisions.colliding_device_seconds, 2);
  EXPECT_EQ(collisions.pod_seconds, 9);
  EXPECT_EQ(collisions.colliding_pod_seconds, 4);
  EXPECT_DOUBLE_EQ(collisions.device_share(), 2.0 / 6);
  EXPECT_DOUBLE_EQ(collisions.pod_share(), 4.0 / 9);
}

TEST(GpuMemoryBurst, TheTraceReaderNamesTheLineAndColumn) {
  auto parsed = parse_llm_requests("TIMESTAMP,ContextTokens,GeneratedTokens\nt,374,44\nt,91,16\n", "t.csv");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, (std::vector<LlmRequestSize>{{374, 44}, {91, 16}}));
  auto bad = parse_llm_requests("ContextTokens,GeneratedTokens\n1,2\n3,x\n", "t.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "t.csv:3: column 'GeneratedTokens': 'x' is not a number (expected a token count, a whole number from 0 to "
            "10000000)");
  EXPECT_FALSE(parse_llm_requests("Context,Generated\n1,2\n", "t.csv").ok());
  EXPECT_FALSE(parse_llm_requests("ContextTokens,GeneratedTokens\n", "t.csv").ok());
  auto embedded = parse_llm_requests(embedded_llm_requests(), kEmbeddedLlmRequestsName);
  ASSERT_TRUE(embedded.ok());
  EXPECT_EQ(embedded->size(), 861u);
}

TEST(GpuMemoryBurst, StaticLimitsNeverCollideAndRatioOneHoldsWhatStaticHolds) {
  GpuMemoryOptions options;
  options.cluster.nodes = 1;
  options.model.horizon_seconds = 600;
  options.tuning_seeds = {1};
  options.report_seeds = {2};
  options.overcommit_milli = {1000, 1500};
  auto trace = parse_llm_requests(embedded_llm_requests(), kEmbeddedLlmRequestsName);
  ASSERT_TRUE(trace.ok());
  auto report = run_gpu_memory_experiment(*trace, options);
  ASSERT_TRUE(report.ok());
  for (const auto* rows : {&report->tuning, &report->report}) {
    ASSERT_EQ(rows->size(), 3u);
    EXPECT_EQ((*rows)[0].collision_device_share, 0);  // peaks fit: nothing ever collides
    EXPECT_EQ((*rows)[1].collision_device_share, 0);  // limits within memory: the same
    EXPECT_GT((*rows)[0].pods_held, 0);
    EXPECT_GE((*rows)[2].pods_held, (*rows)[0].pods_held);
  }
  EXPECT_EQ(report->tuning_requests + report->report_requests, 861);
}

}  // namespace
}  // namespace tessera
