#include "dashboard/dashboard_json.h"

#include <algorithm>
#include <cmath>

namespace tessera::dashboard {

namespace {

using nlohmann::json;

double rounded(double gpus) { return std::round(gpus * 1000.0) / 1000.0; }

json header(const DashboardState& state) { return {{"cycle", state.cycle}, {"cycleAt", state.cycle_at}}; }

bool matches(const std::string& text, const std::string& match) {
  return match.empty() || text.find(match) != std::string::npos;
}

// Rows [offset, offset + limit) of those `keep` admits, each rendered by `render`; also says
// how many there are in all and how many were admitted.
template <typename Row, typename Keep, typename Render>
json paged(const std::vector<Row>& rows, const Page& page, Keep keep, Render render, json& out) {
  json window = json::array();
  const size_t limit = std::min(page.limit, kMaxPageRows);
  size_t matched = 0;
  for (const Row& row : rows) {
    if (!keep(row)) continue;
    if (matched >= page.offset && window.size() < limit) window.push_back(render(row));
    ++matched;
  }
  out["total"] = rows.size();
  out["matched"] = matched;
  out["offset"] = page.offset;
  out["limit"] = limit;
  return window;
}

}  // namespace

json overview_json(const DashboardState& state) {
  const Overview& o = state.overview;
  json out = header(state);
  out["nodes"] = o.nodes;
  out["gpus"] = rounded(o.gpus);
  out["allocated"] = rounded(o.allocated);
  out["fragmented"] = rounded(o.fragmented);
  out["running"] = o.running;
  out["pending"] = o.pending;
  out["pendingByReason"] = o.pending_by_reason;
  out["evictions"] = state.evictions.size();
  return out;
}

json queues_json(const DashboardState& state) {
  json out = header(state);
  json rows = json::array();
  for (const QueueRow& queue : state.queues) {
    json history = json::array();
    for (const QueueSample& sample : queue.history) {
      history.push_back({sample.at, rounded(sample.allocated), rounded(sample.fair_share)});
    }
    rows.push_back({{"name", queue.name},
                    {"parent", queue.parent},
                    {"depth", queue.depth},
                    {"leaf", queue.leaf},
                    {"deserved", rounded(queue.deserved)},
                    {"fairShare", rounded(queue.fair_share)},
                    {"allocated", rounded(queue.allocated)},
                    {"limit", queue.limit ? json(rounded(*queue.limit)) : json(nullptr)},
                    {"requested", rounded(queue.requested)},
                    {"running", queue.running},
                    {"pending", queue.pending},
                    {"history", std::move(history)}});
  }
  out["historyColumns"] = {"at", "allocated", "fairShare"};
  out["queues"] = std::move(rows);
  return out;
}

json nodes_json(const DashboardState& state, const Page& page) {
  json out = header(state);
  json queues = json::array();
  for (const QueueRow& queue : state.queues) queues.push_back(queue.name);
  out["queues"] = std::move(queues);
  out["columns"] = {"name", "model", "pool", "schedulable", "fragmented", "devices"};
  auto render = [](const NodeRow& node) {
    json devices = json::array();
    for (const DeviceUse& device : node.devices) {
      json cell = json::array();
      for (const DeviceHolder& holder : device.holders) {
        cell.push_back(holder.queue);
        cell.push_back(holder.milli);
      }
      devices.push_back(std::move(cell));
    }
    return json::array({node.name, node.model, node.pool, node.schedulable, rounded(node.fragmented), devices});
  };
  out["rows"] = paged(
      state.nodes, page, [&](const NodeRow& node) { return matches(node.name, page.match); }, render, out);
  return out;
}

json workloads_json(const DashboardState& state, const Page& page) {
  json out = header(state);
  auto render = [](const WorkloadRow& row) {
    return json{{"workload", row.key},
                {"queue", row.queue},
                {"gpus", rounded(row.gpus)},
                {"reason", row.reason},
                {"message", row.message},
                {"estimatedStart", row.estimated_start ? json(*row.estimated_start) : json(nullptr)},
                {"estimate", row.estimate}};
  };
  out["pending"] = paged(
      state.pending, page,
      [&](const WorkloadRow& row) { return matches(row.key, page.match) || matches(row.queue, page.match); }, render,
      out);
  json evictions = json::array();
  for (const EvictionRow& row : state.evictions) {
    evictions.push_back({{"at", row.at},
                         {"workload", row.workload},
                         {"queue", row.queue},
                         {"action", row.action},
                         {"madeRoomFor", row.made_room_for},
                         {"pods", row.pods},
                         {"gpus", rounded(row.gpus)}});
  }
  out["evictions"] = std::move(evictions);
  return out;
}

}  // namespace tessera::dashboard
