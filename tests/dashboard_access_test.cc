// Who the dashboard answers: loopback peers by default; with --dashboard-auth kubernetes, callers
// whose token the API server authenticates (TokenReview) and allows to list PodGroups in all
// namespaces (SubjectAccessReview), asked of a fake API server here and of a real one in
// tests/kube_e2e/scheduler_e2e.py (dashboard-auth).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "dashboard/access_review.h"
#include "dashboard/dashboard_publisher.h"
#include "dashboard/dashboard_routes.h"
#include "kube/api_client.h"
#include "kube_test_server.h"

namespace tessera::dashboard {
namespace {

using nlohmann::json;

// An API server that knows two tokens: alice's, whose user may list podgroups, and bob's, whose
// user may not. It counts the reviews it answers, and fails them all while `down` is set.
struct ReviewServer {
  testing::TestServer server;
  std::atomic<int> token_reviews{0};
  std::atomic<int> access_reviews{0};
  std::atomic<bool> down{false};
  json last_access_review;
  std::mutex mutex;

  ReviewServer() {
    server.http().Post("/apis/authentication.k8s.io/v1/tokenreviews", [this](const httplib::Request& request,
                                                                             httplib::Response& response) {
      ++token_reviews;
      if (down) {
        response.status = 500;
        return;
      }
      const std::string token = json::parse(request.body)["spec"]["token"];
      json status = {{"authenticated", false}, {"error", "invalid bearer token"}};
      if (token == "alice-token" || token == "bob-token") {
        const std::string user = token == "alice-token" ? "alice" : "bob";
        status = {{"authenticated", true},
                  {"user", {{"username", user}, {"uid", user + "-uid"}, {"groups", {"staff"}}}}};
      }
      response.set_content(json{{"kind", "TokenReview"}, {"status", status}}.dump(), "application/json");
    });
    server.http().Post("/apis/authorization.k8s.io/v1/subjectaccessreviews", [this](const httplib::Request& request,
                                                                                    httplib::Response& response) {
      ++access_reviews;
      const json review = json::parse(request.body);
      {
        std::lock_guard lock(mutex);
        last_access_review = review;
      }
      const bool allowed = review["spec"]["user"] == "alice";
      json status = {{"allowed", allowed}};
      if (!allowed) status["reason"] = "no RBAC rule allows it";
      response.set_content(json{{"kind", "SubjectAccessReview"}, {"status", status}}.dump(), "application/json");
    });
    server.start();
  }
  kube::ClientConfig config() const {
    kube::ClientConfig config;
    config.server = server.url();
    return config;
  }
};

TEST(DashboardAccess, AliceMayListPodGroupsEverywhereSoSheSeesTheDashboard) {
  ReviewServer api;
  kube::ApiClient client(api.config());
  AccessReviewer reviewer(client);
  const AccessVerdict verdict = reviewer.review("alice-token", 0);
  EXPECT_EQ(verdict.access, Access::kAllowed) << verdict.message;
  EXPECT_EQ(verdict.http_status(), 200);
  std::lock_guard lock(api.mutex);
  const json& spec = api.last_access_review["spec"];
  EXPECT_EQ(spec["user"], "alice");
  EXPECT_EQ(spec["uid"], "alice-uid");
  EXPECT_EQ(spec["groups"], json({"staff"}));
  EXPECT_EQ(spec["resourceAttributes"],
            json({{"verb", "list"}, {"group", "scheduling.tessera.dev"}, {"resource", "podgroups"}}));
  EXPECT_FALSE(spec["resourceAttributes"].contains("namespace")) << "cluster-wide";
}

TEST(DashboardAccess, BobIsAuthenticatedButMayNotSoHeIsForbiddenWithTheReason) {
  ReviewServer api;
  kube::ApiClient client(api.config());
  AccessReviewer reviewer(client);
  const AccessVerdict verdict = reviewer.review("bob-token", 0);
  EXPECT_EQ(verdict.access, Access::kForbidden);
  EXPECT_EQ(verdict.http_status(), 403);
  EXPECT_NE(verdict.message.find("bob may not list podgroups.scheduling.tessera.dev in all namespaces"),
            std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("no RBAC rule allows it"), std::string::npos) << verdict.message;
}

TEST(DashboardAccess, AnUnknownTokenIsUnauthenticatedAndNeverReachesTheAccessReview) {
  ReviewServer api;
  kube::ApiClient client(api.config());
  AccessReviewer reviewer(client);
  const AccessVerdict verdict = reviewer.review("forged", 0);
  EXPECT_EQ(verdict.access, Access::kUnauthenticated);
  EXPECT_EQ(verdict.http_status(), 401);
  EXPECT_NE(verdict.message.find("invalid bearer token"), std::string::npos) << verdict.message;
  EXPECT_EQ(api.access_reviews, 0);
}

TEST(DashboardAccess, AnswersAreCachedUntilTheyExpireButOutagesAreNot) {
  ReviewServer api;
  kube::ApiClient client(api.config());
  AccessReviewer reviewer(client, 30);
  EXPECT_EQ(reviewer.review("alice-token", 100).access, Access::kAllowed);
  EXPECT_EQ(reviewer.review("alice-token", 129).access, Access::kAllowed);
  EXPECT_EQ(reviewer.review("bob-token", 110).access, Access::kForbidden);
  EXPECT_EQ(reviewer.review("bob-token", 120).access, Access::kForbidden);
  EXPECT_EQ(api.token_reviews, 2);
  EXPECT_EQ(reviewer.review("alice-token", 130).access, Access::kAllowed);
  EXPECT_EQ(api.token_reviews, 3) << "asked again once its 30 s were up";
  api.down = true;
  EXPECT_EQ(reviewer.review("carol-token", 130).access, Access::kUnavailable);
  EXPECT_EQ(reviewer.review("carol-token", 130).http_status(), 503);
  EXPECT_EQ(api.token_reviews, 5) << "an outage is asked about again, not remembered";
}

TEST(DashboardAccess, TheCacheIsKeyedByADigestOfTheToken) {
  EXPECT_EQ(token_digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_NE(token_digest("alice-token").find_first_not_of("0123456789abcdef"), 0u);
}

TEST(DashboardGuard, LoopbackModeAnswersOnlyLoopbackPeers) {
  DashboardRoutes routes;
  for (const char* peer : {"127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"}) {
    EXPECT_EQ(guard_request(routes, peer, "").access, Access::kAllowed) << peer;
  }
  for (const char* peer : {"10.0.0.5", "192.168.1.2", "::ffff:10.0.0.5", "fe80::1", "", "not an address"}) {
    const AccessVerdict verdict = guard_request(routes, peer, "Bearer alice-token");
    EXPECT_EQ(verdict.access, Access::kForbidden) << peer;
    EXPECT_NE(verdict.message.find("only on loopback"), std::string::npos) << verdict.message;
  }
}

TEST(DashboardGuard, BearerTokensAreReadFromTheAuthorizationHeader) {
  EXPECT_EQ(bearer_token("Bearer abc.def"), "abc.def");
  EXPECT_EQ(bearer_token("bearer  abc "), "abc");
  EXPECT_FALSE(bearer_token("Basic dXNlcg==").has_value());
  EXPECT_FALSE(bearer_token("Bearer ").has_value());
  EXPECT_FALSE(bearer_token("").has_value());
  EXPECT_TRUE(parse_dashboard_auth("kubernetes").ok());
  EXPECT_EQ(parse_dashboard_auth("open").error().message,
            "--dashboard-auth: 'open' is not one of loopback, kubernetes");
}

// The routes on a real HTTP server, checked through the fake API server: what a browser or curl
// gets for each kind of caller.
TEST(DashboardRoutesOverHttp, KubernetesModeAnswers200ToAlice401WithoutAToken403ToBob) {
  ReviewServer api;
  kube::ApiClient client(api.config());
  AccessReviewer reviewer(client);
  DashboardPublisher publisher;
  publisher.publish({{}, {}, {}, {}, 42});
  testing::TestServer dashboard;
  add_dashboard_routes(dashboard.http(), {[&] { return publisher.current(); }, DashboardAuth::kKubernetes, &reviewer,
                                          [] { return 0.0; }});
  dashboard.start();
  httplib::Client http("127.0.0.1", dashboard.port());
  auto as = [&](const std::string& token, const std::string& path) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return http.Get(path, headers);
  };
  auto allowed = as("alice-token", "/ui/api/overview");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(json::parse(allowed->body)["cycle"], 1);
  EXPECT_EQ(allowed->get_header_value("Cache-Control"), "no-store");
  auto page = as("alice-token", "/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>Tessera scheduler</title>"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'none'"), std::string::npos);
  auto script = as("alice-token", "/ui/dashboard.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  auto anonymous = as("", "/ui/api/nodes");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->get_header_value("WWW-Authenticate"), "Bearer realm=\"tessera\"");
  auto forged = as("forged", "/ui/api/queues");
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 401);
  // The page holds no cluster data: anyone may load it, to reach the form that asks for a token.
  auto sign_in_page = as("", "/ui/");
  ASSERT_TRUE(sign_in_page);
  EXPECT_EQ(sign_in_page->status, 200);
  EXPECT_NE(sign_in_page->body.find("<label for=\"sign-in-token\">Kubernetes token</label>"), std::string::npos);
  EXPECT_NE(sign_in_page->get_header_value("Content-Security-Policy").find("default-src 'none'"), std::string::npos);
  auto anonymous_script = as("", "/ui/dashboard.js");
  ASSERT_TRUE(anonymous_script);
  EXPECT_EQ(anonymous_script->status, 200);
  auto bob = as("bob-token", "/ui/api/workloads");
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->status, 403);
  EXPECT_NE(bob->body.find("bob may not list podgroups"), std::string::npos) << bob->body;
  auto bad = as("alice-token", "/ui/api/nodes?limit=many");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->body, "query parameter 'limit': 'many' is not a whole number\n");
  auto missing = as("alice-token", "/ui/nothing-here");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(DashboardRoutesOverHttp, LoopbackModeServesTheLoopbackPeerWithoutAToken) {
  DashboardPublisher publisher;
  testing::TestServer dashboard;
  add_dashboard_routes(dashboard.http(),
                       {[&] { return publisher.current(); }, DashboardAuth::kLoopback, nullptr, [] { return 0.0; }});
  dashboard.start();
  httplib::Client http("127.0.0.1", dashboard.port());
  auto overview = http.Get("/ui/api/overview");
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->status, 200);
  EXPECT_EQ(json::parse(overview->body)["cycle"], 0) << "no cycle yet";
  auto redirect = http.Get("/ui");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 301);
  EXPECT_EQ(redirect->get_header_value("Location"), "/ui/");
}

TEST(DashboardRoutesOverHttp, TextThatIsNotUtf8IsReplacedRatherThanFailingTheAnswer) {
  DashboardPublisher publisher;
  CycleRows rows;
  rows.pending = {WorkloadRow{"ml/job", "team-a", 1, "Unschedulable", "bad byte \xff here", std::nullopt, ""}};
  publisher.publish(std::move(rows));
  testing::TestServer dashboard;
  add_dashboard_routes(dashboard.http(),
                       {[&] { return publisher.current(); }, DashboardAuth::kLoopback, nullptr, [] { return 0.0; }});
  dashboard.start();
  httplib::Client http("127.0.0.1", dashboard.port());
  auto workloads = http.Get("/ui/api/workloads");
  ASSERT_TRUE(workloads);
  EXPECT_EQ(workloads->status, 200);
  EXPECT_EQ(json::parse(workloads->body)["pending"][0]["message"], "bad byte \ufffd here");
}

}  // namespace
}  // namespace tessera::dashboard
