// Fault injection, for testing clients against a hostile server: each kind at rate 1, nothing at
// rate 0, and never under /debug/, where the counts are served.
#include <gtest/gtest.h>

#include <set>

#include "apiserver/fault_injector.h"
#include "apiserver_raw_connection.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

const std::string kConfigMaps = "/api/v1/namespaces/default/configmaps";

ApiServerOptions with_faults(FaultOptions faults, bool tls = false) {
  ApiServerOptions options = plain_options();
  options.faults = faults;
  options.tls = tls;
  options.authenticate = tls;
  options.token = "secret-token";
  return options;
}

json config_map(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
}

// What is stored, seen past the API (whose requests would get faults).
size_t stored_config_maps(ApiServer& server) {
  const std::optional<ResourceType> type = server.registry().find("", "v1", "configmaps");
  return server.api().list(*type, "default", ListOptions{})->items.size();
}

TEST(FaultInjectorTest, DrawsEachKindAtRateOne) {
  FaultInjector errors(FaultOptions{.seed = 5, .error_rate = 1.0});
  std::set<Fault> drawn;
  for (int i = 0; i < 100; ++i) drawn.insert(*errors.draw_for_request(i % 2 == 0, "tessera/0.1"));
  EXPECT_EQ(drawn, (std::set<Fault>{Fault::kInternalError, Fault::kServiceUnavailable, Fault::kTooManyRequests}));
  EXPECT_EQ(errors.counts()["total"], 100);

  FaultInjector drops(FaultOptions{.seed = 5, .drop_rate = 1.0});
  drawn.clear();
  for (int i = 0; i < 100; ++i) drawn.insert(*drops.draw_for_request(false, "tessera/0.1"));
  EXPECT_EQ(drawn, (std::set<Fault>{Fault::kDropBeforeApplying, Fault::kDropAfterApplying}));
  EXPECT_FALSE(drops.draw_for_request(true, "tessera/0.1").has_value());  // watches are not dropped

  FaultInjector only_tessera(FaultOptions{.seed = 5, .drop_rate = 1.0, .user_agent_prefix = "tessera"});
  EXPECT_TRUE(only_tessera.draw_for_request(false, "tessera/0.1").has_value());
  EXPECT_FALSE(only_tessera.draw_for_request(false, "OpenAPI-Generator/22.6.0/python").has_value());

  FaultInjector idle(FaultOptions{.seed = 5, .idle_close_seconds = 2});
  for (int i = 0; i < 100; ++i) {
    const std::optional<std::chrono::milliseconds> limit = idle.draw_idle_limit();
    ASSERT_TRUE(limit.has_value());
    EXPECT_LE(*limit, std::chrono::milliseconds(2000));
  }
  EXPECT_FALSE(drops.draw_idle_limit().has_value());
}

TEST(FaultsTest, RateZeroInjectsNothing) {
  std::unique_ptr<ApiServer> server = start_server(with_faults(FaultOptions{.seed = 9}));
  TestClient client(*server);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(client.post(kConfigMaps, config_map(fmt::format("c{}", i))).status, 201);
    EXPECT_EQ(client.get(kConfigMaps).status, 200);
  }
  Reply counts = client.get("/debug/faults");
  EXPECT_EQ(counts.status, 200);
  EXPECT_EQ(counts.body, json({{"idleClose", 0},
                               {"dropBeforeApplying", 0},
                               {"dropAfterApplying", 0},
                               {"internalError500", 0},
                               {"serviceUnavailable503", 0},
                               {"tooManyRequests429", 0},
                               {"total", 0}}));
}

TEST(FaultsTest, ErrorsAreAnsweredWithoutApplying) {
  std::unique_ptr<ApiServer> server = start_server(with_faults(FaultOptions{.seed = 11, .error_rate = 1.0}));
  TestClient client(*server);
  std::set<int> codes;
  int sent = 0;
  for (; sent < 300 && codes.size() < 3; ++sent) {
    Reply reply = client.post(kConfigMaps, config_map(fmt::format("c{}", sent)));
    codes.insert(reply.status);
    EXPECT_EQ(reply.body["kind"], "Status");
    if (reply.status == 500) {
      EXPECT_EQ(reply.body["reason"], "InternalError");
    }
    if (reply.status == 503) {
      EXPECT_EQ(reply.body["reason"], "ServiceUnavailable");
      EXPECT_EQ(reply.header("Retry-After"), "1");
    }
    if (reply.status == 429) {
      EXPECT_EQ(reply.body["reason"], "TooManyRequests");
      EXPECT_EQ(reply.header("Retry-After"), "1");
      // Not an eviction refused by a PodDisruptionBudget.
      EXPECT_FALSE(reply.body.contains("details") && reply.body["details"].contains("causes")) << reply.raw;
    }
  }
  EXPECT_EQ(codes, (std::set<int>{429, 500, 503}));
  EXPECT_EQ(stored_config_maps(*server), 0u);
  // Watches too.
  const int watch_status = client.get("/api/v1/configmaps?watch=1").status;
  EXPECT_TRUE(watch_status == 500 || watch_status == 503 || watch_status == 429) << watch_status;
  Reply counts = client.get("/debug/faults");
  EXPECT_EQ(counts.status, 200);
  EXPECT_EQ(counts.body["total"], sent + 1);
  EXPECT_EQ(counts.body["dropBeforeApplying"], 0);
}

TEST(FaultsTest, DropsCloseTheConnectionBeforeOrAfterApplying) {
  std::unique_ptr<ApiServer> server = start_server(with_faults(FaultOptions{.seed = 13, .drop_rate = 1.0}));
  TestClient client(*server);
  constexpr int kRequests = 40;
  for (int i = 0; i < kRequests; ++i) {
    httplib::Result result = client.raw().Post(kConfigMaps, config_map(fmt::format("c{}", i)).dump(), "application/json");
    EXPECT_FALSE(result) << "answered " << result->status;
  }
  Reply counts = client.get("/debug/faults");
  ASSERT_EQ(counts.status, 200);
  const size_t after = counts.body["dropAfterApplying"];
  EXPECT_EQ(counts.body["dropBeforeApplying"].get<size_t>() + after, size_t{kRequests});
  EXPECT_GT(after, 0u);
  EXPECT_LT(after, size_t{kRequests});
  // The writes of the requests dropped after applying happened; the others did not.
  EXPECT_EQ(stored_config_maps(*server), after);
  // Watches are not dropped.
  EXPECT_EQ(client.get("/api/v1/configmaps?watch=1&timeoutSeconds=1").status, 200);
}

TEST(FaultsTest, DropsOverTlsSendNothing) {
  std::unique_ptr<ApiServer> server = start_server(with_faults(FaultOptions{.seed = 3, .drop_rate = 1.0}, true));
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.start_tls());
  ASSERT_TRUE(connection.send_text("GET /api HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer secret-token\r\n\r\n"));
  bool closed = false;
  EXPECT_EQ(connection.read_until_closed(closed), "");
  EXPECT_TRUE(closed);
  TestClient client(*server);
  EXPECT_EQ(client.get("/debug/faults").body["total"], 1);
}

TEST(FaultsTest, IdleKeptAliveConnectionsCloseEarly) {
  for (const bool tls : {false, true}) {
    std::unique_ptr<ApiServer> server = start_server(with_faults(FaultOptions{.seed = 17, .idle_close_seconds = 0.5}, tls));
    RawConnection connection(server->port());
    ASSERT_TRUE(connection.connected());
    if (tls) {
      ASSERT_TRUE(connection.start_tls());
    }
    ASSERT_TRUE(connection.send_text("GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    // Long before the 90 s of the default idle timeout: read_until_closed's safety net is 30 s.
    bool closed = false;
    const std::string response = connection.read_until_closed(closed);
    EXPECT_TRUE(closed) << (tls ? "TLS" : "plain");
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << response;
    TestClient client(*server);
    EXPECT_EQ(client.get("/debug/faults").body["idleClose"], 1) << (tls ? "TLS" : "plain");
  }
}

}  // namespace
}  // namespace tessera::apiserver::testing
