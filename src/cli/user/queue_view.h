// `tessera top queues`: the queue tree with each queue's GPU figures, from the Queue objects'
// spec and the status the scheduler writes (docs/kubernetes.md): deserved, fair share, allocated,
// borrowed (allocated beyond deserved) and what its waiting pods ask for.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/user/output.h"

namespace tessera::cli {

// One queue's figures for one resource (GPUs: "gpu"); nullopt where neither the spec nor the
// status gives it (a queue the scheduler has not reported on yet).
struct QueueFigures {
  std::string name;
  std::string parent;
  int depth = 0;  // 0 for a top-level queue
  std::optional<double> deserved, fair_share, allocated, pending, limit;
  std::optional<int> running_workloads, pending_workloads;
  std::string accepted;  // the Accepted condition's status ("True", "False"), "" before the first report
  std::string accepted_reason;

  // Allocated beyond the deserved quota: what other queues may take back.
  std::optional<double> borrowed() const;
};

QueueFigures queue_figures(const nlohmann::json& queue, const std::string& resource = "gpu");

// Every queue, each parent before its children, siblings by name; a queue whose parent is not
// among them is shown at the top level.
std::vector<QueueFigures> queue_tree(const nlohmann::json& queues, const std::string& resource = "gpu");

// QUEUE (indented by depth), DESERVED, FAIR-SHARE, ALLOCATED, BORROWED, PENDING; wide adds LIMIT,
// WORKLOADS (running/pending) and ACCEPTED.
Table queue_table(const std::vector<QueueFigures>& queues);
nlohmann::json queue_json(const std::vector<QueueFigures>& queues);

// A GPU amount as the tables print it: "2", "2.5", "-" for none.
std::string gpu_figure(const std::optional<double>& amount);

}  // namespace tessera::cli
