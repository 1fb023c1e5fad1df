#include "dashboard/dashboard_routes.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>

#include <charconv>

#include "dashboard/dashboard_json.h"
#include "dashboard/embedded_assets.h"

namespace tessera::dashboard {

namespace {

// The page loads only what the binary serves, and may not be framed by another site.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

void set_common_headers(httplib::Response& response) {
  response.set_header("Content-Security-Policy", kContentSecurityPolicy);
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("Cache-Control", "no-store");
}

// A number query parameter, its default when absent; an error naming it when not a number.
Result<size_t> size_parameter(const httplib::Request& request, const char* name, size_t fallback) {
  if (!request.has_param(name)) return fallback;
  const std::string text = request.get_param_value(name);
  size_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return Error{fmt::format("query parameter '{}': '{}' is not a whole number", name, text)};
  }
  return value;
}

Result<Page> page_of(const httplib::Request& request) {
  Page page;
  auto offset = size_parameter(request, "offset", page.offset);
  if (!offset) return offset.error();
  auto limit = size_parameter(request, "limit", page.limit);
  if (!limit) return limit.error();
  page.offset = *offset;
  page.limit = *limit;
  if (request.has_param("match")) page.match = request.get_param_value("match");
  return page;
}

}  // namespace

Result<DashboardAuth> parse_dashboard_auth(std::string_view text) {
  if (text == "loopback") return DashboardAuth::kLoopback;
  if (text == "kubernetes") return DashboardAuth::kKubernetes;
  return Error{fmt::format("--dashboard-auth: '{}' is not one of loopback, kubernetes", text)};
}

bool is_loopback_address(std::string_view address) {
  const std::string text(address);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  // An IPv4 peer on a dual-stack socket: ::ffff:127.x.y.z.
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

AccessVerdict guard_request(const DashboardRoutes& routes, std::string_view peer_address,
                            std::string_view authorization) {
  if (routes.auth == DashboardAuth::kLoopback) {
    if (is_loopback_address(peer_address)) return {Access::kAllowed, "a loopback peer"};
    return {Access::kForbidden,
            fmt::format("the dashboard answers only on loopback (this request came from {}); reach it with kubectl "
                        "port-forward, or run the scheduler with --dashboard-auth kubernetes",
                        peer_address)};
  }
  const auto token = bearer_token(authorization);
  if (!token) {
    return {Access::kUnauthenticated,
            "the dashboard needs 'Authorization: Bearer TOKEN' with a Kubernetes token that may list podgroups in all "
            "namespaces"};
  }
  if (routes.reviewer == nullptr) return {Access::kUnavailable, "no access reviewer is configured"};
  return routes.reviewer->review(*token, routes.now());
}

void add_dashboard_routes(httplib::Server& server, DashboardRoutes routes) {
  auto shared = std::make_shared<const DashboardRoutes>(std::move(routes));
  // Runs `serve` for requests the guard allows; answers the rest with its status and message.
  auto guarded = [shared](auto serve) {
    return [shared, serve](const httplib::Request& request, httplib::Response& response) {
      set_common_headers(response);
      const AccessVerdict verdict =
          guard_request(*shared, request.remote_addr, request.get_header_value("Authorization"));
      if (verdict.access != Access::kAllowed) {
        response.status = verdict.http_status();
        if (response.status == 401) response.set_header("WWW-Authenticate", "Bearer realm=\"tessera\"");
        response.set_content(verdict.message + "\n", "text/plain; charset=utf-8");
        return;
      }
      serve(request, response);
    };
  };
  // The page, its style and script hold no cluster data. In kubernetes mode they are served to
  // anyone, so a browser can load the sign-in form that sends the token with every data request;
  // in loopback mode everything keeps the loopback rule.
  auto page_part = [shared, guarded](auto serve) -> httplib::Server::Handler {
    if (shared->auth == DashboardAuth::kKubernetes) {
      return [serve](const httplib::Request& request, httplib::Response& response) {
        set_common_headers(response);
        serve(request, response);
      };
    }
    return guarded(serve);
  };
  server.Get("/ui", page_part([](const httplib::Request&, httplib::Response& response) {
               response.set_redirect("/ui/", 301);
             }));
  for (const Asset& asset : dashboard_assets()) {
    server.Get(fmt::format("/ui/{}", asset.path),
               page_part([asset](const httplib::Request&, httplib::Response& response) {
                 response.set_content(std::string(asset.body), std::string(asset.content_type));
               }));
  }
  auto api = [&](const char* name, auto render) {
    server.Get(fmt::format("/ui/api/{}", name),
               guarded([shared, render](const httplib::Request& request, httplib::Response& response) {
                 const std::shared_ptr<const DashboardState> state = shared->state();
                 Result<nlohmann::json> body = render(*state, request);
                 if (!body) {
                   response.status = 400;
                   response.set_content(body.error().message + "\n", "text/plain; charset=utf-8");
                   return;
                 }
                 // Names and messages come from the cluster's objects: bytes that are not UTF-8 are
                 // replaced rather than failing the whole answer.
                 response.set_content(body->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                      "application/json");
               }));
  };
  api("overview", [](const DashboardState& state, const httplib::Request&) -> Result<nlohmann::json> {
    return overview_json(state);
  });
  api("queues", [](const DashboardState& state, const httplib::Request&) -> Result<nlohmann::json> {
    return queues_json(state);
  });
  api("nodes", [](const DashboardState& state, const httplib::Request& request) -> Result<nlohmann::json> {
    auto page = page_of(request);
    if (!page) return page.error();
    return nodes_json(state, *page);
  });
  api("workloads", [](const DashboardState& state, const httplib::Request& request) -> Result<nlohmann::json> {
    auto page = page_of(request);
    if (!page) return page.error();
    return workloads_json(state, *page);
  });
  server.Get(R"(/ui/.*)", guarded([](const httplib::Request& request, httplib::Response& response) {
               response.status = 404;
               response.set_content(fmt::format("no dashboard page {}\n", request.path), "text/plain; charset=utf-8");
             }));
}

}  // namespace tessera::dashboard
