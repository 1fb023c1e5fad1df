// A Node object read into a NodeSpec.
#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "adapter/annotations.h"
#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "adapter/taint_translation.h"
#include "kube/informer.h"
#include "wire/quantity.h"

namespace tessera::adapter {

namespace {

// Device indices are 16-bit in the engine; real nodes carry 8 to 16 devices.
constexpr int64_t kMaxGpusPerNode = 256;
// The model of GPUs whose node has no nvidia.com/gpu.product label.
constexpr std::string_view kUnknownGpuModel = "unknown";

// A resource as the node lists it: in status.allocatable, else in status.capacity (a node made
// by hand may have no status at all).
struct ListedResource {
  std::string field;  // "status.allocatable[cpu]"
  std::string text;   // "15890m"
};

Result<std::optional<ListedResource>> listed_resource(const ObjectFields& fields, std::string_view resource) {
  for (std::string_view list : {"status.allocatable", "status.capacity"}) {
    auto resources = fields.quantity_map(list);
    if (!resources) return resources.error();
    auto it = resources->find(std::string(resource));
    if (it != resources->end()) {
      return std::optional<ListedResource>(ListedResource{fmt::format("{}[{}]", list, resource), it->second});
    }
  }
  return std::optional<ListedResource>();
}

// The quantity of `resource` as `parse` reads it, 0 when the node lists none.
Result<int64_t> node_quantity(const ObjectFields& fields, std::string_view resource,
                              Result<int64_t> (*parse)(std::string_view)) {
  auto listed = listed_resource(fields, resource);
  if (!listed) return listed.error();
  if (!listed->has_value()) return int64_t{0};
  const ListedResource& entry = **listed;
  auto value = parse(entry.text);
  if (!value) return fields.error(entry.field, value.error().message);
  if (*value < 0) return fields.error(entry.field, fmt::format("'{}' is negative", entry.text));
  return *value;
}

Result<int> node_gpu_count(const ObjectFields& fields) {
  auto listed = listed_resource(fields, kGpuResourceName);
  if (!listed) return listed.error();
  if (!listed->has_value()) return 0;
  const ListedResource& entry = **listed;
  auto milli = wire::parse_quantity_milli(entry.text);
  if (!milli) return fields.error(entry.field, milli.error().message);
  if (*milli < 0 || *milli % 1000 != 0 || *milli / 1000 > kMaxGpusPerNode) {
    return fields.error(entry.field, fmt::format("'{}' is not a device count: expected a whole number from 0 to {}",
                                                 entry.text, kMaxGpusPerNode));
  }
  return static_cast<int>(*milli / 1000);
}

// Ready unless its Ready condition says otherwise. A node with no Ready condition has never
// reported: nodes created with kubectl, or by `tessera dev cluster`, carry no status, and
// treating them as down would make such clusters unusable. A real kubelet reports Ready within
// seconds of registering, and the node controller marks a silent node Unknown.
Result<bool> node_is_ready(const ObjectFields& fields) {
  auto conditions = fields.array("status.conditions");
  if (!conditions) return conditions.error();
  if (*conditions == nullptr) return true;
  for (size_t i = 0; i < (*conditions)->size(); ++i) {
    const ObjectFields condition = fields.child((**conditions)[i], fmt::format("status.conditions[{}]", i));
    auto type = condition.string("type");
    if (!type) return type.error();
    if (*type != "Ready") continue;
    auto status = condition.string("status");
    if (!status) return status.error();
    return *status == "True";
  }
  return true;
}

Result<int64_t> device_memory_bytes(const ObjectFields& fields, const Labels& labels) {
  auto it = labels.find(std::string(kGpuMemoryLabel));
  if (it == labels.end()) return int64_t{0};
  int64_t mebibytes = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mebibytes);
  if (error != std::errc() || end != text.data() + text.size() || mebibytes < 0 ||
      mebibytes > std::numeric_limits<int64_t>::max() / kMiB) {
    return fields.error(fmt::format("metadata.labels[{}]", kGpuMemoryLabel),
                        fmt::format("'{}' is not a device memory size: expected whole MiB, as in \"81920\"", text));
  }
  return mebibytes * kMiB;
}

}  // namespace

Result<NodeSpec> node_from_object(const nlohmann::json& node, GpuModelCatalog& models) {
  NodeSpec spec;
  spec.name = kube::object_key(node);
  const ObjectFields fields(node, fmt::format("node {}", spec.name));

  auto labels = fields.string_map("metadata.labels");
  if (!labels) return labels.error();
  spec.labels = std::move(*labels);

  auto cpu = node_quantity(fields, "cpu", wire::parse_quantity_milli);
  if (!cpu) return cpu.error();
  auto memory = node_quantity(fields, "memory", wire::parse_quantity);
  if (!memory) return memory.error();
  spec.allocatable = Resources{.cpu_milli = *cpu, .memory_bytes = *memory};

  auto gpu_count = node_gpu_count(fields);
  if (!gpu_count) return gpu_count.error();
  if (*gpu_count > 0) {
    auto product = spec.labels.find(std::string(kGpuProductLabel));
    const std::string_view model_name = product == spec.labels.end() ? kUnknownGpuModel : product->second;
    std::optional<GpuModelId> model = models.intern(model_name);
    if (!model) {
      return fields.error(fmt::format("metadata.labels[{}]", kGpuProductLabel),
                          fmt::format("GPU model '{}' is one more than the {} models Tessera tells apart", model_name,
                                      GpuModelSet::kMaxModels));
    }
    auto memory_bytes = device_memory_bytes(fields, spec.labels);
    if (!memory_bytes) return memory_bytes.error();
    spec.gpus.assign(static_cast<size_t>(*gpu_count), GpuDevice{.model = *model, .memory_bytes = *memory_bytes});
  }

  auto taints = taints_at(fields, "spec.taints");
  if (!taints) return taints.error();
  spec.taints = std::move(*taints);

  auto unschedulable = fields.boolean("spec.unschedulable");
  if (!unschedulable) return unschedulable.error();
  auto ready = node_is_ready(fields);
  if (!ready) return ready.error();
  spec.schedulable = !unschedulable->value_or(false) && *ready;
  return spec;
}

}  // namespace tessera::adapter
