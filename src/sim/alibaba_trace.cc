#include "sim/alibaba_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/csv_records.h"

namespace tessera {

namespace {

// Per-row bounds. They are far above anything in the trace and keep sums over thousands of rows
// well inside int64.
constexpr int64_t kMaxCpuMilli = 1'000'000'000;      // a million cores
constexpr int64_t kMaxMemoryMiB = int64_t{1} << 30;  // 1 PiB
constexpr int64_t kMaxGpusPerRow = 64;               // devices per node or per pod
constexpr int64_t kMaxSeconds = 1'000'000'000'000;   // exact as a double

// Remembers the line where each name was first seen.
class NameRegistry {
 public:
  // Returns the earlier line when `name` was already seen.
  std::optional<int> add(const std::string& name, int line) {
    auto [entry, inserted] = first_line_.emplace(name, line);
    if (inserted) return std::nullopt;
    return entry->second;
  }

 private:
  std::unordered_map<std::string, int> first_line_;
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Node list.

enum NodeColumn : size_t { kSn, kNodeCpuMilli, kNodeMemoryMib, kNodeGpu, kNodeModel };
constexpr ColumnSpec kNodeColumns[] = {
    {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", true}};

constexpr IntegerRule kCpuMilliRule{0, kMaxCpuMilli, "millicores"};
constexpr IntegerRule kMemoryMibRule{0, kMaxMemoryMiB, "mebibytes"};
constexpr IntegerRule kGpuCountRule{0, kMaxGpusPerRow, "a GPU count"};

// Trace files re-exported through pandas write "nan" for an empty field.
constexpr std::string_view kPandasEmpty = "nan";

Result<GpuModelId> intern_model(const CsvRecord& record, std::string_view model, GpuModelCatalog& catalog) {
  if (model.find('|') != std::string_view::npos) {
    return record.error(kNodeModel, fmt::format("'{}' contains '|' (expected a GPU model name)", model));
  }
  std::optional<GpuModelId> id = catalog.intern(model);
  if (!id) {
    return record.error(kNodeModel, fmt::format("'{}' would be GPU model number {} (expected at most {} models)", model,
                                                catalog.size() + 1, GpuModelSet::kMaxModels));
  }
  return *id;
}

Status read_node(const CsvRecord& record, ClusterSpec& cluster, NameRegistry& names) {
  auto name = record.non_empty_text(kSn, "a node name");
  if (!name) return name.error();
  if (std::optional<int> earlier = names.add(*name, record.line())) {
    return record.error(
        kSn, fmt::format("duplicate node name '{}' (expected unique names; first on line {})", *name, *earlier));
  }
  auto cpu_milli = record.integer(kNodeCpuMilli, kCpuMilliRule);
  if (!cpu_milli) return cpu_milli.error();
  auto memory_mib = record.integer(kNodeMemoryMib, kMemoryMibRule);
  if (!memory_mib) return memory_mib.error();
  auto gpu_count = record.integer(kNodeGpu, kGpuCountRule);
  if (!gpu_count) return gpu_count.error();

  NodeSpec node;
  node.name = std::move(*name);
  node.allocatable = Resources{.cpu_milli = *cpu_milli, .memory_bytes = *memory_mib * kMiB};
  // A CPU-only node's model column is meaningless (the trace leaves it empty); it is ignored.
  if (*gpu_count > 0) {
    std::string_view model = record.text(kNodeModel);
    if (model.empty() || model == kPandasEmpty) {
      return record.error(kNodeModel,
                          fmt::format("is empty but the node has {} GPUs (expected a GPU model name)", *gpu_count));
    }
    auto model_id = intern_model(record, model, cluster.models);
    if (!model_id) return model_id.error();
    node.gpus.assign(static_cast<size_t>(*gpu_count),
                     GpuDevice{.model = *model_id, .memory_bytes = alibaba_gpu_memory_bytes(model)});
    node.labels.emplace(kGpuModelLabel, model);
  }
  cluster.nodes.push_back(std::move(node));
  return Ok{};
}

// ---------------------------------------------------------------------------------------------
// Pod list.

enum PodColumn : size_t {
  kPodName,
  kPodCpuMilli,
  kPodMemoryMib,
  kNumGpu,
  kGpuMilli,
  kGpuSpec,
  kCreationTime,
  kDeletionTime,
  kQos,
  kPodPhase,
  kScheduledTime,
};
constexpr ColumnSpec kPodColumns[] = {
    {"name", true},      {"cpu_milli", true},  {"memory_mib", true},      {"num_gpu", true},
    {"gpu_milli", true}, {"gpu_spec", false},  {"creation_time", true},   {"deletion_time", true},
    {"qos", false},      {"pod_phase", false}, {"scheduled_time", false},
};
// The same, for an experiment that needs no times (arrival mode).
constexpr ColumnSpec kUntimedPodColumns[] = {
    {"name", true},      {"cpu_milli", true},  {"memory_mib", true},      {"num_gpu", true},
    {"gpu_milli", true}, {"gpu_spec", false},  {"creation_time", false},  {"deletion_time", false},
    {"qos", false},      {"pod_phase", false}, {"scheduled_time", false},
};

constexpr IntegerRule kGpuMilliRule{1, kMilliPerGpu, "milli-GPUs of the one GPU"};
constexpr IntegerRule kAnyGpuMilliRule{0, std::numeric_limits<int64_t>::max(), "milli-GPUs"};
constexpr IntegerRule kSecondsRule{0, kMaxSeconds, "seconds"};

Result<GpuRequest> read_gpu_request(const CsvRecord& record) {
  auto num_gpu = record.integer(kNumGpu, kGpuCountRule);
  if (!num_gpu) return num_gpu.error();
  if (*num_gpu == 1) {
    auto gpu_milli = record.integer(kGpuMilli, kGpuMilliRule);
    if (!gpu_milli) return gpu_milli.error();
    if (*gpu_milli == kMilliPerGpu) return GpuRequest::whole(1);
    return GpuRequest::portion(static_cast<int>(*gpu_milli));
  }
  // gpu_milli only qualifies a single GPU; otherwise it is ignored, but must still be a number.
  if (!record.text(kGpuMilli).empty()) {
    if (auto ignored = record.integer(kGpuMilli, kAnyGpuMilliRule); !ignored) return ignored.error();
  }
  if (*num_gpu == 0) return GpuRequest::none();
  return GpuRequest::whole(static_cast<int>(*num_gpu));
}

Result<GpuModelSet> read_gpu_spec(const CsvRecord& record, const GpuModelCatalog& catalog) {
  GpuModelSet allowed = GpuModelSet::any();
  std::string_view spec = record.text(kGpuSpec);
  if (spec.empty() || spec == kPandasEmpty) return allowed;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    if (bar == std::string_view::npos) bar = spec.size();
    std::string_view model = trim(spec.substr(start, bar - start));
    start = bar + 1;
    if (model.empty()) {
      return record.error(kGpuSpec, fmt::format("'{}' has an empty model name (expected names separated by '|', "
                                                "like V100M16|V100M32)",
                                                spec));
    }
    std::optional<GpuModelId> id = catalog.find(model);
    if (!id) {
      return record.error(kGpuSpec, fmt::format("unknown GPU model '{}' in gpu_spec; {} (expected one of them)", model,
                                                catalog.description()));
    }
    allowed.add(*id);
  }
  return allowed;
}

Result<WorkloadSpec> read_pod(const CsvRecord& record, const ClusterSpec& cluster, NameRegistry& names) {
  auto name = record.non_empty_text(kPodName, "a pod name");
  if (!name) return name.error();
  if (std::optional<int> earlier = names.add(*name, record.line())) {
    return record.error(
        kPodName, fmt::format("duplicate pod name '{}' (expected unique names; first on line {})", *name, *earlier));
  }
  auto cpu_milli = record.integer(kPodCpuMilli, kCpuMilliRule);
  if (!cpu_milli) return cpu_milli.error();
  auto memory_mib = record.integer(kPodMemoryMib, kMemoryMibRule);
  if (!memory_mib) return memory_mib.error();
  auto gpu = read_gpu_request(record);
  if (!gpu) return gpu.error();
  auto allowed_models = read_gpu_spec(record, cluster.models);
  if (!allowed_models) return allowed_models.error();
  // Without times (arrival mode) every pod arrives at 0 and never ends.
  auto creation = record.has(kCreationTime) ? record.integer(kCreationTime, kSecondsRule) : Result<int64_t>(0);
  if (!creation) return creation.error();
  const bool timed = record.has(kCreationTime) && record.has(kDeletionTime);
  auto deletion = record.has(kDeletionTime) ? record.integer(kDeletionTime, kSecondsRule) : Result<int64_t>(*creation);
  if (!deletion) return deletion.error();
  if (*deletion < *creation) {
    return record.error(kDeletionTime, fmt::format("{} is before creation_time {} (expected deletion_time >= "
                                                   "creation_time)",
                                                   *deletion, *creation));
  }

  PodSpec pod;
  pod.name = *name;
  pod.request = Resources{.cpu_milli = *cpu_milli, .memory_bytes = *memory_mib * kMiB};
  pod.gpu = *gpu;
  // A model restriction only matters where there is a GPU to choose.
  if (pod.gpu.wants_gpu()) pod.allowed_models = *allowed_models;

  WorkloadSpec workload;
  workload.name = std::move(*name);
  workload.kind = WorkloadKind::kTrain;
  workload.preemptible = pod.preemptible;
  workload.priority = pod.priority;
  workload.pods.push_back(std::move(pod));
  workload.min_member = 1;
  workload.arrival_seconds = static_cast<double>(*creation);
  workload.duration_seconds = timed ? static_cast<double>(*deletion - *creation) : -1;
  return workload;
}

}  // namespace

int64_t alibaba_gpu_memory_bytes(std::string_view model) {
  struct ModelMemory {
    std::string_view model;
    int64_t gib;
  };
  constexpr ModelMemory kKnown[] = {{"V100M16", 16}, {"V100M32", 32}, {"P100", 16}, {"T4", 16},
                                    {"A10", 24},     {"G1", 32},      {"G2", 32},   {"G3", 32}};
  for (const ModelMemory& known : kKnown) {
    if (known.model == model) return known.gib * kGiB;
  }
  return 0;  // unknown: memory-based GPU requests cannot be placed on it (see GpuRequest)
}

Result<ClusterSpec> parse_alibaba_nodes(std::string_view csv_text, std::string_view source) {
  try {
    ClusterSpec cluster;
    NameRegistry names;
    Status status = for_each_record(csv_text, source, kNodeColumns,
                                    [&](const CsvRecord& record) { return read_node(record, cluster, names); });
    if (!status) return status.error();
    return cluster;
  } catch (const std::exception& error) {
    return Error{fmt::format("{}: {}", source, error.what())};
  }
}

Result<std::vector<WorkloadSpec>> parse_alibaba_pods(std::string_view csv_text, std::string_view source,
                                                     const ClusterSpec& cluster, std::string* untimed) {
  try {
    std::vector<WorkloadSpec> workloads;
    NameRegistry names;
    if (untimed != nullptr) untimed->clear();
    const std::span<const ColumnSpec> columns = untimed != nullptr ? std::span<const ColumnSpec>(kUntimedPodColumns)
                                                                   : std::span<const ColumnSpec>(kPodColumns);
    Status status = for_each_record(csv_text, source, columns, [&](const CsvRecord& record) -> Status {
      if (untimed != nullptr && untimed->empty()) {
        for (size_t column : {size_t{kCreationTime}, size_t{kDeletionTime}}) {
          if (record.has(column) || !untimed->empty()) continue;
          *untimed = fmt::format("{}: column '{}': missing from the header (a timeline replay needs "
                                 "creation_time and deletion_time; arrival mode needs neither)",
                                 source, record.header_name(column));
        }
      }
      auto workload = read_pod(record, cluster, names);
      if (!workload) return workload.error();
      workloads.push_back(std::move(*workload));
      return Ok{};
    });
    if (!status) return status.error();
    std::stable_sort(workloads.begin(), workloads.end(), [](const WorkloadSpec& a, const WorkloadSpec& b) {
      return a.arrival_seconds < b.arrival_seconds;
    });
    return workloads;
  } catch (const std::exception& error) {
    return Error{fmt::format("{}: {}", source, error.what())};
  }
}

}  // namespace tessera
