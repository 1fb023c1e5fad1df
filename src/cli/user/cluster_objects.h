// What the user commands read from the cluster to show workloads: PodGroups, Tessera's pods, the
// controllers that group pods without a PodGroup (Jobs, JobSets...), namespaces; and how a name
// a user types finds its workload.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "adapter/workload_owners.h"
#include "cli/user/cluster_access.h"
#include "cli/user/node_view.h"

namespace tessera::cli {

struct WorkloadObjects {
  nlohmann::json pod_groups;  // List answers
  nlohmann::json pods;
  nlohmann::json namespaces;
  adapter::OwnerObjects owners;
};

// In the command's namespace, or every namespace with -A. Kinds the cluster does not serve, or
// that the user may not list, are left out (their pods then show without a workload).
Result<WorkloadObjects> fetch_workload_objects(const Cluster& cluster);

// A list of Tessera's own kind (`plural`: "podgroups", "queues") at `path`; a cluster that does
// not serve it (404) is an error that says Tessera's CRDs are not installed.
Result<nlohmann::json> list_tessera_kind(const Cluster& cluster, const std::string& path, const std::string& plural);

// The owner kinds as the scheduler keys them ("namespace/name"), from their List answers.
adapter::OwnerObjects owner_objects(const nlohmann::json& jobs, const nlohmann::json& jobsets,
                                    const nlohmann::json& pytorchjobs, const nlohmann::json& trainjobs,
                                    const nlohmann::json& rayclusters);

// Each of Tessera's pods' queue: its queue label, else its PodGroup's spec.queue, else its
// namespace's queue label (the order the scheduler reads them in, docs/kubernetes.md).
PodQueues pod_queues(const WorkloadObjects& objects);

// The PodGroup a user means by `name` in `namespace_name`: the PodGroup of that name, else the
// one Tessera wrote for the object of that name (a Job "train": PodGroup "job-train"). The error
// reads `workload "x" not found in namespace "y"`.
Result<nlohmann::json> find_workload(const Cluster& cluster, const std::string& namespace_name,
                                     const std::string& name);

}  // namespace tessera::cli
