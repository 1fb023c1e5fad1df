#include "cli/gpu_memory_sim.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/node_pool.h"
#include "sim/embedded_traces.h"
#include "sim/gpu_memory_burst.h"

namespace tessera {

namespace {

Result<std::string> read_requests(const std::string& source) {
  if (source == kEmbeddedLlmRequestsName) return std::string(embedded_llm_requests());
  std::ifstream file(source);
  if (!file) return Error{fmt::format("--gpu-memory-requests: cannot read {}", source)};
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

Result<std::vector<int>> parse_ratios(const std::string& text) {
  std::vector<int> milli;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    char* end = nullptr;
    const double ratio = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size()) {
      return Error{fmt::format("--gpu-memory-ratios: '{}' is not a number (expected ratios such as 1,1.25,1.5)", item)};
    }
    auto value = gpu_memory_overcommit_milli(ratio);
    if (!value) return Error{fmt::format("--gpu-memory-ratios: {}", value.error().message)};
    milli.push_back(*value);
  }
  if (milli.empty()) return Error{"--gpu-memory-ratios: no ratio given"};
  return milli;
}

void print_rows(const std::vector<GpuMemoryRow>& rows) {
  fmt::print("{:<20} {:>10} {:>9} {:>22} {:>19}\n", "GPU memory asked as", "pods held", "vs static",
             "collisions (dev-time)", "(pod-time)");
  for (const GpuMemoryRow& row : rows) {
    fmt::print("{:<20} {:>10.1f} {:>+8.1f}% {:>21.3f}% {:>18.3f}%\n", row.label, row.pods_held, row.gain * 100,
               row.collision_device_share * 100, row.collision_pod_share * 100);
  }
}

}  // namespace

void add_gpu_memory_flags(CLI::App& sim, GpuMemorySimFlags& flags) {
  sim.add_option("--gpu-memory-requests", flags.requests,
                 "GPU-memory mode: the LLM requests (a CSV with ContextTokens and GeneratedTokens) the pods serve")
      ->capture_default_str();
  sim.add_option("--gpu-memory-ratios", flags.ratios,
                 "GPU-memory mode: the overcommit ratios of limits to compare, comma-separated, each 1 to 8")
      ->capture_default_str();
  sim.add_option("--gpu-memory-max-collision", flags.max_collision_pct,
                 "GPU-memory mode: the ratio chosen on the tuning seeds is the largest whose devices spend at most "
                 "this % of their time over their memory")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  sim.add_option("--gpu-memory-nodes", flags.nodes, "GPU-memory mode: nodes of 8 GPUs of 80 GiB")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
}

int run_gpu_memory_sim(const GpuMemorySimFlags& flags, int seeds, uint64_t first_seed) {
  auto text = read_requests(flags.requests);
  if (!text) {
    fmt::print(stderr, "error: {}\n", text.error().message);
    return 2;
  }
  auto trace = parse_llm_requests(*text, flags.requests);
  auto ratios = parse_ratios(flags.ratios);
  for (const Error* error : {trace ? nullptr : &trace.error(), ratios ? nullptr : &ratios.error()}) {
    if (error != nullptr) {
      fmt::print(stderr, "error: {}\n", error->message);
      return 2;
    }
  }
  GpuMemoryOptions options;
  options.cluster.nodes = flags.nodes;
  options.overcommit_milli = *ratios;
  options.max_collision_share = flags.max_collision_pct / 100;
  options.tuning_seeds.clear();
  options.report_seeds.clear();
  for (int i = 0; i < seeds; ++i) {
    options.tuning_seeds.push_back(first_seed + static_cast<uint64_t>(i));
    options.report_seeds.push_back(first_seed + static_cast<uint64_t>(seeds + i));
  }
  auto report = run_gpu_memory_experiment(*trace, options);
  if (!report) {
    fmt::print(stderr, "error: {}\n", report.error().message);
    return 2;
  }
  const InferenceServerModel& model = options.model;
  fmt::print(
      "Inference pods on {} nodes x {} GPUs of {} GiB. Each pod: Llama-2-7B weights ({:.2f} GiB) and a KV cache of "
      "{} KiB per token\nfor the requests it serves ({:g}-{:g} requests/s, {:g} ms per output token), sized by {} "
      "({} requests).\nStatic: each pod reserves its peak. Request/limit: request = median, limit = peak, limits "
      "up to RATIO x device memory.\n{} pods offered per seed, placed in order (best-fit); collisions: the pods on a "
      "device use more than its memory.\n\n",
      options.cluster.nodes, options.cluster.gpus_per_node, options.cluster.device_bytes >> 30,
      static_cast<double>(model.weights_bytes) / double(int64_t{1} << 30), model.kv_bytes_per_token / 1024,
      model.min_requests_per_second, model.max_requests_per_second, model.seconds_per_output_token * 1000,
      flags.requests, report->requests_in_trace, report->pods_offered);
  fmt::print("Tuning: seeds {}-{}, the trace's requests 1, 3, 5, ... ({})\n", first_seed,
             first_seed + static_cast<uint64_t>(seeds) - 1, report->tuning_requests);
  print_rows(report->tuning);
  fmt::print("Chosen: overcommit {:g}, the largest with collisions at most {:g}% of device-time\n\n",
             report->chosen_overcommit_milli / 1000.0, flags.max_collision_pct);
  fmt::print("Held out: seeds {}-{}, the trace's requests 2, 4, 6, ... ({})\n",
             first_seed + static_cast<uint64_t>(seeds), first_seed + static_cast<uint64_t>(2 * seeds) - 1,
             report->report_requests);
  print_rows(report->report);
  for (const GpuMemoryRow& row : report->report) {
    if (row.overcommit_milli == report->chosen_overcommit_milli) {
      fmt::print("At the chosen overcommit {:g}: {:+.1f}% pods held, devices over their memory {:.3f}% of the time\n",
                 report->chosen_overcommit_milli / 1000.0, row.gain * 100, row.collision_device_share * 100);
    }
  }
  return 0;
}

}  // namespace tessera
