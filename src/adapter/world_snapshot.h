// The engine's world built from the API server's objects: nodes, the workloads of Tessera's
// pods grouped by PodGroup, the queue tree, and the capacity that other pods hold. Built anew
// for every cycle from the informers' caches plus the scheduler's memory, so that a restarted
// scheduler, or a standby that takes over, schedules from exactly what the API server says.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter/object_translation.h"
#include "adapter/scheduler_memory.h"
#include "adapter/workload_owners.h"
#include "core/node_pool.h"
#include "core/result.h"
#include "engine/cluster_state.h"
#include "kube/informer.h"
#include "policy/fair_share.h"
#include "policy/queue_validation.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"

namespace tessera::adapter {

// Copies of the informers' caches, keyed as kube::object_key does.
struct ObservedObjects {
  std::map<std::string, kube::ObjectPtr> nodes;
  std::map<std::string, kube::ObjectPtr> pods;
  std::map<std::string, kube::ObjectPtr> queues;
  std::map<std::string, kube::ObjectPtr> pod_groups;
  std::map<std::string, kube::ObjectPtr> namespaces;
  OwnerObjects owners;  // Jobs, JobSets...: what groups pods that name no PodGroup
};

struct SnapshotPod {
  std::string key;  // "namespace/name"
  std::string namespace_name;
  std::string name;
  bool fractional = false;
  GpuMemoryTerms gpu_memory;  // for the annotations and environment of a GPU-memory pod
};

// A workload the engine does not see, and why: its pods' events and its PodGroup say so.
struct HeldWorkload {
  std::string key;
  std::string pod_group;  // "namespace/name", empty for a single pod
  std::vector<std::string> pod_keys;
  std::string reason;   // a machine-readable code: InvalidPod, NoQueue, NotLeafQueue, MissingPodGroup, GangIncomplete,
                        // OwnerNotSeen
  std::string message;  // the sentence
  std::optional<ObjectRef> owner;  // the Job, JobSet... whose pods these are
};

struct Snapshot {
  std::shared_ptr<const ClusterSpec> spec;
  std::unique_ptr<ClusterState> cluster;
  std::optional<QueueTree> tree;
  std::optional<ResourceMeter> meter;
  WorkloadSet workloads;

  std::vector<std::string> node_names;                    // by NodeIndex
  std::vector<std::vector<int>> physical_devices;         // by NodeIndex: engine device -> device index on the node
  std::vector<SnapshotPod> pods;                          // by PodId
  std::vector<std::string> workload_keys;                 // by WorkloadId: "namespace/podgroup" or "namespace/pod"
  std::vector<std::string> workload_pod_groups;           // by WorkloadId: PodGroup key, empty for a single pod
  std::vector<std::optional<ObjectRef>> workload_owners;  // by WorkloadId: the Job, JobSet... it stands for
  // The workloads of pods grouped by their controllers whose PodGroup Tessera writes (one each).
  std::vector<OwnedWorkload> owned_pod_groups;
  std::vector<HeldWorkload> held;
  // Queue objects left out (unreadable, or their parent chain is broken) and accepted ones with
  // a quota that cannot all be met; each is reported on the Queue's own status.
  std::vector<QueueProblem> queue_problems;
  std::map<std::string, PodPhase> pod_phases;  // every Tessera pod seen, for PodGroup status
  // PodGroup key (or the key of a workload its owner makes, "ns/Job/name") -> its pod keys
  std::map<std::string, std::vector<std::string>> pod_group_pods;
};

// Builds the world. Fails only when the queue tree as a whole is unusable (a cycle of parents,
// say); single bad objects are left out and reported in `held` / `queue_problems`.
// `overcommit` gives each node pool's GPU-memory overcommit (core/node_pool.h).
Result<Snapshot> build_snapshot(const ObservedObjects& observed, const SchedulerMemory& memory, double now,
                                const GpuMemoryOvercommit& overcommit = {});

// The placement a binding in the snapshot stands for, with physical device indices.
PodPlacement placement_of(const Snapshot& snapshot, const Binding& binding);

}  // namespace tessera::adapter
