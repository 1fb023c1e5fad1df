// A PodGroup custom resource read into a PodGroupInfo (deploy/crds/podgroups.yaml).
#include <fmt/format.h>

#include <limits>

#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "kube/informer.h"

namespace tessera::adapter {

namespace {

Result<std::optional<int>> int32_field(const ObjectFields& fields, std::string_view path) {
  auto value = fields.integer(path);
  if (!value) return value.error();
  if (!value->has_value()) return std::optional<int>();
  if (**value < std::numeric_limits<int32_t>::min() || **value > std::numeric_limits<int32_t>::max()) {
    return fields.error(path, fmt::format("{} is out of the range of a 32-bit integer", **value));
  }
  return std::optional<int>(static_cast<int>(**value));
}

Result<std::optional<WorkloadKind>> workload_type(const ObjectFields& fields) {
  auto type = fields.string("spec.workloadType");
  if (!type) return type.error();
  if (type->empty()) return std::optional<WorkloadKind>();
  if (*type == "train") return std::optional<WorkloadKind>(WorkloadKind::kTrain);
  if (*type == "interactive") return std::optional<WorkloadKind>(WorkloadKind::kInteractive);
  if (*type == "inference") return std::optional<WorkloadKind>(WorkloadKind::kInference);
  return fields.error("spec.workloadType",
                      fmt::format("'{}' is not a workload type: expected train, interactive or inference", *type));
}

}  // namespace

Result<PodGroupInfo> pod_group_from_object(const nlohmann::json& pod_group) {
  PodGroupInfo info;
  info.key = kube::object_key(pod_group);
  const ObjectFields fields(pod_group, fmt::format("podgroup {}", info.key));
  if (Status read = fields.namespaced_name(info.namespace_name, info.name); !read) return read.error();

  auto min_member = int32_field(fields, "spec.minMember");
  if (!min_member) return min_member.error();
  if (!min_member->has_value())
    return fields.error("spec.minMember", "is required: the number of pods that start together");
  if (**min_member < 1) return fields.error("spec.minMember", fmt::format("{} is below 1", **min_member));
  info.min_member = **min_member;

  auto queue = fields.string("spec.queue");
  if (!queue) return queue.error();
  info.queue = std::move(*queue);
  auto priority = int32_field(fields, "spec.priority");
  if (!priority) return priority.error();
  info.priority = *priority;
  auto preemptible = fields.boolean("spec.preemptible");
  if (!preemptible) return preemptible.error();
  info.preemptible = *preemptible;
  auto kind = workload_type(fields);
  if (!kind) return kind.error();
  info.kind = *kind;
  auto created = fields.timestamp("metadata.creationTimestamp");
  if (!created) return created.error();
  info.created_at = created->value_or(0);
  return info;
}

}  // namespace tessera::adapter
