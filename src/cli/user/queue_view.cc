#include "cli/user/queue_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "adapter/status_reports.h"
#include "cli/user/object_reads.h"
#include "wire/quantity.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

// A quantity as the API holds it, a string ("2.5", "500m") or a number; nullopt when absent or
// unreadable. GPUs and CPU cores come back in units, memory in bytes.
std::optional<double> quantity_at(const json& object, const std::string& pointer) {
  if (!object.is_object()) return std::nullopt;
  const json value = object.value(json::json_pointer(pointer), json());
  if (value.is_number()) return value.get<double>();
  if (!value.is_string()) return std::nullopt;
  Result<int64_t> milli = wire::parse_quantity_milli(value.get<std::string>());
  if (!milli) return std::nullopt;
  return static_cast<double>(*milli) / 1000.0;
}

std::optional<int> count_at(const json& object, const char* pointer) {
  const json value = object.value(json::json_pointer(pointer), json());
  if (value.is_number_integer()) return value.get<int>();
  return std::nullopt;
}

}  // namespace

std::optional<double> QueueFigures::borrowed() const {
  if (!allocated) return std::nullopt;
  return std::max(0.0, *allocated - deserved.value_or(0));
}

QueueFigures queue_figures(const json& queue, const std::string& resource) {
  QueueFigures figures;
  figures.name = text_at(queue, "/metadata/name");
  figures.parent = text_at(queue, "/spec/parent");
  // The status has the quota as the scheduler read it; before its first report, the spec's.
  figures.deserved = quantity_at(queue, "/status/deserved/" + resource);
  if (!figures.deserved) figures.deserved = quantity_at(queue, "/spec/resources/" + resource + "/deserved");
  figures.limit = quantity_at(queue, "/spec/resources/" + resource + "/limit");
  figures.fair_share = quantity_at(queue, "/status/fairShare/" + resource);
  figures.allocated = quantity_at(queue, "/status/allocated/" + resource);
  figures.pending = quantity_at(queue, "/status/pendingRequested/" + resource);
  figures.running_workloads = count_at(queue, "/status/runningWorkloads");
  figures.pending_workloads = count_at(queue, "/status/pendingWorkloads");
  const json accepted = condition_of(queue, "Accepted");
  if (accepted.is_object()) {
    figures.accepted = accepted.value("status", "");
    figures.accepted_reason = accepted.value("reason", "");
  }
  return figures;
}

std::vector<QueueFigures> queue_tree(const json& queues, const std::string& resource) {
  std::map<std::string, QueueFigures> by_name;
  for (const json& queue : list_items(queues)) {
    QueueFigures figures = queue_figures(queue, resource);
    by_name.emplace(figures.name, std::move(figures));
  }
  std::map<std::string, std::vector<std::string>> children;  // sorted by name, as the map is
  std::vector<std::string> roots;
  for (const auto& [name, figures] : by_name) {
    if (figures.parent.empty() || !by_name.contains(figures.parent) || figures.parent == name) {
      roots.push_back(name);
    } else {
      children[figures.parent].push_back(name);
    }
  }
  std::vector<QueueFigures> ordered;
  std::map<std::string, bool> placed;
  const std::function<void(const std::string&, int)> visit = [&](const std::string& name, int depth) {
    if (placed[name]) return;  // a cycle of parents: each queue once
    placed[name] = true;
    QueueFigures figures = by_name.at(name);
    figures.depth = depth;
    ordered.push_back(std::move(figures));
    for (const std::string& child : children[name]) visit(child, depth + 1);
  };
  for (const std::string& root : roots) visit(root, 0);
  for (const auto& [name, figures] : by_name) visit(name, 0);  // queues in a cycle, which no root reaches
  return ordered;
}

std::string gpu_figure(const std::optional<double>& amount) {
  if (!amount) return "-";
  return adapter::format_resource("gpu", *amount);  // as the Queue status writes it
}

Table queue_table(const std::vector<QueueFigures>& queues) {
  Table table;
  for (const char* header : {"QUEUE", "DESERVED", "FAIR-SHARE", "ALLOCATED", "BORROWED", "PENDING"}) {
    table.columns.push_back({header});
  }
  for (const char* header : {"LIMIT", "WORKLOADS", "ACCEPTED"}) table.columns.push_back({header, true});
  for (const QueueFigures& queue : queues) {
    const std::string workloads =
        queue.running_workloads ? fmt::format("{} running, {} pending", *queue.running_workloads,
                                              queue.pending_workloads.value_or(0))
                                : "-";
    const std::string accepted =
        queue.accepted.empty() ? "-" : queue.accepted + (queue.accepted_reason.empty() ? "" : " (" + queue.accepted_reason + ")");
    table.add_row({std::string(static_cast<size_t>(queue.depth) * 2, ' ') + queue.name, gpu_figure(queue.deserved),
                   gpu_figure(queue.fair_share), gpu_figure(queue.allocated), gpu_figure(queue.borrowed()),
                   gpu_figure(queue.pending), queue.limit ? gpu_figure(queue.limit) : "none", workloads, accepted});
  }
  return table;
}

json queue_json(const std::vector<QueueFigures>& queues) {
  const auto number = [](const std::optional<double>& amount) { return amount ? json(*amount) : json(); };
  json items = json::array();
  for (const QueueFigures& queue : queues) {
    items.push_back({{"name", queue.name},
                     {"parent", queue.parent},
                     {"depth", queue.depth},
                     {"gpu",
                      {{"deserved", number(queue.deserved)},
                       {"fairShare", number(queue.fair_share)},
                       {"allocated", number(queue.allocated)},
                       {"borrowed", number(queue.borrowed())},
                       {"pending", number(queue.pending)},
                       {"limit", number(queue.limit)}}},
                     {"runningWorkloads", queue.running_workloads ? json(*queue.running_workloads) : json()},
                     {"pendingWorkloads", queue.pending_workloads ? json(*queue.pending_workloads) : json()},
                     {"accepted", queue.accepted}});
  }
  return {{"kind", "QueueList"}, {"items", items}};
}

}  // namespace tessera::cli
