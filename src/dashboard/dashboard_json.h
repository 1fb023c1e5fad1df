// The JSON the dashboard's page fetches (/ui/api/...), rendered from one DashboardState. GPU
// amounts are in GPUs rounded to thousandths; node rows are columnar and paged, so that a page
// of a 10,000-node cluster stays small (docs/dashboard.md gives the sizes).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "dashboard/dashboard_state.h"

namespace tessera::dashboard {

// A window onto a long list: rows [offset, offset + limit) of those whose name contains `match`.
struct Page {
  size_t offset = 0;
  size_t limit = 200;
  std::string match;
};
inline constexpr size_t kMaxPageRows = 2000;

nlohmann::json overview_json(const DashboardState& state);
nlohmann::json queues_json(const DashboardState& state);
// {"total", "matched", "offset", "queues": [names], "columns": [...], "rows": [[...]]}; a device is
// [queue, milli, queue, milli...] (queue -1: pods of other schedulers), [] when free.
nlohmann::json nodes_json(const DashboardState& state, const Page& page);
// The pending workloads (paged, matched on key or queue) and the recent evictions.
nlohmann::json workloads_json(const DashboardState& state, const Page& page);

}  // namespace tessera::dashboard
