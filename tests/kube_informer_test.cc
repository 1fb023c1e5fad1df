// The informer against a fake collection: paged lists, events, bookmarks, relists on 410 and
// watches resumed from the last resourceVersion.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include "kube/informer.h"
#include "kube_test_server.h"

namespace tessera::kube {
namespace {

using namespace std::chrono_literals;
using testing::seconds_since;
using testing::TestServer;
using testing::wait_until;

nlohmann::json pod(const std::string& name, int resource_version) {
  return {{"metadata", {{"namespace", "ns"}, {"name", name}, {"resourceVersion", std::to_string(resource_version)}}}};
}

std::string event_line(const std::string& type, const nlohmann::json& object) {
  return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
}

// /api/v1/pods: lists `objects` in pages (continue = index of the next item) at `list_version`,
// and streams watch lines pushed by the test; "CLOSE" ends a stream cleanly, "BREAK" breaks the
// connection.
class FakeCollection {
 public:
  FakeCollection() {
    server_.http().Get("/api/v1/pods", [this](const httplib::Request& request, httplib::Response& response) {
      if (request.has_param("watch")) {
        watch(request, response);
      } else {
        list(request, response);
      }
    });
  }

  void set_objects(std::vector<nlohmann::json> objects, int version) {
    std::lock_guard lock(mutex_);
    objects_ = std::move(objects);
    list_version_ = version;
  }
  void push(std::string line) {
    {
      std::lock_guard lock(mutex_);
      lines_.push_back(std::move(line));
    }
    changed_.notify_all();
  }
  // Lists wait while held: lets a test look at the informer in the middle of a list.
  void hold_lists(bool held) {
    {
      std::lock_guard lock(mutex_);
      lists_held_ = held;
    }
    changed_.notify_all();
  }
  void expire_next_continue_token() {
    std::lock_guard lock(mutex_);
    expire_next_continue_ = true;
  }
  void fail_next_watch_with_gone() {
    std::lock_guard lock(mutex_);
    gone_next_watch_ = true;
  }
  int list_requests() {
    std::lock_guard lock(mutex_);
    return list_requests_;
  }
  std::vector<httplib::Params> watch_requests() {
    std::lock_guard lock(mutex_);
    return watch_requests_;
  }
  void start() { server_.start(); }
  std::string url() const { return server_.url(); }

  std::vector<std::string> continue_tokens() {
    std::lock_guard lock(mutex_);
    return continue_tokens_;
  }

 private:
  void list(const httplib::Request& request, httplib::Response& response) {
    std::unique_lock lock(mutex_);
    ++list_requests_;
    while (lists_held_ && !server_.stopping()) changed_.wait_for(lock, 20ms);
    const size_t limit = std::stoul(request.get_param_value("limit"));
    const std::string token = request.get_param_value("continue");
    continue_tokens_.push_back(token);
    if (!token.empty() && expire_next_continue_) {
      expire_next_continue_ = false;
      response.status = 410;
      response.set_content(R"({"kind":"Status","message":"continue token expired","reason":"Expired","code":410})",
                           "application/json");
      return;
    }
    const size_t from = token.empty() ? 0 : std::stoul(token);
    nlohmann::json items = nlohmann::json::array();
    for (size_t i = from; i < std::min(objects_.size(), from + limit); ++i) items.push_back(objects_[i]);
    nlohmann::json metadata = {{"resourceVersion", std::to_string(list_version_)}};
    if (from + limit < objects_.size()) metadata["continue"] = std::to_string(from + limit);
    response.set_content(nlohmann::json{{"kind", "PodList"}, {"metadata", metadata}, {"items", items}}.dump(),
                         "application/json");
  }

  void watch(const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex_);
    watch_requests_.push_back(request.params);
    if (gone_next_watch_) {
      gone_next_watch_ = false;
      response.status = 410;
      response.set_content(R"({"kind":"Status","message":"too old resource version","reason":"Expired","code":410})",
                           "application/json");
      return;
    }
    // Only the newest stream takes lines: an older one belongs to a watch the client gave up.
    const size_t stream = watch_requests_.size();
    response.set_chunked_content_provider("application/json", [this, stream](size_t, httplib::DataSink& sink) {
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, 20ms, [this] { return !lines_.empty() || server_.stopping(); });
      if (server_.stopping() || stream != watch_requests_.size()) return false;
      if (lines_.empty()) return true;  // idle: normal for a watch
      std::string line = std::move(lines_.front());
      lines_.pop_front();
      lock.unlock();
      if (line == "BREAK") return false;
      if (line == "CLOSE") {
        sink.done();
        return true;
      }
      return sink.write(line.data(), line.size());
    });
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> objects_;
  int list_version_ = 0;
  std::deque<std::string> lines_;
  bool lists_held_ = false;
  bool gone_next_watch_ = false;
  bool expire_next_continue_ = false;
  int list_requests_ = 0;
  std::vector<httplib::Params> watch_requests_;
  std::vector<std::string> continue_tokens_;
  TestServer server_;  // last: its threads end before the state they use goes away
};

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    collection.set_objects({pod("a", 3), pod("b", 5), pod("c", 7)}, 10);
    collection.start();
    ClientConfig config;
    config.server = collection.url();
    client = std::make_unique<ApiClient>(config);
    InformerOptions options;
    options.collection_path = "/api/v1/pods";
    options.label_selector = "app in (web)";
    options.list_page_size = 2;
    options.watch_timeout_seconds = 30;
    options.backoff_initial_seconds = 0.05;
    options.backoff_max_seconds = 0.2;
    informer = std::make_unique<Informer>(*client, options, [this] { ++changes; });
  }

  std::string param(size_t watch_index, const std::string& key) {
    const auto requests = collection.watch_requests();
    if (watch_index >= requests.size()) return "(no such watch)";
    const auto found = requests[watch_index].find(key);
    return found == requests[watch_index].end() ? "(absent)" : found->second;
  }

  std::vector<std::string> keys() {
    std::vector<std::string> names;
    for (const auto& [key, object] : informer->snapshot()) names.push_back(key);
    return names;
  }

  FakeCollection collection;
  std::unique_ptr<ApiClient> client;
  std::atomic<int> changes{0};
  std::unique_ptr<Informer> informer;  // last: stopped before what it uses goes away
};

TEST_F(InformerTest, ListsInPagesThenAppliesEventsAndBookmarks) {
  EXPECT_FALSE(informer->synced());
  collection.hold_lists(true);
  informer->start();
  ASSERT_TRUE(wait_until([&] { return collection.list_requests() >= 1; }));
  EXPECT_FALSE(informer->synced());  // not before the whole list is in
  collection.hold_lists(false);
  ASSERT_TRUE(informer->wait_for_sync(5));
  EXPECT_EQ(collection.list_requests(), 2);
  EXPECT_EQ(collection.continue_tokens(), (std::vector<std::string>{"", "2"}));
  EXPECT_EQ(keys(), (std::vector<std::string>{"ns/a", "ns/b", "ns/c"}));
  EXPECT_EQ(informer->resource_version(), "10");
  EXPECT_EQ(changes.load(), 1);

  ASSERT_TRUE(wait_until([&] { return !collection.watch_requests().empty(); }));
  EXPECT_EQ(param(0, "resourceVersion"), "10");
  EXPECT_EQ(param(0, "allowWatchBookmarks"), "true");
  EXPECT_EQ(param(0, "timeoutSeconds"), "30");
  EXPECT_EQ(param(0, "labelSelector"), "app in (web)");

  collection.push(event_line("ADDED", pod("d", 11)));
  collection.push(event_line("MODIFIED", pod("a", 12)));
  collection.push(event_line("DELETED", pod("b", 13)));
  ASSERT_TRUE(wait_until([&] { return informer->resource_version() == "13"; }));
  EXPECT_EQ(keys(), (std::vector<std::string>{"ns/a", "ns/c", "ns/d"}));
  EXPECT_EQ(informer->snapshot().at("ns/a")->at("metadata").at("resourceVersion"), "12");
  EXPECT_EQ(changes.load(), 4);

  collection.push(event_line("BOOKMARK", {{"metadata", {{"resourceVersion", "20"}}}}));
  ASSERT_TRUE(wait_until([&] { return informer->resource_version() == "20"; }));
  EXPECT_EQ(changes.load(), 4);  // a bookmark changes nothing in the cache
  const InformerStats stats = informer->stats();
  EXPECT_EQ(stats.lists, 1);
  EXPECT_EQ(stats.events, 3);
  EXPECT_EQ(stats.bookmarks, 1);
  EXPECT_EQ(stats.relists_on_gone, 0);
}

TEST_F(InformerTest, RelistsOnGoneAndDropsObjectsDeletedMeanwhile) {
  informer->start();
  ASSERT_TRUE(informer->wait_for_sync(5));
  ASSERT_TRUE(wait_until([&] { return !collection.watch_requests().empty(); }));

  // While the watch was away, b was deleted and e created; the server says 410.
  collection.set_objects({pod("a", 3), pod("c", 7), pod("e", 30)}, 31);
  collection.hold_lists(true);
  collection.push(event_line("ERROR", {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}}));
  ASSERT_TRUE(wait_until([&] { return collection.list_requests() >= 3; }));
  EXPECT_FALSE(informer->synced());  // relisting
  collection.hold_lists(false);
  ASSERT_TRUE(wait_until([&] { return informer->synced(); }));
  EXPECT_EQ(keys(), (std::vector<std::string>{"ns/a", "ns/c", "ns/e"}));
  EXPECT_EQ(informer->resource_version(), "31");
  ASSERT_TRUE(wait_until([&] { return collection.watch_requests().size() >= 2; }));
  EXPECT_EQ(param(1, "resourceVersion"), "31");
  EXPECT_EQ(informer->stats().relists_on_gone, 1);
  EXPECT_EQ(informer->stats().lists, 2);

  // An HTTP 410 on the watch request itself relists too.
  collection.fail_next_watch_with_gone();
  collection.push("CLOSE");
  ASSERT_TRUE(wait_until([&] { return informer->stats().lists == 3; }));
  EXPECT_EQ(informer->stats().relists_on_gone, 2);
}

TEST_F(InformerTest, ListsAgainFromTheStartWhenTheContinueTokenExpires) {
  collection.expire_next_continue_token();
  informer->start();
  ASSERT_TRUE(informer->wait_for_sync(5));
  EXPECT_EQ(collection.continue_tokens(), (std::vector<std::string>{"", "2", "", "2"}));
  EXPECT_EQ(keys(), (std::vector<std::string>{"ns/a", "ns/b", "ns/c"}));
  EXPECT_EQ(informer->stats().relists_on_gone, 1);
  EXPECT_EQ(informer->stats().lists, 1);
}

TEST_F(InformerTest, ResumesFromTheLastResourceVersionAfterABrokenOrEndedWatch) {
  informer->start();
  ASSERT_TRUE(informer->wait_for_sync(5));
  collection.push(event_line("ADDED", pod("d", 11)));
  collection.push(event_line("BOOKMARK", {{"metadata", {{"resourceVersion", "15"}}}}));
  collection.push("BREAK");
  ASSERT_TRUE(wait_until([&] { return collection.watch_requests().size() >= 2; }));
  EXPECT_EQ(param(1, "resourceVersion"), "15");  // from the bookmark: no relist
  EXPECT_EQ(informer->stats().errors, 1);

  collection.push(event_line("MODIFIED", pod("d", 16)));
  collection.push("CLOSE");  // the server's timeoutSeconds: resume at once
  ASSERT_TRUE(wait_until([&] { return collection.watch_requests().size() >= 3; }));
  EXPECT_EQ(param(2, "resourceVersion"), "16");
  EXPECT_EQ(collection.list_requests(), 2);  // the first list's two pages only
  EXPECT_EQ(informer->stats().errors, 1);
  EXPECT_EQ(informer->stats().lists, 1);
  EXPECT_TRUE(informer->synced());
}

TEST_F(InformerTest, StopsPromptlyWhileTheWatchIsIdle) {
  informer->start();
  ASSERT_TRUE(informer->wait_for_sync(5));
  ASSERT_TRUE(wait_until([&] { return !collection.watch_requests().empty(); }));
  const auto start = std::chrono::steady_clock::now();
  informer->stop();
  EXPECT_LT(seconds_since(start), 10.0);  // not waiting out the watch (30 s)
}

TEST(ObjectKeyTest, UsesNamespaceAndName) {
  EXPECT_EQ(object_key({{"metadata", {{"namespace", "a"}, {"name", "p"}}}}), "a/p");
  EXPECT_EQ(object_key({{"metadata", {{"name", "node-1"}}}}), "node-1");
}

// A kind the cluster may not serve (a CRD not installed): the cache is empty and synced, says why,
// fills once the kind is served, and empties again when it is gone.
TEST(InformerErrorsTest, AnOptionalKindNotServedIsAnEmptyCacheLookedForAgain) {
  TestServer server;
  std::atomic<bool> served{false};
  server.http().Get("/apis/batch/v1/jobs", [&](const httplib::Request& request, httplib::Response& response) {
    if (!served.load()) {
      response.status = 404;
      response.set_content(R"({"kind":"Status","code":404,"reason":"NotFound","message":"the server could not find )"
                           R"(the requested resource"})",
                           "application/json");
      return;
    }
    if (request.has_param("watch")) {
      response.set_content("", "application/json");
      return;
    }
    response.set_content(R"({"kind":"JobList","metadata":{"resourceVersion":"5"},)"
                         R"("items":[{"metadata":{"name":"train","namespace":"ml","resourceVersion":"5"}}]})",
                         "application/json");
  });
  server.start();
  ClientConfig config;
  config.server = server.url();
  ApiClient client(config);
  InformerOptions options;
  options.collection_path = "/apis/batch/v1/jobs";
  options.optional_kind = true;
  options.absent_recheck_seconds = 0.05;
  options.backoff_initial_seconds = 0.05;
  options.backoff_max_seconds = 0.1;
  Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(informer.wait_for_sync(5));
  EXPECT_TRUE(informer.snapshot().empty());
  EXPECT_NE(informer.last_error().find("list /apis/batch/v1/jobs: HTTP 404"), std::string::npos)
      << informer.last_error();
  served = true;
  ASSERT_TRUE(wait_until([&] { return informer.snapshot().contains("ml/train"); }));
  EXPECT_EQ(informer.last_error(), "");
  served = false;  // the CRD deleted: the watch is answered 404, and the cache empties
  ASSERT_TRUE(wait_until([&] { return informer.snapshot().empty(); }));
  EXPECT_TRUE(informer.synced());
}

}  // namespace
}  // namespace tessera::kube

namespace tessera::kube {
namespace {

// What a user needs when the cache never fills: the server's own words (401, 403), kept until
// a list succeeds.
TEST(InformerErrorsTest, KeepsWhyTheListFailsUntilItSucceeds) {
  TestServer server;
  std::atomic<bool> allowed{false};
  server.http().Get("/api/v1/pods", [&](const httplib::Request& request, httplib::Response& response) {
    if (request.has_param("watch")) {
      response.set_content("", "application/json");
      return;
    }
    if (!allowed.load()) {
      response.status = 403;
      response.set_content(
          R"({"kind":"Status","code":403,"reason":"Forbidden","message":"pods is forbidden: User \"x\" cannot list resource \"pods\""})",
          "application/json");
      return;
    }
    response.set_content(R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[]})", "application/json");
  });
  server.start();
  ClientConfig config;
  config.server = server.url();
  ApiClient client(config);
  InformerOptions options;
  options.collection_path = "/api/v1/pods";
  options.backoff_initial_seconds = 0.05;
  options.backoff_max_seconds = 0.1;
  Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(wait_until([&] { return !informer.last_error().empty(); }));
  const std::string error = informer.last_error();
  EXPECT_NE(error.find("list /api/v1/pods: HTTP 403"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot list resource"), std::string::npos) << error;
  EXPECT_FALSE(informer.synced());
  allowed = true;
  ASSERT_TRUE(informer.wait_for_sync(5));
  EXPECT_EQ(informer.last_error(), "");
}

}  // namespace
}  // namespace tessera::kube
