#include "cli/user/workload_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "adapter/annotations.h"
#include "adapter/object_translation.h"
#include "adapter/status_reports.h"
#include "cli/user/object_reads.h"
#include "scheduler/start_estimates.h"
#include "wire/duration.h"
#include "wire/quantity.h"
#include "wire/timestamp.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

std::string counted(int count, const std::string& shape) { return count > 1 ? fmt::format("{}x{}", count, shape) : shape; }

}  // namespace

std::map<std::string, std::string> pod_groups_of_pods(const json& pods, const adapter::OwnerObjects& owners) {
  std::map<std::string, std::string> groups;
  for (const json& pod : list_items(pods)) {
    if (text_at(pod, "/spec/schedulerName") != adapter::kSchedulerName) continue;
    const json labels = pod.value("/metadata/labels"_json_pointer, json::object());
    const std::string label = labels.is_object() ? labels.value(std::string(adapter::kPodGroupLabel), "") : "";
    if (!label.empty()) {
      groups[object_key(pod)] = text_at(pod, "/metadata/namespace") + "/" + label;
    } else if (auto owned = adapter::owned_workload(pod, owners); owned && !owned->pod_group_name.empty()) {
      groups[object_key(pod)] = owned->pod_group_key();
    }
  }
  return groups;
}

GpuRequest pod_gpu_request(const json& pod) {
  // No node is known here: a pod that names a GPU model reads as one no node has, which changes
  // nothing of its request.
  const GpuModelCatalog no_models;
  Result<adapter::PodInfo> info = adapter::pod_from_object(pod, no_models);
  return info ? info->spec.gpu : GpuRequest::none();
}

std::string gpu_request_text(const std::vector<GpuRequest>& requests) {
  int whole = 0;
  std::map<int, int> portions;       // milli -> pods
  std::map<int64_t, int> memories;  // bytes -> pods
  for (const GpuRequest& request : requests) {
    switch (request.kind) {
      case GpuRequest::Kind::kWhole:
        whole += request.whole_gpus;
        break;
      case GpuRequest::Kind::kPortion:
        ++portions[request.portion_milli];
        break;
      case GpuRequest::Kind::kMemory:
        ++memories[request.memory_bytes];
        break;
      case GpuRequest::Kind::kNone:
        break;
    }
  }
  std::vector<std::string> parts;
  if (whole > 0) parts.push_back(std::to_string(whole));
  for (const auto& [milli, count] : portions) {
    parts.push_back(counted(count, adapter::format_resource("gpu", static_cast<double>(milli) / kMilliPerGpu)));
  }
  for (const auto& [bytes, count] : memories) parts.push_back(counted(count, wire::format_bytes(bytes)));
  if (parts.empty()) return "0";
  std::string text = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) text += "+" + parts[i];
  return text;
}

std::vector<WorkloadSummary> summarize_workloads(const json& pod_groups, const json& pods,
                                                 const std::map<std::string, std::string>& pod_group_of_pod) {
  std::map<std::string, std::vector<const json*>> members;
  for (const json& pod : list_items(pods)) {
    if (auto group = pod_group_of_pod.find(object_key(pod)); group != pod_group_of_pod.end()) {
      members[group->second].push_back(&pod);
    }
  }
  std::vector<WorkloadSummary> workloads;
  for (const json& group : list_items(pod_groups)) {
    WorkloadSummary summary;
    summary.namespace_name = text_at(group, "/metadata/namespace");
    summary.name = text_at(group, "/metadata/name");
    const json owners = group.value("/metadata/ownerReferences"_json_pointer, json::array());
    if (owners.is_array() && !owners.empty() && owners[0].is_object()) {
      summary.owner = owners[0].value("kind", "") + "/" + owners[0].value("name", "");
    }
    summary.queue = text_at(group, "/spec/queue");
    const json min_member = group.value("/spec/minMember"_json_pointer, json(1));
    summary.min_member = min_member.is_number_integer() ? min_member.get<int>() : 1;
    summary.state = text_at(group, "/status/phase");
    if (summary.state.empty()) summary.state = "Pending";
    const json scheduled = condition_of(group, "Scheduled");
    if (scheduled.is_object() && scheduled.value("status", "") == "False") {
      summary.reason = scheduled.value("reason", "");
      summary.message = scheduled.value("message", "");
    } else if (scheduled.is_null() && summary.state == "Pending") {
      summary.reason = "NotSeen";
      summary.message = "the scheduler has not reported on it yet";
    }
    summary.created = created_at(group);
    if (summary.state == "Pending") {
      summary.estimate = text_at(group, "/status/startEstimate/message");
      if (const auto start = wire::parse_time(text_at(group, "/status/startEstimate/time"))) {
        summary.estimated_start = *start;
      }
    }
    std::vector<GpuRequest> requests;
    for (const json* pod : members[summary.namespace_name + "/" + summary.name]) {
      ++summary.pods;
      if (!text_at(*pod, "/spec/nodeName").empty()) ++summary.bound;
      const GpuRequest request = pod_gpu_request(*pod);
      summary.gpu_total += static_cast<double>(request.nominal_milli()) / kMilliPerGpu;
      requests.push_back(request);
      summary.pod_names.push_back(text_at(*pod, "/metadata/name"));
    }
    summary.gpus = gpu_request_text(requests);
    workloads.push_back(std::move(summary));
  }
  return workloads;
}

std::string estimate_wait_text(double estimated_start, const std::string& estimate, double now) {
  if (estimated_start > 0) return describe_wait(std::max(0.0, estimated_start - now));
  return estimate.empty() ? std::string("-") : std::string("no estimate");
}

std::string age_text(double created, double now) {
  if (created <= 0) return "<unknown>";
  return wire::human_duration(std::chrono::seconds(static_cast<int64_t>(std::max(0.0, now - created))));
}

Table workload_table(const std::vector<WorkloadSummary>& workloads, bool all_namespaces, double now) {
  // The reason in a few words on a terminal line; -o wide has all of it.
  constexpr size_t kReasonWidth = 60;
  Table table;
  if (all_namespaces) table.columns.push_back({"NAMESPACE"});
  for (const char* header : {"NAME", "QUEUE", "STATE", "GPUS", "PODS", "AGE", "REASON"}) table.columns.push_back({header});
  table.columns.push_back({"OWNER", true});
  table.columns.push_back({"STARTS", true});
  table.columns.push_back({"MESSAGE", true});
  for (const WorkloadSummary& workload : workloads) {
    std::vector<std::string> row;
    if (all_namespaces) row.push_back(workload.namespace_name);
    const std::string reason = workload.reason.empty() ? "-" : workload.reason + ": " + workload.message;
    for (std::string cell : {workload.name, workload.queue, workload.state, workload.gpus,
                             fmt::format("{}/{}", workload.bound, workload.min_member),
                             age_text(workload.created, now), shorten(reason, kReasonWidth),
                             workload.owner.empty() ? std::string("-") : workload.owner,
                             estimate_wait_text(workload.estimated_start, workload.estimate, now),
                             workload.message.empty() ? std::string("-") : workload.message}) {
      row.push_back(std::move(cell));
    }
    table.add_row(std::move(row));
  }
  return table;
}

json workload_json(const std::vector<WorkloadSummary>& workloads) {
  json items = json::array();
  for (const WorkloadSummary& workload : workloads) {
    items.push_back({{"namespace", workload.namespace_name},
                     {"name", workload.name},
                     {"owner", workload.owner},
                     {"queue", workload.queue},
                     {"state", workload.state},
                     {"gpus", workload.gpus},
                     {"gpuTotal", workload.gpu_total},
                     {"pods", workload.pods},
                     {"boundPods", workload.bound},
                     {"minMember", workload.min_member},
                     {"reason", workload.reason},
                     {"message", workload.message},
                     {"created", workload.created > 0 ? wire::format_time(workload.created) : ""},
                     {"podNames", workload.pod_names},
                     {"estimatedStart", workload.estimated_start > 0 ? wire::format_time(workload.estimated_start) : ""},
                     {"estimate", workload.estimate}});
  }
  return {{"kind", "WorkloadList"}, {"items", items}};
}

}  // namespace tessera::cli
