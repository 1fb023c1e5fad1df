// The dashboard's HTTP surface on the scheduler's metrics server (docs/dashboard.md): the page and
// its assets, built into the binary, under /ui/, and the JSON it fetches under /ui/api/. Read only.
//
// Every /ui request passes one guard first:
//   1. --dashboard-auth loopback (the default): answered only when the peer is a loopback address
//      (the metrics port may listen on 0.0.0.0 for Prometheus; `kubectl port-forward` arrives on
//      loopback), else 403;
//   2. --dashboard-auth kubernetes: the request must carry "Authorization: Bearer TOKEN" (401
//      without), and the token's user must be allowed to list PodGroups in all namespaces
//      (access_review.h; 401 for a token the API server does not accept, 403 for a user it does
//      not allow, 503 while it cannot be asked).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "dashboard/access_review.h"
#include "dashboard/dashboard_state.h"

namespace httplib {
class Server;
}

namespace tessera::dashboard {

enum class DashboardAuth { kLoopback, kKubernetes };

// "loopback" or "kubernetes"; an error naming the flag and the choices otherwise.
Result<DashboardAuth> parse_dashboard_auth(std::string_view text);

bool is_loopback_address(std::string_view address);
// The token of an "Authorization: Bearer TOKEN" header value, or nothing.
std::optional<std::string_view> bearer_token(std::string_view authorization);

struct DashboardRoutes {
  std::function<std::shared_ptr<const DashboardState>()> state;
  DashboardAuth auth = DashboardAuth::kLoopback;
  AccessReviewer* reviewer = nullptr;  // required for kKubernetes; must outlive the server
  std::function<double()> now;         // Unix seconds, for the reviewer's cache
};

// The guard's verdict for one request (pure but for the reviewer it may ask).
AccessVerdict guard_request(const DashboardRoutes& routes, std::string_view peer_address,
                            std::string_view authorization);

// Adds GET /ui, /ui/, the assets and /ui/api/{overview,queues,nodes,workloads}.
void add_dashboard_routes(httplib::Server& server, DashboardRoutes routes);

}  // namespace tessera::dashboard
