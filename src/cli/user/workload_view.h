// Workloads as a user sees them: each PodGroup (those users write and those Tessera writes for
// Jobs, JobSets and the like, docs/workloads.md) with its pods, what they ask of GPUs, how many
// are bound, its state and why it waits. Pure functions of the objects the API server returned.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "adapter/workload_owners.h"
#include "cli/user/output.h"
#include "core/gpu_request.h"

namespace tessera::cli {

struct WorkloadSummary {
  std::string namespace_name;
  std::string name;  // the PodGroup's
  std::string owner;  // "Job/train" for a PodGroup Tessera wrote for a Job; empty otherwise
  std::string queue;
  std::string state;  // the PodGroup's phase: Pending, Running, Succeeded, Failed
  std::string gpus;   // as requested: "16", "3x0.5", "2x20Gi", "8+2x0.5"; "0" for none
  double gpu_total = 0;  // whole GPUs plus portions (memory requests are not counted)
  int pods = 0;          // pods that exist
  int bound = 0;         // of them, bound to a node
  int min_member = 1;
  std::string reason;   // the Scheduled condition's reason while it is False ("Unschedulable")
  std::string message;  // and its message
  double created = 0;   // Unix seconds
  std::vector<std::string> pod_names;
  // While pending, the scheduler's start estimate (status.startEstimate): when (Unix seconds; 0:
  // none) and what makes room, or why there is none.
  double estimated_start = 0;
  std::string estimate;
};

// "namespace/name" of the PodGroup each of Tessera's pods belongs to: its pod-group label, else
// the PodGroup Tessera writes for the controller that made it. Other pods are left out.
std::map<std::string, std::string> pod_groups_of_pods(const nlohmann::json& pods,
                                                      const adapter::OwnerObjects& owners);

// What a set of pods asks of GPUs, in a few characters (see WorkloadSummary::gpus).
std::string gpu_request_text(const std::vector<GpuRequest>& requests);
// A pod's GPU request as its resources and annotations give it; none when they cannot be read.
GpuRequest pod_gpu_request(const nlohmann::json& pod);

// One summary per PodGroup, in the order given.
std::vector<WorkloadSummary> summarize_workloads(const nlohmann::json& pod_groups, const nlohmann::json& pods,
                                                 const std::map<std::string, std::string>& pod_group_of_pod);

// `tessera list`: NAMESPACE (with -A), NAME, QUEUE, STATE, GPUS, PODS (bound/min), AGE, REASON;
// wide adds OWNER, STARTS (the estimate's wait) and the whole message. `now` in Unix seconds.
Table workload_table(const std::vector<WorkloadSummary>& workloads, bool all_namespaces, double now);
nlohmann::json workload_json(const std::vector<WorkloadSummary>& workloads);

// A start estimate read at `now`: "~35 min", "in the next cycle" (also once the expected time has
// passed), "no estimate", or "-" where the status has none.
std::string estimate_wait_text(double estimated_start, const std::string& estimate, double now);

// kubectl's age of an object created at `created` (Unix seconds), "<unknown>" without one.
std::string age_text(double created, double now);

}  // namespace tessera::cli
