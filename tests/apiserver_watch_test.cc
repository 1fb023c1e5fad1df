// Watches: resuming from a resourceVersion, the initial state, selectors, the 410 ERROR event of
// a version older than the history, bookmarks, timeouts and the server's cap on watch length.
#include <gtest/gtest.h>

#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

std::string version_of(const Reply& reply) { return reply.body["metadata"]["resourceVersion"]; }

auto count_at_least(size_t count) {
  return [count](const std::vector<json>& events) { return events.size() >= count; };
}

class WatchTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
  TestClient writer{*server};
};

TEST_F(WatchTest, ResumesStrictlyAfterTheResourceVersion) {
  Reply a = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  client.post("/api/v1/namespaces/default/pods", pod_manifest("b"));
  client.patch("/api/v1/namespaces/default/pods/a", R"({"metadata":{"labels":{"x":"1"}}})",
               "application/merge-patch+json");
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    writer.post("/api/v1/namespaces/default/pods", pod_manifest("c"));
    writer.del("/api/v1/namespaces/default/pods/b");
  });
  std::vector<json> events =
      client.watch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + version_of(a), count_at_least(4));
  later.join();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[1]["object"]["metadata"]["labels"]["x"], "1");
  EXPECT_EQ(events[2]["type"], "ADDED");
  EXPECT_EQ(events[2]["object"]["metadata"]["name"], "c");
  EXPECT_EQ(events[3]["type"], "DELETED");
  EXPECT_EQ(events[3]["object"]["metadata"]["name"], "b");
  // Versions increase along the stream; a DELETED event carries the deletion's version.
  uint64_t previous = std::stoull(version_of(a));
  for (const json& event : events) {
    const uint64_t version = std::stoull(event["object"]["metadata"]["resourceVersion"].get<std::string>());
    EXPECT_GT(version, previous);
    previous = version;
  }
}

TEST_F(WatchTest, WithoutAVersionStartsWithTheCurrentObjects) {
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  client.post("/api/v1/namespaces/default/pods", pod_manifest("b"));
  std::vector<json> events = client.watch("/api/v1/namespaces/default/pods?watch=true", count_at_least(2));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "ADDED");
}

TEST_F(WatchTest, AllNamespacesAndOneNamespace) {
  client.post("/api/v1/namespaces", {{"metadata", {{"name", "other"}}}});
  const std::string start = std::to_string(server->store().revision());
  client.post("/api/v1/namespaces/other/pods", pod_manifest("x"));
  client.post("/api/v1/namespaces/default/pods", pod_manifest("y"));
  std::vector<json> all = client.watch("/api/v1/pods?watch=1&resourceVersion=" + start, count_at_least(2));
  ASSERT_EQ(all.size(), 2u);
  std::vector<json> one = client.watch(
      "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&resourceVersion=" + start, count_at_least(2));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["object"]["metadata"]["name"], "y");
}

TEST_F(WatchTest, SelectorsTurnChangesIntoAddedAndDeleted) {
  const std::string start = std::to_string(server->store().revision());
  const std::string path = "/api/v1/namespaces/default/pods/a";
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a", {{"app", "other"}}));
  client.patch(path, R"({"metadata":{"labels":{"app":"web"}}})", "application/merge-patch+json");
  client.patch(path, R"({"metadata":{"annotations":{"n":"1"}}})", "application/merge-patch+json");
  client.patch(path, R"({"metadata":{"labels":{"app":"gone"}}})", "application/merge-patch+json");
  std::vector<json> events = client.watch(
      "/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dweb&resourceVersion=" + start, count_at_least(3));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[2]["type"], "DELETED");
}

TEST_F(WatchTest, TimeoutSecondsEndsTheStream) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<json> events = client.watch("/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=1",
                                          [](const std::vector<json>&) { return false; });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(900));
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

TEST_F(WatchTest, TableWatchForKubectl) {
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  std::vector<json> events;
  std::string pending;
  client.raw().Get("/api/v1/namespaces/default/pods?watch=1",
                   {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}},
                   [&](const char* data, size_t length) {
                     pending.append(data, length);
                     if (pending.find('\n') == std::string::npos) return true;
                     events.push_back(json::parse(pending.substr(0, pending.find('\n'))));
                     return false;
                   });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["object"]["kind"], "Table");
  EXPECT_EQ(events[0]["object"]["rows"][0]["cells"][0], "a");
}

TEST_F(WatchTest, FutureVersionIsTooLarge) {
  Reply reply = client.get("/api/v1/pods?watch=1&resourceVersion=99999");
  EXPECT_EQ(reply.status, 504);
  EXPECT_EQ(reply.body["reason"], "Timeout");
}

TEST(WatchHistoryTest, TooOldVersionGetsOneErrorEvent) {
  ApiServerOptions options = plain_options();
  options.watch_history = 5;
  std::unique_ptr<ApiServer> server = start_server(options);
  TestClient client(*server);
  const std::string old_version = version_of(client.post("/api/v1/namespaces/default/pods", pod_manifest("first")));
  for (int i = 0; i < 10; ++i) client.post("/api/v1/namespaces/default/pods", pod_manifest(fmt::format("p{}", i)));
  const uint64_t compacted = server->store().revision() - 5;

  std::vector<json> events = client.watch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + old_version,
                                          count_at_least(2), std::chrono::seconds(10));
  ASSERT_EQ(events.size(), 1u);  // and the server ended the stream
  EXPECT_EQ(events[0]["type"], "ERROR");
  const json& status = events[0]["object"];
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["apiVersion"], "v1");
  EXPECT_EQ(status["status"], "Failure");
  EXPECT_EQ(status["code"], 410);
  EXPECT_EQ(status["reason"], "Expired");
  EXPECT_EQ(status["message"], fmt::format("too old resource version: {} ({})", old_version, compacted));

  // A version still in the history resumes.
  std::vector<json> recent = client.watch(
      "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + std::to_string(compacted), count_at_least(5));
  ASSERT_EQ(recent.size(), 5u);
  EXPECT_EQ(recent[0]["type"], "ADDED");
}

TEST(WatchBookmarkTest, BookmarksCarryTheVersionReached) {
  ApiServerOptions options = plain_options();
  options.watch_limits.bookmark_interval = std::chrono::milliseconds(100);
  std::unique_ptr<ApiServer> server = start_server(options);
  TestClient client(*server);
  const std::string version = version_of(client.post("/api/v1/namespaces/default/pods", pod_manifest("a")));
  client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}});
  std::vector<json> events =
      client.watch("/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" + version,
                   [](const std::vector<json>& seen) { return !seen.empty() && seen.back()["type"] == "BOOKMARK"; });
  ASSERT_FALSE(events.empty());
  const json& bookmark = events.back();
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["kind"], "Pod");
  EXPECT_EQ(bookmark["object"]["apiVersion"], "v1");
  EXPECT_EQ(bookmark["object"]["metadata"], json({{"resourceVersion", std::to_string(server->store().revision())}}));
  // Without allowWatchBookmarks, none.
  std::vector<json> plain =
      client.watch("/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&resourceVersion=" + version,
                   [](const std::vector<json>&) { return false; });
  EXPECT_TRUE(plain.empty());
}

TEST(WatchLimitTest, TheServerEndsLongWatches) {
  ApiServerOptions options = plain_options();
  options.watch_limits.max_duration = std::chrono::seconds(1);
  std::unique_ptr<ApiServer> server = start_server(options);
  TestClient client(*server);
  const auto start = std::chrono::steady_clock::now();
  client.watch(
      "/api/v1/pods?watch=1&resourceVersion=1", [](const std::vector<json>&) { return false; },
      std::chrono::seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(WatchShutdownTest, StopEndsOpenWatchesPromptly) {
  std::unique_ptr<ApiServer> server = start_server();
  std::thread watcher([&] {
    TestClient client(*server);
    client.watch(
        "/api/v1/pods?watch=1", [](const std::vector<json>&) { return false; }, std::chrono::seconds(30));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
  watcher.join();
}

}  // namespace
}  // namespace tessera::apiserver::testing
