// How many more inference pods a cluster holds when each asks for GPU memory as a request (its
// typical need) and a limit (its peak) than when each reserves its peak, and how often the pods on
// one device then burst past its memory together (the node's resolver must act). The memory of
// each pod over time comes from LLM inference requests of a public trace
// (data/azure-llm-inference-2023/README.md): weights plus the KV cache of the requests it serves.
// docs/gpu-memory-sim.md states the model, its constants and where each comes from.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace tessera {

// One request of the trace: its prompt and the tokens generated for it.
struct LlmRequestSize {
  int context_tokens = 0;
  int generated_tokens = 0;
  friend bool operator==(const LlmRequestSize&, const LlmRequestSize&) = default;
};

// A CSV with a header naming ContextTokens and GeneratedTokens (other columns, such as the
// trace's TIMESTAMP, are ignored; sim/csv_records.h). Errors name `source`, the line and the column.
Result<std::vector<LlmRequestSize>> parse_llm_requests(std::string_view text, std::string_view source);

// One LLM inference server that allocates its KV cache as requests need it.
struct InferenceServerModel {
  int64_t weights_bytes = 0;       // resident for the pod's whole life
  int64_t kv_bytes_per_token = 0;  // key and value of every layer, for one token
  double seconds_per_output_token = 0;
  double min_requests_per_second = 0;  // each pod's own rate is drawn uniformly in [min, max]
  double max_requests_per_second = 0;
  int horizon_seconds = 0;
};

// The model of docs/gpu-memory-sim.md: Llama-2-7B in 16-bit floats, 30 ms per output token,
// 0.05 to 0.5 requests per second per pod, one hour.
InferenceServerModel llama2_7b_server();

struct TimedRequest {
  double arrival_seconds = 0;
  LlmRequestSize size;
};

// GPU memory in MiB (rounded up) at each whole second of [0, horizon): the weights, plus for each
// request in progress its prompt and the tokens it has generated so far; a request generates
// its tokens evenly over generated × seconds_per_output_token seconds, then frees its cache.
std::vector<int32_t> memory_series(const InferenceServerModel& model, std::span<const TimedRequest> requests);

// Requests arriving as a Poisson process of `rate` per second over the horizon, each of a size
// drawn from `sizes` with replacement.
std::vector<TimedRequest> draw_requests(const InferenceServerModel& model, std::span<const LlmRequestSize> sizes,
                                        double rate, uint64_t seed);

// What a pod asks for, from its memory over time: the median as the request, the peak as the
// limit (MiB).
struct PodMemory {
  int32_t request_mib = 0;
  int32_t limit_mib = 0;
  std::vector<int32_t> series_mib;
};
PodMemory pod_memory(std::vector<int32_t> series_mib);

struct GpuMemoryCluster {
  int nodes = 16;
  int gpus_per_node = 8;
  int64_t device_bytes = int64_t{80} << 30;
};

// Where the pods went when placed one by one, in order, by the engine's placer (best-fit), each
// asking for request = limit = its peak (`static_limits`) or for its request and limit under
// `overcommit_milli`. A pod that fits nowhere is left out; the next may still fit.
struct Packing {
  int pods_held = 0;
  std::vector<int> device_of;  // per pod: cluster-wide device index, -1 when left out
};
Packing pack_pods(const GpuMemoryCluster& cluster, std::span<const PodMemory> pods, bool static_limits,
                  int overcommit_milli);

// How often the pods on one device used more than its memory together: the share of device-seconds
// (devices holding pods) and of pod-seconds spent on such a device.
struct Collisions {
  int64_t device_seconds = 0;
  int64_t colliding_device_seconds = 0;
  int64_t pod_seconds = 0;
  int64_t colliding_pod_seconds = 0;
  double device_share() const { return device_seconds > 0 ? double(colliding_device_seconds) / device_seconds : 0; }
  double pod_share() const { return pod_seconds > 0 ? double(colliding_pod_seconds) / pod_seconds : 0; }
};
Collisions count_collisions(const GpuMemoryCluster& cluster, std::span<const PodMemory> pods, const Packing& packing);

struct GpuMemoryOptions {
  GpuMemoryCluster cluster;
  InferenceServerModel model = llama2_7b_server();
  std::vector<int> overcommit_milli = {1000, 1250, 1500, 2000};
  std::vector<uint64_t> tuning_seeds = {1, 2, 3};
  std::vector<uint64_t> report_seeds = {4, 5, 6};
  double max_collision_share = 0.01;  // of device-seconds, for the ratio chosen on the tuning seeds
  int pods_per_device = 8;            // pods offered: enough that none of the ratios holds them all
};

// Mean over seeds of one way to ask for memory.
struct GpuMemoryRow {
  std::string label;         // "static (peak)" or "request/limit 1.5"
  int overcommit_milli = 0;  // 0 for static
  double pods_held = 0;
  double gain = 0;  // pods held over static's, minus one
  double collision_device_share = 0;
  double collision_pod_share = 0;
};

struct GpuMemoryReport {
  int requests_in_trace = 0;
  int tuning_requests = 0;  // the trace's requests 1, 3, 5...: drawn from on the tuning seeds
  int report_requests = 0;  // its requests 2, 4, 6...: drawn from on the report seeds
  int pods_offered = 0;
  std::vector<GpuMemoryRow> tuning;
  std::vector<GpuMemoryRow> report;
  int chosen_overcommit_milli = 1000;  // the largest ratio within max_collision_share on the tuning seeds
};

// Fails on an empty trace, a ratio out of [1, 8] or no seeds.
Result<GpuMemoryReport> run_gpu_memory_experiment(std::span<const LlmRequestSize> trace,
                                                  const GpuMemoryOptions& options);

}  // namespace tessera
