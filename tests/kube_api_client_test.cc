// REST calls of the API client over plain HTTP: headers, methods, content types, Status
// bodies, connection reuse, token rotation and timeouts.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "kube/api_client.h"
#include "kube_temp_dir.h"
#include "kube_test_server.h"

namespace tessera::kube {
namespace {

using testing::seconds_since;
using testing::TestServer;

// Every request the fake server saw.
struct SeenRequest {
  std::string method;
  std::string path;  // with its query, as sent
  std::string content_type;
  std::string authorization;
  std::string accept;
  std::string user_agent;
  std::string body;
  int remote_port = 0;
};

class ApiClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto record = [this](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      seen.push_back({request.method, request.target, request.get_header_value("Content-Type"),
                      request.get_header_value("Authorization"), request.get_header_value("Accept"),
                      request.get_header_value("User-Agent"), request.body, request.remote_port});
      response.set_content(R"({"kind":"Pod","metadata":{"name":"p"}})", "application/json");
    };
    server.http().Get(".*", record);
    server.http().Post(".*", record);
    server.http().Put(".*", record);
    server.http().Patch(".*", record);
    server.http().Delete(".*", record);
    server.http().set_keep_alive_max_count(1000);  // as the API server: no limit worth mentioning
    server.start();
  }

  ClientConfig config(std::string token = "") const {
    ClientConfig config;
    config.server = server.url();
    config.bearer_token = std::move(token);
    return config;
  }

  std::vector<SeenRequest> requests() {
    std::lock_guard lock(mutex);
    return seen;
  }

  std::mutex mutex;
  std::vector<SeenRequest> seen;
  TestServer server;  // last: its threads end before the state they use goes away
};

TEST_F(ApiClientTest, SendsHeadersAndReturnsTheResponse) {
  ApiClient client(config("secret-token"));
  auto response = client.get("/api/v1/namespaces/a/pods/p?labelSelector=" + url_encode("app=web"));
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->ok());
  EXPECT_EQ(response->json()["metadata"]["name"], "p");
  const auto seen_requests = requests();
  ASSERT_EQ(seen_requests.size(), 1u);
  EXPECT_EQ(seen_requests[0].method, "GET");
  EXPECT_EQ(seen_requests[0].path, "/api/v1/namespaces/a/pods/p?labelSelector=app%3Dweb");
  EXPECT_EQ(seen_requests[0].authorization, "Bearer secret-token");
  EXPECT_EQ(seen_requests[0].accept, "application/json");
  EXPECT_EQ(seen_requests[0].user_agent, "tessera/0.1");
}

TEST_F(ApiClientTest, WritesBodiesWithTheirContentTypes) {
  ApiClient client(config());
  const nlohmann::json body = {{"spec", {{"x", 1}}}};
  ASSERT_TRUE(client.post("/p", body));
  ASSERT_TRUE(client.put("/p", body));
  ASSERT_TRUE(client.patch("/p", body));
  ASSERT_TRUE(client.patch("/p", body, PatchType::kStrategicMerge));
  ASSERT_TRUE(client.patch("/p", nlohmann::json::array({{{"op", "remove"}, {"path", "/spec/x"}}}), PatchType::kJson));
  ASSERT_TRUE(client.del("/p"));
  const auto seen_requests = requests();
  ASSERT_EQ(seen_requests.size(), 6u);
  EXPECT_EQ(seen_requests[0].method, "POST");
  EXPECT_EQ(seen_requests[0].content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(seen_requests[0].body), body);
  EXPECT_EQ(seen_requests[1].method, "PUT");
  EXPECT_EQ(seen_requests[1].content_type, "application/json");
  EXPECT_EQ(seen_requests[2].method, "PATCH");
  EXPECT_EQ(seen_requests[2].content_type, "application/merge-patch+json");
  EXPECT_EQ(seen_requests[3].content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(seen_requests[4].content_type, "application/json-patch+json");
  EXPECT_EQ(seen_requests[4].body, R"([{"op":"remove","path":"/spec/x"}])");
  EXPECT_EQ(seen_requests[5].method, "DELETE");
  EXPECT_EQ(seen_requests[0].authorization, "");  // no token configured: no header
}

TEST_F(ApiClientTest, ReusesKeptAliveConnections) {
  ApiClient client(config());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(client.get("/api/v1/nodes"));
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&client] {
      for (int i = 0; i < 25; ++i) EXPECT_TRUE(client.get("/api/v1/pods"));
    });
  }
  for (auto& worker : workers) worker.join();
  std::set<int> sequential_ports;
  std::set<int> all_ports;
  const auto seen_requests = requests();
  ASSERT_EQ(seen_requests.size(), 120u);
  for (size_t i = 0; i < seen_requests.size(); ++i) {
    if (i < 20) sequential_ports.insert(seen_requests[i].remote_port);
    all_ports.insert(seen_requests[i].remote_port);
  }
  EXPECT_EQ(sequential_ports.size(), 1u);  // one connection for the sequential requests
  EXPECT_LE(all_ports.size(), 4u);         // at most one per concurrent caller
}

TEST_F(ApiClientTest, RereadsTheTokenFileWhenItChanges) {
  testing::TempDir dir;
  const std::string token_file = dir.write("token", "first\n");
  ClientConfig settings = config("initial");
  settings.bearer_token_file = token_file;
  ApiClient client(settings);
  ASSERT_TRUE(client.get("/a"));
  dir.write("token", "second\n");
  // Filesystem timestamps can be coarse: make the change visible for certain.
  std::filesystem::last_write_time(token_file, std::filesystem::last_write_time(token_file) + std::chrono::seconds(5));
  ASSERT_TRUE(client.get("/b"));
  const auto seen_requests = requests();
  EXPECT_EQ(seen_requests[0].authorization, "Bearer first");
  EXPECT_EQ(seen_requests[1].authorization, "Bearer second");
}

TEST(ApiResponseTest, ReadsStatusBodies) {
  const ApiResponse conflict{
      409,
      R"({"kind":"Status","status":"Failure","message":"Operation cannot be fulfilled","reason":"Conflict","code":409})"};
  EXPECT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error_message(), "Operation cannot be fulfilled");
  EXPECT_EQ(conflict.reason(), "Conflict");
  const ApiResponse plain{502, "bad gateway"};
  EXPECT_TRUE(plain.json().is_null());
  EXPECT_EQ(plain.error_message(), "bad gateway");
  EXPECT_EQ(plain.reason(), "");
  const ApiResponse not_served{404, "404 page not found\n"};  // a Go server's default handler
  EXPECT_EQ(not_served.error_message(), "404 page not found");
  EXPECT_EQ(not_served.failure_text(), "HTTP 404: 404 page not found");
  EXPECT_EQ(conflict.failure_text(), "HTTP 409: Operation cannot be fulfilled");
}

TEST(ApiClientErrorsTest, ReportsTransportFailuresAsErrors) {
  int free_port = 0;
  {
    TestServer closed;
    closed.start();
    free_port = closed.port();
  }
  ClientConfig config;
  config.server = fmt::format("http://127.0.0.1:{}", free_port);
  ApiClient client(config);
  auto response = client.get("/api/v1/pods");
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("cannot connect"), std::string::npos) << response.error().message;

  ClientConfig bad;
  bad.server = "ftp://example";
  ApiClient misconfigured(bad);
  auto refused = misconfigured.get("/");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("https://"), std::string::npos) << refused.error().message;
}

TEST(ApiClientErrorsTest, TimesOutSlowRequestsAndStopsOnRequest) {
  TestServer server;
  server.http().Get("/slow", [&](const httplib::Request&, httplib::Response& response) {
    testing::wait_until([&] { return server.stopping().load(); }, 60);  // answers only when the test ends
    response.set_content("{}", "application/json");
  });
  server.start();
  ClientConfig config;
  config.server = server.url();
  ApiClient client(config);

  client.set_request_timeout(0.2);
  auto start = std::chrono::steady_clock::now();
  auto timed_out = client.get("/slow");
  EXPECT_FALSE(timed_out);
  EXPECT_LT(seconds_since(start), 30.0);  // long before the server would answer

  client.set_request_timeout(30);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  start = std::chrono::steady_clock::now();
  auto stopped = client.get("/slow", stop);
  stopper.join();
  ASSERT_FALSE(stopped);
  EXPECT_NE(stopped.error().message.find("stopped"), std::string::npos);
  EXPECT_LT(seconds_since(start), 25.0);  // long before the 30 s timeout or the server's answer
}

TEST(UrlEncodeTest, EncodesEverythingButUnreservedCharacters) {
  EXPECT_EQ(url_encode("app=web,tier in (a b)"), "app%3Dweb%2Ctier%20in%20%28a%20b%29");
  EXPECT_EQ(url_encode("spec.nodeName!=,x/y~z_1.2-3"), "spec.nodeName%21%3D%2Cx%2Fy~z_1.2-3");
  EXPECT_EQ(url_encode("\xc3\xa9"), "%C3%A9");
}

TEST(WatchHttpStatusTest, ReadsTheStatusFromAWatchError) {
  EXPECT_EQ(watch_http_status(Error{"HTTP 410: too old resource version"}), 410);
  EXPECT_EQ(watch_http_status(Error{"HTTP 403: forbidden"}), 403);
  EXPECT_EQ(watch_http_status(Error{"watch /api/v1/pods: connection broke"}), 0);
  EXPECT_EQ(watch_http_status(Error{"HTTP 4"}), 0);
}

}  // namespace
}  // namespace tessera::kube

namespace tessera::kube {
namespace {

// A bare HTTP/1.1 server on a socket of its own, for what httplib's server cannot be told to do:
// it answers the first request on each connection and keeps the connection open, then reads the
// second request on that connection and closes it without a word, as a server that timed the
// connection out just as the request came.
class ClosingServer {
 public:
  ClosingServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    ::listen(listener_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~ClosingServer() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  int requests() const { return requests_.load(); }
  int connections() const { return connections_.load(); }

 private:
  // Reads one request (headers and a Content-Length body); false when the peer closed.
  static bool read_request(int connection) {
    std::string data;
    char buffer[4096];
    while (true) {
      const size_t end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t body = 0;
        const size_t at = data.find("Content-Length: ");
        if (at != std::string::npos) body = std::stoul(data.substr(at + 16));
        if (data.size() >= end + 4 + body) return true;
      }
      const ssize_t got = ::recv(connection, buffer, sizeof(buffer), 0);
      if (got <= 0) return false;
      data.append(buffer, static_cast<size_t>(got));
    }
  }

  void serve() {
    while (true) {
      const int connection = ::accept(listener_, nullptr, nullptr);
      if (connection < 0) return;
      ++connections_;
      if (read_request(connection)) {
        ++requests_;
        const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}";
        (void)::send(connection, answer.data(), answer.size(), MSG_NOSIGNAL);
        if (read_request(connection)) ++requests_;
      }
      ::close(connection);
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

TEST(ApiClientRetryTest, ARequestTheServerDroppedOnAKeptAliveConnectionIsSentOnceMoreOnANewOne) {
  ClosingServer server;
  ClientConfig config;
  config.server = server.url();
  ApiClient client(config);
  ASSERT_TRUE(client.get("/first"));  // leaves a kept-alive connection in the pool
  EXPECT_EQ(server.requests(), 1);
  for (const char* method : {"GET", "POST", "PATCH"}) {
    SCOPED_TRACE(method);
    const int before = server.requests();
    const std::string name = method;
    // Sent on the pooled connection, dropped, sent again on a new one (which it leaves pooled).
    auto response = name == "GET"    ? client.get("/next")
                    : name == "POST" ? client.post("/next", {{"a", 1}})
                                     : client.patch("/next", {{"a", 1}});
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(server.requests() - before, 2);
  }
  EXPECT_EQ(client.connection_retries(), 3);
  EXPECT_EQ(server.connections(), 4);
}

TEST(ApiClientRetryTest, AsksAgainAfterRetryAfterButNotAfterADisruptionBudgetRefusal) {
  TestServer server;
  std::atomic<int> busy_calls{0}, refused_calls{0};
  server.http().Get("/busy", [&](const httplib::Request&, httplib::Response& response) {
    if (busy_calls.fetch_add(1) == 0) {
      response.status = 503;
      response.set_header("Retry-After", "0");
      response.set_content(R"({"kind":"Status","code":503})", "application/json");
      return;
    }
    response.set_content("{}", "application/json");
  });
  server.http().Get("/always-busy", [&](const httplib::Request&, httplib::Response& response) {
    ++busy_calls;
    response.status = 429;
    response.set_header("Retry-After", "0");
    response.set_content(R"({"kind":"Status","code":429,"reason":"TooManyRequests"})", "application/json");
  });
  server.http().Post("/eviction", [&](const httplib::Request&, httplib::Response& response) {
    ++refused_calls;
    response.status = 429;
    response.set_header("Retry-After", "10");
    response.set_content(
        R"({"kind":"Status","code":429,"reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget"}]}})",
        "application/json");
  });
  server.http().Get("/failing", [&](const httplib::Request&, httplib::Response& response) {
    ++refused_calls;
    response.status = 500;
    response.set_content(R"({"kind":"Status","code":500})", "application/json");
  });
  server.start();
  ClientConfig config;
  config.server = server.url();
  ApiClient client(config);

  auto recovered = client.get("/busy");
  ASSERT_TRUE(recovered);
  EXPECT_EQ(recovered->status, 200);
  EXPECT_EQ(busy_calls.load(), 2);

  busy_calls = 0;
  auto still_busy = client.get("/always-busy");
  ASSERT_TRUE(still_busy);
  EXPECT_EQ(still_busy->status, 429);
  EXPECT_EQ(busy_calls.load(), 3);  // the first try and two more

  auto refused = client.post("/eviction", {});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused_calls.load(), 1);  // a refusal is an answer

  auto failing = client.get("/failing");
  ASSERT_TRUE(failing);
  EXPECT_EQ(failing->status, 500);
  EXPECT_EQ(refused_calls.load(), 2);  // no Retry-After: the caller decides
}

}  // namespace
}  // namespace tessera::kube
