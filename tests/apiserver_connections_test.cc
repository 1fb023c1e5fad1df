// Connection handling: clients that connect and send nothing, stop in the TLS handshake or send
// their headers a byte at a time must not keep others from being served, and the server closes
// them at its deadlines; idle kept-alive connections close; watches are capped apart.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "apiserver_raw_connection.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

ApiServerOptions short_deadlines(bool tls) {
  ApiServerOptions options = plain_options();
  options.tls = tls;
  options.authenticate = tls;
  options.token = "secret-token";
  options.connections.header_timeout = std::chrono::seconds(1);
  return options;
}

TEST(SlowClientsTest, SilentAndStalledHandshakesDoNotBlockOthers) {
  std::unique_ptr<ApiServer> server = start_server(short_deadlines(true));
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 200; ++i) stalled.push_back(std::make_unique<RawConnection>(server->port()));
  // The first bytes of a TLS ClientHello, and no more.
  for (int i = 0; i < 20; ++i) {
    stalled.push_back(std::make_unique<RawConnection>(server->port()));
    stalled.back()->send_text(std::string_view("\x16\x03\x01\x00", 4));
  }
  for (const auto& connection : stalled) ASSERT_TRUE(connection->connected());

  TestClient client(*server);
  EXPECT_EQ(client.get("/api/v1/namespaces").status, 200);
  for (const auto& connection : stalled) EXPECT_TRUE(connection->closed_by_server());
  EXPECT_EQ(client.get("/api/v1/namespaces").status, 200);
}

TEST(SlowClientsTest, HeadersSentByteByByteDoNotBlockOthers) {
  std::unique_ptr<ApiServer> server = start_server(short_deadlines(false));
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 150; ++i) slow.push_back(std::make_unique<RawConnection>(server->port()));
  for (const auto& connection : slow) ASSERT_TRUE(connection->connected());
  // Each connection gets one more byte of a request whose headers never end, until the test is
  // done: every byte would restart a per-read timeout.
  const std::string request = "GET /api HTTP/1.1\r\nHost: localhost\r\nX-Filler: " + std::string(100000, 'x');
  std::atomic<bool> done = false;
  std::thread trickle([&] {
    for (size_t at = 0; at < request.size() && !done; ++at) {
      for (const auto& connection : slow) connection->send_text(request.substr(at, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });

  TestClient client(*server);
  EXPECT_EQ(client.get("/api/v1/namespaces").status, 200);
  for (const auto& connection : slow) EXPECT_TRUE(connection->closed_by_server());
  done = true;
  trickle.join();
  EXPECT_EQ(client.get("/api/v1/namespaces").status, 200);
}

TEST(SlowClientsTest, HeadersMustEndButBodiesMayFollowSlowly) {
  std::unique_ptr<ApiServer> server = start_server(short_deadlines(false));
  RawConnection connection(server->port());
  const std::string body = R"({"metadata":{"name":"slow"}})";
  ASSERT_TRUE(connection.send_text(fmt::format(
      "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n",
      body.size())));
  // Past the header deadline, the body arrives: the request is served.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(connection.send_text(body));
  bool closed = false;
  const std::string response = connection.read_until_closed(closed);
  EXPECT_TRUE(response.starts_with("HTTP/1.1 201")) << response;
}

TEST(IdleConnectionsTest, KeptAliveConnectionsCloseWhenIdle) {
  ApiServerOptions options = plain_options();
  options.connections.idle_timeout = std::chrono::seconds(1);
  std::unique_ptr<ApiServer> server = start_server(options);
  RawConnection connection(server->port());
  ASSERT_TRUE(connection.send_text("GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  bool closed = false;
  const std::string response = connection.read_until_closed(closed);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << response;
  EXPECT_NE(response.find("Keep-Alive: timeout=1"), std::string::npos) << response;
}

TEST(WatchCapTest, WatchesBeyondTheCapAreTooManyRequests) {
  ApiServerOptions options = plain_options();
  options.watch_limits.max_open = 2;
  std::unique_ptr<ApiServer> server = start_server(options);
  std::atomic<int> open = 0;
  std::vector<std::thread> watchers;
  for (int i = 0; i < 2; ++i) {
    watchers.emplace_back([&] {
      TestClient client(*server);
      bool counted = false;
      client.watch(
          "/api/v1/namespaces?watch=1",
          [&](const std::vector<json>&) {
            if (!counted) ++open;
            counted = true;
            return false;
          },
          std::chrono::seconds(60));
    });
  }
  ASSERT_TRUE(eventually([&] { return open == 2; }));
  TestClient client(*server);
  Reply refused = client.get("/api/v1/namespaces?watch=1");
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.body["reason"], "TooManyRequests");
  EXPECT_EQ(refused.header("Retry-After"), "1");
  EXPECT_EQ(client.get("/api/v1/namespaces").status, 200);  // other requests go on
  server->stop();
  for (std::thread& watcher : watchers) watcher.join();
}

TEST(WatchCapTest, AWatchWhoseClientLeftFreesItsSlot) {
  ApiServerOptions options = plain_options();
  options.watch_limits.max_open = 1;
  std::unique_ptr<ApiServer> server = start_server(options);
  {
    RawConnection watcher(server->port());
    ASSERT_TRUE(watcher.send_text("GET /api/v1/configmaps?watch=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    ASSERT_TRUE(watcher.read_until("\r\n\r\n"));  // the watch's response has begun
    TestClient client(*server);
    EXPECT_EQ(client.get("/api/v1/configmaps?watch=1&timeoutSeconds=1").status, 429);
  }
  TestClient client(*server);
  EXPECT_TRUE(eventually([&] { return client.get("/api/v1/configmaps?watch=1&timeoutSeconds=1").status == 200; }));
}

}  // namespace
}  // namespace tessera::apiserver::testing
