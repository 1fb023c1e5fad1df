#include "sim/gpu_memory_burst.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "core/cluster.h"
#include "core/node_pool.h"
#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/policy_registry.h"
#include "sim/csv_records.h"

namespace tessera {

namespace {

constexpr ColumnSpec kRequestColumns[] = {{"ContextTokens", true}, {"GeneratedTokens", true}};
constexpr IntegerRule kTokensRule{0, 10'000'000, "a token count"};

}  // namespace

Result<std::vector<LlmRequestSize>> parse_llm_requests(std::string_view text, std::string_view source) {
  std::vector<LlmRequestSize> requests;
  Status read = for_each_record(text, source, kRequestColumns, [&](const CsvRecord& record) -> Status {
    auto context = record.integer(0, kTokensRule);
    if (!context) return context.error();
    auto generated = record.integer(1, kTokensRule);
    if (!generated) return generated.error();
    requests.push_back({static_cast<int>(*context), static_cast<int>(*generated)});
    return Ok{};
  });
  if (!read) return read.error();
  if (requests.empty()) return Error{fmt::format("{}: a header and no requests (expected at least one)", source)};
  return requests;
}

InferenceServerModel llama2_7b_server() {
  // Llama-2-7B: 6.74e9 parameters, 32 layers of hidden size 4096, in 2-byte floats.
  return {.weights_bytes = int64_t{6'738'415'616} * 2,
          .kv_bytes_per_token = int64_t{2} * 32 * 4096 * 2,
          .seconds_per_output_token = 0.03,
          .min_requests_per_second = 0.05,
          .max_requests_per_second = 0.5,
          .horizon_seconds = 3600};
}

std::vector<int32_t> memory_series(const InferenceServerModel& model, std::span<const TimedRequest> requests) {
  const auto horizon = static_cast<size_t>(std::max(model.horizon_seconds, 0));
  std::vector<double> tokens(horizon, 0.0);
  for (const TimedRequest& request : requests) {
    const double duration = request.size.generated_tokens * model.seconds_per_output_token;
    const double end = request.arrival_seconds + duration;
    for (auto second = static_cast<size_t>(std::max(0.0, std::ceil(request.arrival_seconds)));
         second < horizon && static_cast<double>(second) < end; ++second) {
      const double done = duration > 0 ? (static_cast<double>(second) - request.arrival_seconds) / duration : 1.0;
      tokens[second] += request.size.context_tokens + request.size.generated_tokens * done;
    }
  }
  std::vector<int32_t> series(horizon);
  for (size_t second = 0; second < horizon; ++second) {
    const double bytes =
        static_cast<double>(model.weights_bytes) + tokens[second] * static_cast<double>(model.kv_bytes_per_token);
    series[second] = static_cast<int32_t>(std::ceil(bytes / static_cast<double>(kMiB)));
  }
  return series;
}

std::vector<TimedRequest> draw_requests(const InferenceServerModel& model, std::span<const LlmRequestSize> sizes,
                                        double rate, uint64_t seed) {
  std::vector<TimedRequest> requests;
  if (sizes.empty() || rate <= 0) return requests;
  std::mt19937_64 random(seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<size_t> pick(0, sizes.size() - 1);
  for (double time = gap(random); time < model.horizon_seconds; time += gap(random)) {
    requests.push_back({time, sizes[pick(random)]});
  }
  return requests;
}

PodMemory pod_memory(std::vector<int32_t> series_mib) {
  PodMemory pod;
  if (series_mib.empty()) return pod;
  std::vector<int32_t> sorted = series_mib;
  // The lower median: a request the pod stays within at least half the time.
  auto middle = sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  pod.request_mib = *middle;
  pod.limit_mib = *std::max_element(series_mib.begin(), series_mib.end());
  pod.series_mib = std::move(series_mib);
  return pod;
}

Packing pack_pods(const GpuMemoryCluster& cluster, std::span<const PodMemory> pods, bool static_limits,
                  int overcommit_milli) {
  auto spec = std::make_shared<ClusterSpec>();
  const GpuModelId model = *spec->models.intern("GPU");
  for (int node = 0; node < cluster.nodes; ++node) {
    NodeSpec node_spec;
    node_spec.name = fmt::format("node-{}", node);
    node_spec.allocatable = {.cpu_milli = 1'000'000, .memory_bytes = int64_t{1} << 50};
    node_spec.gpus.assign(static_cast<size_t>(cluster.gpus_per_node), GpuDevice{model, cluster.device_bytes});
    node_spec.gpu_memory_overcommit_milli = overcommit_milli;
    spec->nodes.push_back(std::move(node_spec));
  }
  ClusterState state(spec);
  PlacementPolicyPtr policy = std::move(*make_policy("best-fit", WorkloadMix()));
  Placer placer(*policy);
  Packing packing;
  packing.device_of.assign(pods.size(), -1);
  for (size_t index = 0; index < pods.size(); ++index) {
    const PodMemory& memory = pods[index];
    PodSpec pod;
    pod.name = fmt::format("inference-{}", index);
    const int64_t limit = int64_t{memory.limit_mib} * kMiB;
    pod.gpu = GpuRequest::memory(static_limits ? limit : int64_t{memory.request_mib} * kMiB, limit);
    const PodId id = state.add_pod(pod);
    std::optional<Binding> binding = placer.find(state, state.pod(id));
    if (!binding) continue;
    packing.device_of[index] = binding->node * cluster.gpus_per_node + binding->devices.front();
    ++packing.pods_held;
    state.bind(id, std::move(*binding));
  }
  return packing;
}

Collisions count_collisions(const GpuMemoryCluster& cluster, std::span<const PodMemory> pods, const Packing& packing) {
  const auto device_mib = cluster.device_bytes / kMiB;
  const auto devices = static_cast<size_t>(cluster.nodes) * static_cast<size_t>(cluster.gpus_per_node);
  std::vector<std::vector<size_t>> on_device(devices);
  for (size_t pod = 0; pod < pods.size(); ++pod) {
    if (packing.device_of[pod] >= 0) on_device[static_cast<size_t>(packing.device_of[pod])].push_back(pod);
  }
  Collisions collisions;
  for (const std::vector<size_t>& members : on_device) {
    if (members.empty()) continue;
    const size_t horizon = pods[members.front()].series_mib.size();
    for (size_t second = 0; second < horizon; ++second) {
      int64_t used = 0;
      for (size_t pod : members) used += pods[pod].series_mib[second];
      const auto count = static_cast<int64_t>(members.size());
      collisions.device_seconds += 1;
      collisions.pod_seconds += count;
      if (used > device_mib) {
        collisions.colliding_device_seconds += 1;
        collisions.colliding_pod_seconds += count;
      }
    }
  }
  return collisions;
}

namespace {

// The pods of one seed: each serves requests at its own rate, drawn from `sizes`.
std::vector<PodMemory> offer_pods(const GpuMemoryOptions& options, std::span<const LlmRequestSize> sizes, uint64_t seed,
                                  int count) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> rate(options.model.min_requests_per_second,
                                              options.model.max_requests_per_second);
  std::vector<PodMemory> pods;
  pods.reserve(static_cast<size_t>(count));
  for (int pod = 0; pod < count; ++pod) {
    const double pod_rate = rate(random);
    const std::vector<TimedRequest> requests = draw_requests(options.model, sizes, pod_rate, random());
    pods.push_back(pod_memory(memory_series(options.model, requests)));
  }
  return pods;
}

std::vector<GpuMemoryRow> run_seeds(const GpuMemoryOptions& options, std::span<const LlmRequestSize> sizes,
                                    std::span<const uint64_t> seeds, int pods_offered) {
  std::vector<GpuMemoryRow> rows;
  rows.push_back({"static (peak)", 0});
  for (int milli : options.overcommit_milli) rows.push_back({fmt::format("request/limit {:g}", milli / 1000.0), milli});
  for (uint64_t seed : seeds) {
    const std::vector<PodMemory> pods = offer_pods(options, sizes, seed, pods_offered);
    for (GpuMemoryRow& row : rows) {
      const bool static_limits = row.overcommit_milli == 0;
      const Packing packing = pack_pods(options.cluster, pods, static_limits,
                                        static_limits ? kMinGpuMemoryOvercommitMilli : row.overcommit_milli);
      const Collisions collisions = count_collisions(options.cluster, pods, packing);
      row.pods_held += packing.pods_held;
      row.collision_device_share += collisions.device_share();
      row.collision_pod_share += collisions.pod_share();
    }
  }
  const auto count = static_cast<double>(seeds.size());
  for (GpuMemoryRow& row : rows) {
    row.pods_held /= count;
    row.collision_device_share /= count;
    row.collision_pod_share /= count;
    row.gain = rows.front().pods_held > 0 ? row.pods_held / rows.front().pods_held - 1 : 0;
  }
  return rows;
}

}  // namespace

Result<GpuMemoryReport> run_gpu_memory_experiment(std::span<const LlmRequestSize> trace,
                                                  const GpuMemoryOptions& options) {
  if (trace.size() < 2)
    return Error{"the request trace needs at least two requests (one to tune on, one to report on)"};
  if (options.tuning_seeds.empty() || options.report_seeds.empty()) return Error{"no seeds to tune or report on"};
  for (int milli : options.overcommit_milli) {
    if (milli < kMinGpuMemoryOvercommitMilli || milli > kMaxGpuMemoryOvercommitMilli) {
      return Error{fmt::format("overcommit {:g} is not between 1 and 8", milli / 1000.0)};
    }
  }
  // Tuning and reporting draw from disjoint halves of the trace, and on disjoint seeds.
  std::vector<LlmRequestSize> tuning_sizes, report_sizes;
  for (size_t row = 0; row < trace.size(); ++row) (row % 2 == 0 ? tuning_sizes : report_sizes).push_back(trace[row]);
  GpuMemoryReport report;
  report.requests_in_trace = static_cast<int>(trace.size());
  report.tuning_requests = static_cast<int>(tuning_sizes.size());
  report.report_requests = static_cast<int>(report_sizes.size());
  report.pods_offered = options.cluster.nodes * options.cluster.gpus_per_node * options.pods_per_device;
  report.tuning = run_seeds(options, tuning_sizes, options.tuning_seeds, report.pods_offered);
  for (const GpuMemoryRow& row : report.tuning) {
    if (row.overcommit_milli > 0 && row.collision_device_share <= options.max_collision_share) {
      report.chosen_overcommit_milli = std::max(report.chosen_overcommit_milli, row.overcommit_milli);
    }
  }
  report.report = run_seeds(options, report_sizes, options.report_seeds, report.pods_offered);
  return report;
}

}  // namespace tessera
