// Workloads from the objects users already run (docs/workloads.md), without a PodGroup: a pod
// that names none is grouped by the controller that made it. A batch/v1 Job is a gang of its
// parallelism; a JobSet (also one a Kubeflow TrainJob made) is one gang of all its jobs' pods; a
// Kubeflow PyTorchJob is a gang of its replicas (its minimum, when elastic); a KubeRay RayCluster
// is a gang of its head and its worker groups' replicas (their minimums, when it autoscales); each
// group of a LeaderWorkerSet is a gang of the group's size. A pod of a ReplicaSet (a Deployment's) or a
// StatefulSet is an inference replica: a workload of its own, not preemptible unless it says so.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kube/informer.h"

namespace tessera::adapter {

// The owner objects the scheduler watches, keyed "namespace/name". A kind the cluster does not
// serve is empty.
struct OwnerObjects {
  std::map<std::string, kube::ObjectPtr> jobs;         // batch/v1
  std::map<std::string, kube::ObjectPtr> jobsets;      // jobset.x-k8s.io/v1alpha2
  std::map<std::string, kube::ObjectPtr> pytorchjobs;  // kubeflow.org/v1
  std::map<std::string, kube::ObjectPtr> trainjobs;    // trainer.kubeflow.org/v1alpha1
  std::map<std::string, kube::ObjectPtr> rayclusters;  // ray.io/v1
};

// An object a user created, as events name it.
struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string uid;  // empty where it is not known (a LeaderWorkerSet: its pods do not name it)

  std::string describe() const { return kind + " " + namespace_name + "/" + name; }  // "Job ml/train"
  bool operator==(const ObjectRef&) const = default;
};

struct OwnedWorkload {
  std::string key;  // the workload's: "ns/Job/name", "ns/LeaderWorkerSet/name/2"; an inference pod's own key
  ObjectRef owner;  // the object the user created: explanations go there too
  int min_member = 1;
  bool inference = false;  // a replica of its own, not preemptible by default
  std::string queue;       // the owner's queue label; empty: none
  // Not empty while an owner the grouping needs is not in the caches yet ("Job ml/train"): the
  // pods wait rather than start as gangs of the wrong size.
  std::string waiting_for;
  // The PodGroup Tessera writes for the workload ("job-train" beside Job train), where its status
  // is kept; empty for an inference replica, or where the name would pass 253 characters.
  std::string pod_group_name;
  // What that PodGroup is owner-referenced to, so that garbage collection removes it with the
  // workload: the owner, or the pod's controller where the owner's uid is not known.
  ObjectRef collected_with;

  // "namespace/name" of its PodGroup, else its key.
  std::string pod_group_key() const {
    return pod_group_name.empty() ? key : owner.namespace_name + "/" + pod_group_name;
  }
};

// The annotation on a PodGroup Tessera wrote for a workload: the workload's key.
inline constexpr std::string_view kWorkloadAnnotation = "scheduling.tessera.dev/workload";

// nullopt: no controller Tessera groups by (a bare pod is a workload of its own).
std::optional<OwnedWorkload> owned_workload(const nlohmann::json& pod, const OwnerObjects& owners);

}  // namespace tessera::adapter
