// A Pod object read into a PodInfo: the engine's PodSpec plus what the adapter tracks.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "adapter/annotations.h"
#include "adapter/gpu_model_selection.h"
#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "adapter/pod_requests.h"
#include "adapter/taint_translation.h"
#include "kube/informer.h"
#include "wire/quantity.h"

namespace tessera::adapter {

namespace {

std::string annotation_field(std::string_view annotation) {
  return fmt::format("metadata.annotations[{}]", annotation);
}

const std::string* find_entry(const Labels& map, std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

// nvidia.com/gpu counts whole devices: the device plugin cannot hand out part of one.
Result<int64_t> parse_gpu_count(std::string_view text) {
  auto milli = wire::parse_quantity_milli(text);
  if (!milli) return milli.error();
  if (*milli % kMilliPerGpu != 0) {
    return Error{fmt::format("'{}' is not a whole number of GPUs (for part of a GPU, set the {} annotation instead)",
                             text, kGpuFractionAnnotation)};
  }
  return *milli / kMilliPerGpu;
}

Result<PodPhase> pod_phase(const ObjectFields& fields) {
  auto phase = fields.string("status.phase");
  if (!phase) return phase.error();
  return pod_phase_named(*phase);
}

Result<Resources> pod_resources(const ObjectFields& fields) {
  auto cpu = pod_effective_request(fields, "cpu", AmountSource::kRequestsThenLimits, wire::parse_quantity_milli);
  if (!cpu) return cpu.error();
  auto memory = pod_effective_request(fields, "memory", AmountSource::kRequestsThenLimits, wire::parse_quantity);
  if (!memory) return memory.error();
  return Resources{.cpu_milli = *cpu, .memory_bytes = *memory};
}

// A fraction of one device: "0.5" (0 < x < 1), rounded up to thousandths.
Result<int> gpu_fraction_milli(const ObjectFields& fields, const std::string& text) {
  const std::string field = annotation_field(kGpuFractionAnnotation);
  auto milli = wire::parse_quantity_milli(text);
  if (!milli) return fields.error(field, milli.error().message);
  if (*milli <= 0 || *milli >= kMilliPerGpu) {
    return fields.error(field, fmt::format("'{}' is not a fraction of a GPU: expected a number between 0 and 1, "
                                           "as in \"0.5\" (for whole GPUs, request {})",
                                           text, kGpuResourceName));
  }
  return static_cast<int>(*milli);
}

Result<int64_t> gpu_memory_bytes(const ObjectFields& fields, std::string_view annotation, const std::string& text) {
  const std::string field = annotation_field(annotation);
  auto bytes = wire::parse_quantity(text);
  if (!bytes) return fields.error(field, bytes.error().message);
  if (*bytes <= 0) {
    return fields.error(field, fmt::format("'{}' is not an amount of GPU memory: expected a positive quantity, as in "
                                           "\"20Gi\"",
                                           text));
  }
  return *bytes;
}

// Whole devices from nvidia.com/gpu, or a fraction or an amount of memory of one device from
// the annotations; asking for more than one of these is an error.
Result<GpuRequest> pod_gpu_request(const ObjectFields& fields, const Labels& annotations) {
  auto whole = pod_effective_request(fields, kGpuResourceName, AmountSource::kLimitsThenRequests, parse_gpu_count);
  if (!whole) return whole.error();
  if (*whole > std::numeric_limits<int>::max()) {
    return fields.error(fmt::format("spec.containers[*].resources.limits[{}]", kGpuResourceName),
                        fmt::format("{} GPUs is more than any node has", *whole));
  }
  const std::string* fraction = find_entry(annotations, kGpuFractionAnnotation);
  const std::string* memory = find_entry(annotations, kGpuMemoryAnnotation);
  const std::string* memory_limit = find_entry(annotations, kGpuMemoryLimitAnnotation);

  const int asked = (*whole > 0 ? 1 : 0) + (fraction != nullptr ? 1 : 0) + (memory != nullptr ? 1 : 0);
  if (asked > 1) {
    const std::string_view field = fraction != nullptr ? kGpuFractionAnnotation : kGpuMemoryAnnotation;
    return fields.error(annotation_field(field),
                        fmt::format("a pod asks for whole GPUs ({}), a fraction of one ({}) or an amount of GPU memory "
                                    "({}), not more than one of these",
                                    kGpuResourceName, kGpuFractionAnnotation, kGpuMemoryAnnotation));
  }
  if (memory_limit != nullptr && memory == nullptr) {
    return fields.error(annotation_field(kGpuMemoryLimitAnnotation),
                        fmt::format("set only together with {}", kGpuMemoryAnnotation));
  }

  if (fraction != nullptr) {
    auto milli = gpu_fraction_milli(fields, *fraction);
    if (!milli) return milli.error();
    return GpuRequest::portion(*milli);
  }
  if (memory != nullptr) {
    auto request = gpu_memory_bytes(fields, kGpuMemoryAnnotation, *memory);
    if (!request) return request.error();
    int64_t limit = *request;
    if (memory_limit != nullptr) {
      auto parsed_limit = gpu_memory_bytes(fields, kGpuMemoryLimitAnnotation, *memory_limit);
      if (!parsed_limit) return parsed_limit.error();
      if (*parsed_limit < *request) {
        return fields.error(
            annotation_field(kGpuMemoryLimitAnnotation),
            fmt::format("'{}' is below the request {} ('{}')", *memory_limit, kGpuMemoryAnnotation, *memory));
      }
      limit = *parsed_limit;
    }
    return GpuRequest::memory(*request, limit);
  }
  if (*whole > 0) return GpuRequest::whole(static_cast<int>(*whole));
  return GpuRequest::none();
}

Result<WorkloadKind> workload_kind(const ObjectFields& fields, const Labels& annotations) {
  const std::string* type = find_entry(annotations, kWorkloadTypeAnnotation);
  if (type == nullptr || *type == "train") return WorkloadKind::kTrain;
  if (*type == "interactive") return WorkloadKind::kInteractive;
  if (*type == "inference") return WorkloadKind::kInference;
  return fields.error(annotation_field(kWorkloadTypeAnnotation),
                      fmt::format("'{}' is not a workload type: expected train, interactive or inference", *type));
}

// wait (the default), priority or swap: what the node does when the pods of a device burst
// past its memory together.
Result<std::string> gpu_memory_resolver(const ObjectFields& fields, const Labels& annotations, const GpuRequest& gpu) {
  const std::string* value = find_entry(annotations, kGpuMemoryResolverAnnotation);
  if (value == nullptr) return std::string("wait");
  if (gpu.kind != GpuRequest::Kind::kMemory) {
    return fields.error(annotation_field(kGpuMemoryResolverAnnotation),
                        fmt::format("set only together with {}", kGpuMemoryAnnotation));
  }
  if (*value == "wait" || *value == "priority" || *value == "swap") return *value;
  return fields.error(annotation_field(kGpuMemoryResolverAnnotation),
                      fmt::format("'{}' is not a GPU memory resolver: expected wait (allocations wait until memory "
                                  "frees), priority (lower-priority or idle pods' processes end) or swap (allocations "
                                  "move to host memory and back)",
                                  *value));
}

Result<std::optional<bool>> preemptible_override(const ObjectFields& fields, const Labels& annotations) {
  const std::string* value = find_entry(annotations, kPreemptibleAnnotation);
  if (value == nullptr) return std::optional<bool>();
  if (*value == "true") return std::optional<bool>(true);
  if (*value == "false") return std::optional<bool>(false);
  return fields.error(annotation_field(kPreemptibleAnnotation),
                      fmt::format("'{}' is not a boolean: expected \"true\" or \"false\"", *value));
}

// "3" or "0,1,2,3": the devices the scheduler chose for a bound pod.
Result<std::vector<int>> gpu_indices(const ObjectFields& fields, const Labels& annotations) {
  std::vector<int> indices;
  const std::string* text = find_entry(annotations, kGpuIndexAnnotation);
  if (text == nullptr) return indices;
  std::string_view rest = *text;
  while (true) {
    const size_t comma = std::min(rest.find(','), rest.size());
    std::string_view item = rest.substr(0, comma);
    while (item.starts_with(' ')) item.remove_prefix(1);
    while (item.ends_with(' ')) item.remove_suffix(1);
    int index = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), index);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || index < 0) {
      return fields.error(annotation_field(kGpuIndexAnnotation),
                          fmt::format("'{}' is not a list of device indices: expected numbers separated by commas, "
                                      "as in \"0,1\"",
                                      *text));
    }
    indices.push_back(index);
    if (comma == rest.size()) return indices;
    rest.remove_prefix(comma + 1);
  }
}

Result<int> pod_priority(const ObjectFields& fields) {
  auto priority = fields.integer("spec.priority");
  if (!priority) return priority.error();
  const int64_t value = priority->value_or(0);
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return fields.error("spec.priority", fmt::format("{} is out of the range of a 32-bit integer", value));
  }
  return static_cast<int>(value);
}

// The lastTransitionTime of the condition PodScheduled=True, as Unix seconds; 0 when there is none.
Result<double> scheduled_since(const ObjectFields& fields) {
  auto conditions = fields.array("status.conditions");
  if (!conditions) return conditions.error();
  if (*conditions == nullptr) return 0.0;
  for (size_t i = 0; i < (*conditions)->size(); ++i) {
    const nlohmann::json& entry = (**conditions)[i];
    if (!entry.is_object()) continue;
    const ObjectFields condition = fields.child(entry, fmt::format("status.conditions[{}]", i));
    auto type = condition.string("type");
    auto status = condition.string("status");
    if (!type || !status || *type != "PodScheduled" || *status != "True") continue;
    auto since = condition.timestamp("lastTransitionTime");
    if (!since) return since.error();
    return since->value_or(0);
  }
  return 0.0;
}

// Identity, placement and lifecycle: everything but the requirements.
Status read_identity(const ObjectFields& fields, PodInfo& info) {
  auto uid = fields.string("metadata.uid");
  auto resource_version = fields.string("metadata.resourceVersion");
  auto scheduler_name = fields.string("spec.schedulerName");
  auto node_name = fields.string("spec.nodeName");
  for (const Result<std::string>* field : {&uid, &resource_version, &scheduler_name, &node_name}) {
    if (!*field) return field->error();
  }
  info.uid = std::move(*uid);
  info.resource_version = std::move(*resource_version);
  info.tessera = *scheduler_name == kSchedulerName;
  info.node_name = std::move(*node_name);

  auto phase = pod_phase(fields);
  if (!phase) return phase.error();
  info.phase = *phase;
  auto deletion = fields.timestamp("metadata.deletionTimestamp");
  if (!deletion) return deletion.error();
  info.terminating = deletion->has_value();
  auto created = fields.timestamp("metadata.creationTimestamp");
  if (!created) return created.error();
  info.created_at = created->value_or(0);
  auto started = fields.timestamp("status.startTime");
  if (!started) return started.error();
  info.started_at = started->value_or(0);
  auto bound = scheduled_since(fields);
  if (!bound) return bound.error();
  info.bound_at = *bound;
  return Ok{};
}

// What the engine needs to place the pod.
Status read_requirements(const ObjectFields& fields, const Labels& annotations, const GpuModelCatalog& models,
                         PodInfo& info) {
  PodSpec& spec = info.spec;
  spec.name = info.key;
  auto resources = pod_resources(fields);
  if (!resources) return resources.error();
  spec.request = *resources;
  auto gpu = pod_gpu_request(fields, annotations);
  if (!gpu) return gpu.error();
  spec.gpu = *gpu;
  auto resolver = gpu_memory_resolver(fields, annotations, spec.gpu);
  if (!resolver) return resolver.error();
  info.gpu_memory_resolver = std::move(*resolver);

  auto selector = fields.string_map("spec.nodeSelector");
  if (!selector) return selector.error();
  spec.node_selector = std::move(*selector);
  auto allowed = allowed_gpu_models(fields, spec.node_selector, models);
  if (!allowed) return allowed.error();
  spec.allowed_models = *allowed;

  auto tolerations = tolerations_at(fields, "spec.tolerations");
  if (!tolerations) return tolerations.error();
  spec.tolerations = std::move(*tolerations);
  auto priority = pod_priority(fields);
  if (!priority) return priority.error();
  spec.priority = *priority;

  auto kind = workload_kind(fields, annotations);
  if (!kind) return kind.error();
  info.kind = *kind;
  auto preemptible = preemptible_override(fields, annotations);
  if (!preemptible) return preemptible.error();
  info.preemptible_explicit = preemptible->has_value();
  // Training checkpoints and restarts; a notebook's user loses their session.
  spec.preemptible = preemptible->value_or(info.kind == WorkloadKind::kTrain);

  auto indices = gpu_indices(fields, annotations);
  if (!indices) return indices.error();
  info.gpu_indices = std::move(*indices);
  auto deadline = fields.integer("spec.activeDeadlineSeconds");
  if (!deadline) return deadline.error();
  info.active_deadline_seconds = static_cast<double>(deadline->value_or(0));
  auto asked = asked_limits(fields, annotations);
  if (!asked) return asked.error();
  info.max_runtime_seconds = asked->max_runtime_seconds;
  info.idle_limit_seconds = asked->idle_limit_seconds;
  return Ok{};
}

}  // namespace

Result<PodInfo> pod_from_object(const nlohmann::json& pod, const GpuModelCatalog& models) {
  PodInfo info;
  info.key = kube::object_key(pod);
  const ObjectFields fields(pod, fmt::format("pod {}", info.key));
  if (Status read = fields.namespaced_name(info.namespace_name, info.name); !read) return read.error();

  auto labels = fields.string_map("metadata.labels");
  if (!labels) return labels.error();
  auto annotations = fields.string_map("metadata.annotations");
  if (!annotations) return annotations.error();
  if (const std::string* group = find_entry(*labels, kPodGroupLabel)) info.pod_group = *group;
  if (const std::string* queue = find_entry(*labels, kQueueLabel)) info.queue_label = *queue;
  if (const std::string* subgroup = find_entry(*labels, kSubGroupLabel)) info.subgroup = *subgroup;

  if (auto identity = read_identity(fields, info); !identity) return identity.error();
  if (auto requirements = read_requirements(fields, *annotations, models, info); !requirements) {
    return requirements.error();
  }
  return info;
}

GpuMemoryTerms gpu_memory_terms(const PodInfo& pod) {
  if (pod.spec.gpu.kind != GpuRequest::Kind::kMemory) return {};
  return {pod.spec.gpu.memory_bytes, pod.spec.gpu.memory_limit_bytes, pod.gpu_memory_resolver};
}

PodPhase pod_phase_named(std::string_view phase) {
  if (phase.empty() || phase == "Pending") return PodPhase::kPending;
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

}  // namespace tessera::adapter
