#include "adapter/world_snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "adapter/annotations.h"
#include "policy/device_choice.h"
#include "policy/feasibility.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;

// A pod as the snapshot sees it: read, with where it runs (cache or memory).
struct ReadPod {
  PodInfo info;
  std::optional<OwnedWorkload> owned;     // grouped by its controller (no PodGroup named)
  std::optional<PodPlacement> placement;  // bound in the cache, assumed, or planned
  double started_at = 0;
};

// What other pods hold on a node: taken out of the capacity the engine sees.
struct ForeignUse {
  Resources request;
  int whole_gpus = 0;
  std::vector<int> devices;                   // known device indices (Tessera pods the engine does not track)
  std::vector<std::pair<int, int>> portions;  // (device, milli) of fractional ones
};

std::string label(const json& object, std::string_view key) {
  if (!object.contains("metadata") || !object["metadata"].contains("labels")) return "";
  const json& map = object["metadata"]["labels"];
  auto it = map.find(std::string(key));
  return it != map.end() && it->is_string() ? it->get<std::string>() : "";
}

// The GPU portion a pod holds on a device of `device_memory` bytes.
int milli_per_device(const PodSpec& pod, int64_t device_memory) {
  switch (pod.gpu.kind) {
    case GpuRequest::Kind::kNone:
      return 0;
    case GpuRequest::Kind::kWhole:
      return kMilliPerGpu;
    default:
      return pod.gpu.milli_on_device(device_memory);
  }
}

class SnapshotBuilder {
 public:
  SnapshotBuilder(const ObservedObjects& observed, const SchedulerMemory& memory, double now,
                  const GpuMemoryOvercommit& overcommit)
      : observed_(observed), memory_(memory), now_(now), overcommit_(overcommit) {}

  Result<Snapshot> build() {
    read_nodes();
    read_pods();
    if (auto tree = read_queues(); !tree.ok()) return tree.error();
    std::vector<Group> groups = group_workloads();
    build_cluster();
    add_workloads(groups);
    return std::move(snapshot_);
  }

 private:
  struct Group {
    std::string key;
    std::string pod_group;               // PodGroup key, empty for a single pod
    std::optional<OwnedWorkload> owned;  // the workload its controller makes, without a PodGroup
    std::vector<ReadPod*> pods;
  };

  void read_nodes() {
    for (const auto& [key, object] : observed_.nodes) {
      auto node = node_from_object(*object, models_);
      if (!node) continue;  // a node the engine cannot read is a node it does not use
      node->gpu_memory_overcommit_milli = overcommit_.for_pool(node_pool(node->labels));
      node_index_[node->name] = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(*node));
    }
    foreign_.resize(nodes_.size());
  }

  std::optional<int> node_of(const std::string& name) const {
    auto it = node_index_.find(name);
    return it == node_index_.end() ? std::nullopt : std::optional<int>(it->second);
  }

  void read_pods() {
    std::set<std::string> plan_victims;
    std::map<std::string, PodPlacement> planned;
    for (const auto& [workload, plan] : memory_.plans) {
      plan_victims.insert(plan.victims.begin(), plan.victims.end());
      for (const auto& [pod, placement] : plan.bindings) planned.emplace(pod, placement);
    }
    for (const auto& [key, object] : observed_.pods) {
      const json& pod = *object;
      const bool tessera = pod.value("/spec/schedulerName"_json_pointer, std::string()) == kSchedulerName;
      const std::string node_name = pod.value("/spec/nodeName"_json_pointer, std::string());
      const std::string phase = pod.value("/status/phase"_json_pointer, std::string());
      std::optional<OwnedWorkload> owned;
      if (tessera && label(pod, kPodGroupLabel).empty()) owned = owned_workload(pod, observed_.owners);
      if (phase == "Succeeded" || phase == "Failed") {
        if (tessera) record_phase(key, pod, owned);
        continue;  // holds nothing
      }
      // Pods evicted for a room plan hold nothing, even before the cache shows them terminating:
      // the plan's pods hold their place.
      if (plan_victims.contains(key)) continue;
      const bool terminating = pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp");
      if (!tessera || terminating) {
        if (!node_name.empty()) add_foreign(pod, node_name);
        continue;
      }
      record_phase(key, pod, owned);
      auto info = pod_from_object(pod, models_);
      if (!info) {
        if (!node_name.empty()) add_foreign(pod, node_name);
        held_invalid_.push_back({key, label(pod, kPodGroupLabel), info.error().message});
        continue;
      }
      ReadPod read{std::move(*info), std::move(owned), std::nullopt, 0};
      // Not started by its kubelet yet: its GPUs are held from the binding.
      read.started_at = read.info.started_at > 0 ? read.info.started_at : read.info.bound_at;
      if (!node_name.empty()) {
        read.placement = PodPlacement{node_name, read.info.gpu_indices, 0};
      } else if (auto assumed = memory_.assumed.find(key); assumed != memory_.assumed.end()) {
        read.placement = assumed->second.placement;
        read.started_at = assumed->second.bound_at;
      } else if (auto plan = planned.find(key); plan != planned.end()) {
        read.placement = plan->second;
        read.started_at = now_;
      }
      pods_.push_back(std::move(read));
    }
  }

  void record_phase(const std::string& key, const json& pod, const std::optional<OwnedWorkload>& owned) {
    snapshot_.pod_phases[key] = pod_phase_named(pod.value("/status/phase"_json_pointer, std::string()));
    if (std::string group = label(pod, kPodGroupLabel); !group.empty()) {
      const std::string ns = pod.value("/metadata/namespace"_json_pointer, std::string("default"));
      snapshot_.pod_group_pods[ns + "/" + group].push_back(key);
    } else if (owned && !owned->inference) {
      snapshot_.pod_group_pods[owned->pod_group_key()].push_back(key);
    }
  }

  // A pod the engine does not schedule but whose resources are taken on its node.
  void add_foreign(const json& pod, const std::string& node_name) {
    const std::optional<int> node = node_of(node_name);
    if (!node) return;
    ForeignUse& use = foreign_[static_cast<size_t>(*node)];
    // A pod that does not read as a Tessera pod still holds its requests; read them leniently.
    json copy = pod;
    if (copy.contains("metadata") && copy["metadata"].contains("annotations")) {
      copy["metadata"]["annotations"].erase(std::string(kGpuFractionAnnotation));
      copy["metadata"]["annotations"].erase(std::string(kGpuMemoryAnnotation));
      copy["metadata"]["annotations"].erase(std::string(kGpuMemoryLimitAnnotation));
    }
    auto info = pod_from_object(copy, models_);
    if (!info) return;
    use.request += info->spec.request;
    if (info->spec.gpu.kind == GpuRequest::Kind::kWhole) {
      if (!info->gpu_indices.empty()) {
        use.devices.insert(use.devices.end(), info->gpu_indices.begin(), info->gpu_indices.end());
      } else {
        use.whole_gpus += info->spec.gpu.whole_gpus;
      }
    }
    // A fractional Tessera pod the engine does not track (terminating): its portion stays taken.
    if (auto original = pod_from_object(pod, models_); original && original->spec.gpu.is_fractional()) {
      for (int device : original->gpu_indices) {
        use.portions.emplace_back(device, milli_per_device(original->spec, device_memory(*node, device)));
      }
    }
  }

  int64_t device_memory(int node, int device) const {
    const NodeSpec& spec = nodes_[static_cast<size_t>(node)];
    return device >= 0 && device < spec.gpu_count() ? spec.gpus[static_cast<size_t>(device)].memory_bytes : 0;
  }

  Status read_queues() {
    std::vector<QueueSpec> specs;
    ResourceNames resources = ResourceNames::standard();
    for (const auto& [key, object] : observed_.queues) {
      auto spec = queue_from_object(*object, resources);
      if (!spec) {
        snapshot_.queue_problems.push_back({key, "InvalidSpec", spec.error().message, true});
        continue;
      }
      specs.push_back(std::move(*spec));
    }
    // One bad queue (or a bad chain of parents) leaves out itself and what hangs below it only.
    UsableQueues usable = usable_queues(std::move(specs), resources);
    for (QueueProblem& problem : usable.problems) snapshot_.queue_problems.push_back(std::move(problem));
    auto tree = QueueTree::build(std::move(usable.specs), std::move(resources));
    if (!tree) return Error{fmt::format("the queue tree is not usable: {}", tree.error().message)};
    for (QueueProblem& warning : quota_warnings(*tree)) snapshot_.queue_problems.push_back(std::move(warning));
    snapshot_.tree.emplace(std::move(*tree));
    return Ok{};
  }

  const QueueProblem* excluded_queue(const std::string& name) const {
    for (const QueueProblem& problem : snapshot_.queue_problems) {
      if (problem.excluded && problem.queue == name) return &problem;
    }
    return nullptr;
  }

  std::string namespace_queue(const std::string& ns) const {
    auto it = observed_.namespaces.find(ns);
    return it == observed_.namespaces.end() ? "" : label(*it->second, kNamespaceQueueLabel);
  }

  std::vector<Group> group_workloads() {
    std::map<std::string, Group> groups;
    for (ReadPod& pod : pods_) {
      const PodInfo& info = pod.info;
      Group* group = nullptr;
      if (info.pod_group.empty() && pod.owned) {
        group = &groups[pod.owned->key];
        group->key = pod.owned->key;
        group->owned = pod.owned;
        if (!pod.owned->inference && pod.owned->waiting_for.empty() && !pod.owned->pod_group_name.empty() &&
            group->pods.empty()) {
          snapshot_.owned_pod_groups.push_back(*pod.owned);
        }
      } else if (info.pod_group.empty()) {
        group = &groups[info.key];
        group->key = info.key;
      } else {
        const std::string key = info.namespace_name + "/" + info.pod_group;
        group = &groups[key];
        group->key = key;
        group->pod_group = key;
      }
      group->pods.push_back(&pod);
    }
    for (const auto& [key, pod_group, message] : held_invalid_) {
      const std::string ns = key.substr(0, key.find('/'));
      const std::string group_key = pod_group.empty() ? key : ns + "/" + pod_group;
      snapshot_.held.push_back(
          {group_key, pod_group.empty() ? "" : group_key, {key}, "InvalidPod", message, std::nullopt});
    }
    std::vector<Group> result;
    for (auto& [key, group] : groups) result.push_back(std::move(group));
    return result;
  }

  void build_cluster() {
    auto spec = std::make_shared<ClusterSpec>();
    spec->models = models_;
    for (const auto& [key, object] : observed_.topologies) {
      auto topology = topology_from_object(*object);
      if (topology) {
        spec->topologies.push_back(std::move(*topology));
      } else {
        snapshot_.topology_problems.push_back(topology.error().message);
      }
    }
    snapshot_.physical_devices.resize(nodes_.size());
    for (size_t index = 0; index < nodes_.size(); ++index) {
      NodeSpec node = nodes_[index];
      const ForeignUse& use = foreign_[index];
      node.allocatable -= use.request;
      node.allocatable.cpu_milli = std::max<int64_t>(node.allocatable.cpu_milli, 0);
      node.allocatable.memory_bytes = std::max<int64_t>(node.allocatable.memory_bytes, 0);
      // Devices held whole by other pods leave the engine's view; devices with a foreign portion
      // stay, with that portion taken (applied after the state exists).
      std::set<int> removed(use.devices.begin(), use.devices.end());
      std::set<int> claimed = tessera_devices_on(node.name);
      for (int device = node.gpu_count() - 1, left = use.whole_gpus; device >= 0 && left > 0; --device) {
        if (removed.contains(device) || claimed.contains(device)) continue;
        removed.insert(device);
        --left;
      }
      std::vector<GpuDevice> kept;
      for (int device = 0; device < node.gpu_count(); ++device) {
        if (removed.contains(device)) continue;
        kept.push_back(node.gpus[static_cast<size_t>(device)]);
        snapshot_.physical_devices[index].push_back(device);
      }
      node.gpus = std::move(kept);
      snapshot_.node_names.push_back(node.name);
      spec->nodes.push_back(std::move(node));
    }
    snapshot_.spec = spec;
    snapshot_.cluster = std::make_unique<ClusterState>(spec);
    snapshot_.meter.emplace(*spec, snapshot_.tree->resources());
    // Foreign portions: a placeholder pod bound to the device, owned by no workload.
    for (size_t index = 0; index < nodes_.size(); ++index) {
      for (auto [device, milli] : foreign_[index].portions) {
        const std::optional<int> engine_device = engine_device_of(static_cast<int>(index), device);
        if (!engine_device || milli <= 0) continue;
        const NodeState& state = snapshot_.cluster->node_state(static_cast<NodeIndex>(index));
        if (state.gpu_free_milli(*engine_device) < milli) continue;
        PodSpec placeholder;
        placeholder.name = "foreign-portion";
        placeholder.gpu = GpuRequest::portion(milli);
        const PodId id = snapshot_.cluster->add_pod(placeholder);
        snapshot_.pods.push_back({"", "", "", true, {}});
        snapshot_.cluster->bind(id,
                                Binding{static_cast<NodeIndex>(index), {static_cast<int16_t>(*engine_device)}, milli});
      }
    }
  }

  std::set<int> tessera_devices_on(const std::string& node) const {
    std::set<int> devices;
    for (const ReadPod& pod : pods_) {
      if (pod.placement && pod.placement->node == node)
        devices.insert(pod.placement->devices.begin(), pod.placement->devices.end());
    }
    return devices;
  }

  std::optional<int> engine_device_of(int node, int physical) const {
    const std::vector<int>& devices = snapshot_.physical_devices[static_cast<size_t>(node)];
    auto it = std::find(devices.begin(), devices.end(), physical);
    return it == devices.end() ? std::nullopt : std::optional<int>(static_cast<int>(it - devices.begin()));
  }

  // The binding a placement stands for in the engine, if the pod still fits there; devices the
  // placement does not name are chosen as the engine would.
  std::optional<Binding> engine_binding(const PodSpec& pod, const PodPlacement& placement) const {
    const std::optional<int> node = node_of(placement.node);
    if (!node) return std::nullopt;
    const ClusterState& cluster = *snapshot_.cluster;
    const NodeSpec& spec = cluster.node_spec(*node);
    const NodeState& state = cluster.node_state(*node);
    if (!pod.request.fits_in(state.free)) return std::nullopt;
    Binding binding{*node, {}, 0};
    if (!pod.gpu.wants_gpu()) return binding;
    std::vector<int16_t> devices;
    for (int physical : placement.devices) {
      if (auto device = engine_device_of(*node, physical)) devices.push_back(static_cast<int16_t>(*device));
    }
    if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
      const bool named =
          static_cast<int>(devices.size()) == pod.gpu.whole_gpus &&
          std::all_of(devices.begin(), devices.end(), [&](int16_t d) { return state.device_is_idle(d); });
      if (!named) devices = pick_whole_devices(spec, state, pod);
      if (static_cast<int>(devices.size()) != pod.gpu.whole_gpus) return std::nullopt;
      binding.devices = std::move(devices);
      binding.milli_per_device = kMilliPerGpu;
      return binding;
    }
    // The pod keeps the device it names while its request fits there, even where the limits
    // now pass the pool's overcommit (lowered since): the snapshot shows what runs.
    int device = devices.size() == 1 ? devices.front() : -1;
    if (device < 0 ||
        pod.gpu.milli_on_device(spec.gpus[static_cast<size_t>(device)].memory_bytes) > state.gpu_free_milli(device)) {
      device = tightest_device(spec, state, pod);
    }
    if (device < 0) return std::nullopt;
    return Binding::on_device(*node, device, pod.gpu, spec.gpus[static_cast<size_t>(device)].memory_bytes);
  }

  void hold(const Group& group, std::string reason, std::string message) {
    HeldWorkload held{group.key, group.pod_group, {}, std::move(reason), std::move(message), std::nullopt};
    if (group.owned && !group.owned->inference) {
      held.owner = group.owned->owner;
      // Its PodGroup is written once its size is known (not while its controller is unseen).
      if (!group.owned->pod_group_name.empty() && group.owned->waiting_for.empty()) {
        held.pod_group = group.owned->pod_group_key();
      }
    }
    for (const ReadPod* pod : group.pods) held.pod_keys.push_back(pod->info.key);
    snapshot_.held.push_back(std::move(held));
  }

  // A bound pod whose workload the engine does not track still holds its place.
  void bind_untracked(const ReadPod& pod) {
    const std::optional<Binding> binding = engine_binding(pod.info.spec, *pod.placement);
    if (!binding) return;
    const PodId id = snapshot_.cluster->add_pod(pod.info.spec);
    snapshot_.pods.push_back({pod.info.key, pod.info.namespace_name, pod.info.name, false, 0});
    snapshot_.cluster->bind(id, *binding);
  }

  void add_workloads(std::vector<Group>& groups) {
    const QueueTree& tree = *snapshot_.tree;
    for (Group& group : groups) {
      const PodGroupInfo* pod_group = nullptr;
      std::optional<PodGroupInfo> read_group;
      if (!group.pod_group.empty()) {
        auto it = observed_.pod_groups.find(group.pod_group);
        if (it == observed_.pod_groups.end()) {
          for (const ReadPod* pod : group.pods) {
            if (pod->placement) bind_untracked(*pod);
          }
          hold(group, "MissingPodGroup", fmt::format("PodGroup {} does not exist", group.pod_group));
          continue;
        }
        auto parsed = pod_group_from_object(*it->second);
        if (!parsed) {
          hold(group, "InvalidPodGroup", parsed.error().message);
          continue;
        }
        read_group = std::move(*parsed);
        pod_group = &*read_group;
      }
      const OwnedWorkload* owned = group.owned ? &*group.owned : nullptr;
      if (owned && !owned->waiting_for.empty()) {
        for (const ReadPod* pod : group.pods) {
          if (pod->placement) bind_untracked(*pod);
        }
        hold(group, "OwnerNotSeen",
             fmt::format("waiting to see {}, which its pods belong to, to learn how many start together",
                         owned->waiting_for));
        continue;
      }
      // Bound pods first, so that the gang (the first min_member) is what already runs.
      std::stable_sort(group.pods.begin(), group.pods.end(), [](const ReadPod* a, const ReadPod* b) {
        if (a->placement.has_value() != b->placement.has_value()) return a->placement.has_value();
        return a->info.name < b->info.name;
      });
      const PodInfo& first = group.pods.front()->info;
      std::string queue = pod_group && !pod_group->queue.empty() ? pod_group->queue
                          : owned && !owned->queue.empty()       ? owned->queue
                                                                 : first.queue_label;
      if (queue.empty()) queue = namespace_queue(first.namespace_name);
      const std::optional<QueueIndex> leaf = queue.empty() ? std::nullopt : tree.find(queue);
      if (!leaf || !tree.is_leaf(*leaf)) {
        for (const ReadPod* pod : group.pods) {
          if (pod->placement) bind_untracked(*pod);
        }
        if (queue.empty()) {
          hold(group, "NoQueue",
               fmt::format("no queue: set spec.queue on the PodGroup, label the pod or namespace {} with {}",
                           first.namespace_name, kQueueLabel));
        } else {
          const QueueProblem* problem = excluded_queue(queue);
          if (problem != nullptr) {
            hold(group, "QueueNotUsable", fmt::format("queue '{}' is not usable: {}", queue, problem->message));
          } else {
            hold(group, !leaf ? "NoQueue" : "NotLeafQueue",
                 !leaf ? fmt::format("queue '{}' does not exist", queue)
                       : fmt::format("queue '{}' is not a leaf queue; only leaves hold workloads", queue));
          }
        }
        continue;
      }
      // Pods that finished count toward the gang: the rest need not wait for them again.
      int finished = 0;
      if (pod_group || (owned && !owned->inference)) {
        auto members = snapshot_.pod_group_pods.find(pod_group ? group.pod_group : owned->pod_group_key());
        if (members != snapshot_.pod_group_pods.end()) {
          for (const std::string& key : members->second) {
            PodPhase phase = snapshot_.pod_phases[key];
            finished += phase == PodPhase::kSucceeded || phase == PodPhase::kFailed ? 1 : 0;
          }
        }
      }
      if (auto unknown = unknown_subgroup(group, pod_group)) {
        hold(group, "InvalidPodGroup", *unknown);
        continue;
      }
      const int declared = pod_group ? pod_group->min_member : owned ? owned->min_member : 1;
      const int live = static_cast<int>(group.pods.size());
      int bound = 0;
      for (const ReadPod* pod : group.pods) bound += pod->placement ? 1 : 0;
      int min_member = std::max(1, declared - finished);
      if (bound == 0 && live < min_member) {
        hold(group, "GangIncomplete",
             fmt::format("{} needs {} pods to start together and has {}",
                         pod_group ? "PodGroup " + group.pod_group : owned->owner.describe(), min_member, live));
        continue;
      }
      std::vector<ReadPod*> members = group.pods;
      if (bound > 0 && bound < std::min(min_member, live)) {
        // Part of a gang is bound (a scheduler stopped while binding it): those pods hold their
        // place and the rest of the gang is scheduled as a gang of its own.
        for (int i = 0; i < bound; ++i) bind_untracked(*members[static_cast<size_t>(i)]);
        members.erase(members.begin(), members.begin() + bound);
        min_member -= bound;
        bound = 0;
      }
      add_workload(group, members, pod_group, *leaf, min_member);
    }
  }

  // A pod's subgroup label that its PodGroup does not declare, as a sentence.
  static std::optional<std::string> unknown_subgroup(const Group& group, const PodGroupInfo* pod_group) {
    for (const ReadPod* pod : group.pods) {
      if (pod->info.subgroup.empty()) continue;
      if (pod_group && subgroup_index(*pod_group, pod->info.subgroup) >= 0) continue;
      return fmt::format("pod {} joins subgroup '{}', which {} does not declare in spec.subGroups", pod->info.key,
                         pod->info.subgroup, pod_group ? "PodGroup " + group.pod_group : "its workload");
    }
    return std::nullopt;
  }
  static int16_t subgroup_index(const PodGroupInfo& pod_group, const std::string& name) {
    for (size_t i = 0; i < pod_group.subgroups.size(); ++i) {
      if (pod_group.subgroups[i].name == name) return static_cast<int16_t>(i);
    }
    return -1;
  }

  void add_workload(const Group& group, const std::vector<ReadPod*>& members, const PodGroupInfo* pod_group,
                    QueueIndex leaf, int min_member) {
    const PodInfo& first = members.front()->info;
    WorkloadSpec spec;
    spec.name = group.key;
    spec.queue = snapshot_.tree->spec(leaf).name;
    spec.kind = pod_group && pod_group->kind ? *pod_group->kind : first.kind;
    spec.min_member = min_member;
    int priority = first.spec.priority;
    for (const ReadPod* pod : members) priority = std::max(priority, pod->info.spec.priority);
    spec.priority = pod_group && pod_group->priority ? *pod_group->priority : priority;
    bool preemptible = first.spec.preemptible;
    if (group.owned && group.owned->inference && !first.preemptible_explicit) {
      preemptible = false;  // an inference replica serves traffic: training does not take it back
    } else if (pod_group && pod_group->preemptible) {
      preemptible = *pod_group->preemptible;
    } else if (pod_group && pod_group->kind && !first.preemptible_explicit) {
      preemptible = *pod_group->kind != WorkloadKind::kInteractive;
    }
    spec.preemptible = preemptible;
    // A time limit the kubelet enforces: a workload all of whose pods have an active deadline
    // ends by the longest of them, and may backfill reserved room it leaves in time.
    double time_limit = 0;
    bool every_pod_limited = true;
    for (const ReadPod* pod : members) {
      every_pod_limited = every_pod_limited && pod->info.active_deadline_seconds > 0;
      time_limit = std::max(time_limit, pod->info.active_deadline_seconds);
    }
    spec.time_limit_seconds = every_pod_limited ? time_limit : 0;
    // The shortest limit any pod asks for (the queue's rules clamp it).
    for (const ReadPod* pod : members) {
      for (auto [asked, field] : {std::pair{pod->info.max_runtime_seconds, &WorkloadSpec::max_runtime_seconds},
                                  std::pair{pod->info.idle_limit_seconds, &WorkloadSpec::idle_limit_seconds}}) {
        if (asked && (!(spec.*field) || *asked < *(spec.*field))) spec.*field = asked;
      }
    }
    if (pod_group && (!pod_group->topology.empty() || !pod_group->subgroups.empty())) {
      spec.topology =
          std::make_shared<const WorkloadTopology>(WorkloadTopology{pod_group->topology, pod_group->subgroups});
    }
    double submitted_at = pod_group ? pod_group->created_at : first.created_at;
    for (const ReadPod* pod : members) {
      PodSpec pod_spec = pod->info.spec;
      pod_spec.name = pod->info.key;
      pod_spec.priority = spec.priority;
      pod_spec.preemptible = preemptible;
      if (pod_group && !pod->info.subgroup.empty()) pod_spec.subgroup = subgroup_index(*pod_group, pod->info.subgroup);
      spec.pods.push_back(std::move(pod_spec));
      if (!pod_group) submitted_at = std::min(submitted_at, pod->info.created_at);
    }
    ClusterState& cluster = *snapshot_.cluster;
    const WorkloadId id = snapshot_.workloads.add(spec, leaf, cluster, submitted_at);
    Workload& workload = snapshot_.workloads[id];
    double started_at = 0;
    for (size_t position = 0; position < members.size(); ++position) {
      const ReadPod& pod = *members[position];
      const PodSpec& pod_spec = spec.pods[position];
      SnapshotPod entry{pod.info.key, pod.info.namespace_name, pod.info.name, pod_spec.gpu.is_fractional(),
                        gpu_memory_terms(pod.info)};
      const PodId pod_id = workload.pods[position];
      if (snapshot_.pods.size() <= static_cast<size_t>(pod_id)) snapshot_.pods.resize(static_cast<size_t>(pod_id) + 1);
      snapshot_.pods[static_cast<size_t>(pod_id)] = std::move(entry);
      if (!pod.placement) continue;
      if (auto binding = engine_binding(pod_spec, *pod.placement)) {
        cluster.bind(pod_id, *binding);
        started_at = std::max(started_at, pod.started_at > 0 ? pod.started_at : now_);
      }
    }
    workload.started_at = started_at;
    snapshot_.workload_keys.push_back(group.key);
    const bool owned_group = group.owned && !group.owned->inference;
    snapshot_.workload_pod_groups.push_back(
        owned_group && !group.owned->pod_group_name.empty() ? group.owned->pod_group_key() : group.pod_group);
    snapshot_.workload_owners.push_back(group.owned && !group.owned->inference ? std::optional(group.owned->owner)
                                                                               : std::nullopt);
  }

  const ObservedObjects& observed_;
  const SchedulerMemory& memory_;
  const double now_;
  const GpuMemoryOvercommit& overcommit_;
  Snapshot snapshot_;
  GpuModelCatalog models_;
  std::vector<NodeSpec> nodes_;
  std::map<std::string, int> node_index_;
  std::vector<ForeignUse> foreign_;
  std::vector<ReadPod> pods_;
  struct Invalid {
    std::string key;
    std::string pod_group;
    std::string message;
  };
  std::vector<Invalid> held_invalid_;
};

}  // namespace

Result<Snapshot> build_snapshot(const ObservedObjects& observed, const SchedulerMemory& memory, double now,
                                const GpuMemoryOvercommit& overcommit) {
  return SnapshotBuilder(observed, memory, now, overcommit).build();
}

PodPlacement placement_of(const Snapshot& snapshot, const Binding& binding) {
  PodPlacement placement;
  placement.node = snapshot.node_names[static_cast<size_t>(binding.node)];
  const std::vector<int>& physical = snapshot.physical_devices[static_cast<size_t>(binding.node)];
  for (int16_t device : binding.devices) placement.devices.push_back(physical[static_cast<size_t>(device)]);
  placement.milli_per_device = binding.milli_per_device;
  return placement;
}

}  // namespace tessera::adapter
