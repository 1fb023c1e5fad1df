// Events as Kubernetes' own components write them: one object per object and reason, its count
// growing; nothing taken as written before the server said so; found again after a restart.
#include "adapter/event_recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "kube_test_server.h"

namespace tessera::adapter {
namespace {

using testing::TestServer;
using testing::wait_until;

// /api/v1/namespaces/NS/events: a store of Event objects by name that can be told to fail.
class FakeEvents {
 public:
  FakeEvents() {
    server_.http().Post(R"(/api/v1/namespaces/([^/]+)/events)",
                        [this](const httplib::Request& request, httplib::Response& response) {
                          std::lock_guard lock(mutex_);
                          ++creates;
                          if (failing) return fail(response);
                          nlohmann::json event = nlohmann::json::parse(request.body);
                          event["metadata"]["namespace"] = request.matches[1].str();
                          const std::string name = event["metadata"]["name"];
                          if (events.contains(name)) {
                            response.status = 409;
                            response.set_content(R"({"kind":"Status","code":409,"reason":"AlreadyExists"})",
                                                 "application/json");
                            return;
                          }
                          events[name] = event;
                          response.status = 201;
                          response.set_content(event.dump(), "application/json");
                        });
    server_.http().Patch(R"(/api/v1/namespaces/[^/]+/events/([^/]+))",
                         [this](const httplib::Request& request, httplib::Response& response) {
                           std::lock_guard lock(mutex_);
                           ++patches;
                           if (failing) return fail(response);
                           auto it = events.find(request.matches[1].str());
                           if (it == events.end()) {
                             response.status = 404;
                             return;
                           }
                           it->second.merge_patch(nlohmann::json::parse(request.body));
                           response.set_content(it->second.dump(), "application/json");
                         });
    server_.http().Get(R"(/api/v1/namespaces/[^/]+/events/([^/]+))",
                       [this](const httplib::Request& request, httplib::Response& response) {
                         std::lock_guard lock(mutex_);
                         auto it = events.find(request.matches[1].str());
                         if (it == events.end()) {
                           response.status = 404;
                           return;
                         }
                         response.set_content(it->second.dump(), "application/json");
                       });
    server_.start();
  }

  kube::ClientConfig config() const {
    kube::ClientConfig config;
    config.server = server_.url();
    return config;
  }

  nlohmann::json only_event() {
    std::lock_guard lock(mutex_);
    EXPECT_EQ(events.size(), 1u);
    return events.empty() ? nlohmann::json() : events.begin()->second;
  }
  int writes() {
    std::lock_guard lock(mutex_);
    return creates + patches;
  }

  std::mutex mutex_;
  std::map<std::string, nlohmann::json> events;
  int creates = 0, patches = 0;
  bool failing = false;

 private:
  static void fail(httplib::Response& response) {
    response.status = 500;
    response.set_content(R"({"kind":"Status","code":500})", "application/json");
  }

  TestServer server_;
};

EventRecord waiting(std::string message) {
  return {"ml", "Pod", "v1", "pod-1", "uid-1", "Warning", "FailedScheduling", std::move(message)};
}

TEST(EventRecorderTest, OneObjectPerPodAndReasonWhoseCountGrowsAtMostOncePerInterval) {
  FakeEvents server;
  kube::ApiClient client(server.config());
  EventRecorder recorder(client, 1, /*min_update_seconds=*/30);
  recorder.state(waiting("needs 8 GPUs, 3 free"), 1000);
  ASSERT_TRUE(wait_until([&] { return recorder.stats().created == 1; }));
  recorder.state(waiting("needs 8 GPUs, 3 free"), 1001);  // the same state: nothing to write
  recorder.state(waiting("needs 8 GPUs, 2 free"), 1002);  // changed, but within the interval
  recorder.retry_pending(1010);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(server.writes(), 1);
  recorder.retry_pending(1032);  // the interval has passed: the latest message is written
  ASSERT_TRUE(wait_until([&] { return recorder.stats().updated == 1; }));
  const nlohmann::json event = server.only_event();
  EXPECT_EQ(event["count"], 2);
  EXPECT_EQ(event["message"], "needs 8 GPUs, 2 free");
  EXPECT_EQ(event["reason"], "FailedScheduling");
  EXPECT_EQ(event["involvedObject"]["uid"], "uid-1");
  EXPECT_EQ(event["metadata"]["name"], event_name(waiting("")));
}

TEST(EventRecorderTest, AFailedWriteIsNotTakenAsWrittenAndIsTriedAgain) {
  FakeEvents server;
  kube::ApiClient client(server.config());
  EventRecorder recorder(client, 1);
  server.failing = true;
  recorder.state(waiting("no room"), 1000);
  ASSERT_TRUE(wait_until([&] { return recorder.stats().failed == 1; }));
  recorder.state(waiting("no room"), 1001);  // still pending: reporting it again sends it
  ASSERT_TRUE(wait_until([&] { return recorder.stats().failed == 2; }));
  {
    std::lock_guard lock(server.mutex_);
    server.failing = false;
  }
  recorder.retry_pending(1002);
  ASSERT_TRUE(wait_until([&] { return recorder.stats().created == 1; }));
  EXPECT_EQ(server.only_event()["message"], "no room");
}

TEST(EventRecorderTest, ARestartedRecorderFindsItsEventInsteadOfWritingASecond) {
  FakeEvents server;
  kube::ApiClient client(server.config());
  {
    EventRecorder before_restart(client, 1);
    before_restart.state(waiting("no room"), 1000);
    ASSERT_TRUE(wait_until([&] { return before_restart.stats().created == 1; }));
  }
  EventRecorder after_restart(client, 1);
  after_restart.state(waiting("no room"), 2000);  // the same state: found, not counted again
  ASSERT_TRUE(wait_until([&] { return after_restart.stats().found == 1; }));
  after_restart.state(waiting("still no room"), 2001);
  after_restart.retry_pending(2100);
  ASSERT_TRUE(wait_until([&] { return after_restart.stats().updated == 1; }));
  const nlohmann::json event = server.only_event();
  EXPECT_EQ(event["count"], 2);
  EXPECT_EQ(event["message"], "still no room");
}

TEST(EventRecorderTest, OccurrencesCountUpAndEventsOfClusterScopedObjectsGoToDefault) {
  FakeEvents server;
  kube::ApiClient client(server.config());
  EventRecorder recorder(client, 1, 0);
  const EventRecord queue{"", "Queue", "scheduling.tessera.dev/v1alpha1", "loop", "uid-q", "Warning",
                          "CyclicParent", "its parents form a cycle"};
  recorder.occurred(queue, 1000);
  ASSERT_TRUE(wait_until([&] { return recorder.stats().created == 1; }));
  recorder.occurred(queue, 1001);
  ASSERT_TRUE(wait_until([&] { return recorder.stats().updated == 1; }));
  const nlohmann::json event = server.only_event();
  EXPECT_EQ(event["count"], 2);
  EXPECT_EQ(event["metadata"]["namespace"], "default");
  EXPECT_EQ(event["involvedObject"]["namespace"], "");
}

TEST(EventNameTest, IsStableValidAndBounded) {
  EventRecord record = waiting("");
  EXPECT_EQ(event_name(record), event_name(record));
  record.reason = "Scheduled";
  EXPECT_NE(event_name(record), event_name(waiting("")));
  record.object_name = std::string(253, 'a');
  EXPECT_EQ(event_name(record).size(), 253u);
}

}  // namespace
}  // namespace tessera::adapter
