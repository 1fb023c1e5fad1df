// A PodGroup custom resource read into a PodGroupInfo (deploy/crds/podgroups.yaml), and a Topology
// into a Topology (deploy/crds/topologies.yaml).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

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

// A topologyConstraint object at `path` (absent: no constraint).
// `named`: the constraint must name its topology (a subgroup's may use its PodGroup's).
Result<TopologyConstraint> topology_constraint(const ObjectFields& fields, const std::string& path, bool named) {
  TopologyConstraint constraint;
  for (auto [key, into] :
       {std::pair{"topology", &constraint.topology}, std::pair{"requiredTopologyLevel", &constraint.required_level},
        std::pair{"preferredTopologyLevel", &constraint.preferred_level}}) {
    auto value = fields.string(path + "." + key);
    if (!value) return value.error();
    *into = std::move(*value);
  }
  if (!constraint.empty() && constraint.topology.empty() && named) {
    return fields.error(path + ".topology", "is required with a topology level: the name of a Topology");
  }
  if (!constraint.topology.empty() && constraint.empty()) {
    return fields.error(path,
                        "names a topology but no level: expected requiredTopologyLevel or preferredTopologyLevel");
  }
  return constraint;
}

Result<std::vector<SubGroupSpec>> sub_groups(const ObjectFields& fields, const TopologyConstraint& whole) {
  std::vector<SubGroupSpec> subgroups;
  auto list = fields.array("spec.subGroups");
  if (!list) return list.error();
  if (*list == nullptr) return subgroups;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const std::string path = fmt::format("spec.subGroups[{}]", i);
    const ObjectFields entry = fields.child((**list)[i], path);
    SubGroupSpec subgroup;
    auto name = entry.string("name");
    if (!name) return name.error();
    if (name->empty()) return fields.error(path + ".name", "is required: pods join the subgroup by this name");
    for (const SubGroupSpec& earlier : subgroups) {
      if (earlier.name == *name) return fields.error(path + ".name", fmt::format("'{}' appears twice", *name));
    }
    subgroup.name = std::move(*name);
    auto min_member = int32_field(entry, "minMember");
    if (!min_member) return min_member.error();
    subgroup.min_member = min_member->value_or(1);
    if (subgroup.min_member < 1)
      return fields.error(path + ".minMember", fmt::format("{} is below 1", subgroup.min_member));
    auto constraint = topology_constraint(entry, "topologyConstraint", false);
    if (!constraint) return constraint.error();
    if (!constraint->topology.empty() && !whole.topology.empty() && constraint->topology != whole.topology) {
      return fields.error(
          path + ".topologyConstraint.topology",
          fmt::format("'{}' differs from the PodGroup's topology '{}'", constraint->topology, whole.topology));
    }
    if (constraint->topology.empty() && !constraint->empty() && whole.topology.empty()) {
      return fields.error(path + ".topologyConstraint.topology",
                          "is required where spec.topologyConstraint names no topology");
    }
    subgroup.constraint = std::move(*constraint);
    subgroups.push_back(std::move(subgroup));
  }
  return subgroups;
}

}  // namespace

Result<Topology> topology_from_object(const nlohmann::json& object) {
  Topology topology;
  const ObjectFields fields(object, fmt::format("topology {}", kube::object_key(object)));
  auto name = fields.string("metadata.name");
  if (!name) return name.error();
  topology.name = std::move(*name);
  auto levels = fields.array("spec.levels");
  if (!levels) return levels.error();
  if (*levels == nullptr || (*levels)->empty()) {
    return fields.error("spec.levels", "is required: node labels, widest first, such as tessera.dev/rack");
  }
  for (size_t i = 0; i < (*levels)->size(); ++i) {
    const std::string path = fmt::format("spec.levels[{}]", i);
    auto label = fields.child((**levels)[i], path).string("nodeLabel");
    if (!label) return label.error();
    if (label->empty()) return fields.error(path + ".nodeLabel", "is required: a node label key");
    if (std::find(topology.levels.begin(), topology.levels.end(), *label) != topology.levels.end()) {
      return fields.error(path + ".nodeLabel", fmt::format("'{}' appears twice", *label));
    }
    topology.levels.push_back(std::move(*label));
  }
  return topology;
}

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
  auto constraint = topology_constraint(fields, "spec.topologyConstraint", true);
  if (!constraint) return constraint.error();
  info.topology = std::move(*constraint);
  auto subgroups = sub_groups(fields, info.topology);
  if (!subgroups) return subgroups.error();
  info.subgroups = std::move(*subgroups);
  auto created = fields.timestamp("metadata.creationTimestamp");
  if (!created) return created.error();
  info.created_at = created->value_or(0);
  return info;
}

}  // namespace tessera::adapter
