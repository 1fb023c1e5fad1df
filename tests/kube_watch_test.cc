// Watch streams: line splitting across chunks, idle streams, stopping, and how streams end.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "kube/api_client.h"
#include "kube/watch_stream.h"
#include "kube_test_server.h"

namespace tessera::kube {
namespace {

using namespace std::chrono_literals;
using testing::seconds_since;
using testing::TestServer;

std::vector<std::string> split_all(const std::vector<std::string>& chunks) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  const auto collect = [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  };
  for (const auto& chunk : chunks) EXPECT_TRUE(splitter.feed(chunk, collect));
  EXPECT_TRUE(splitter.finish(collect));
  return lines;
}

TEST(LineSplitterTest, JoinsLinesAcrossChunksAndSplitsSeveralInOne) {
  EXPECT_EQ(split_all({"{\"a\":", "1}\n{\"b\"", ":2}\n{\"c\":3}\n{\"d\":4}\n"}),
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}", "{\"d\":4}"}));
  EXPECT_EQ(split_all({"x\r\n\n", "\ny", "z"}), (std::vector<std::string>{"x", "yz"}));  // CRLF, blanks, no final break
  EXPECT_EQ(split_all({"a", "b", "c", "\n"}), (std::vector<std::string>{"abc"}));
}

TEST(ParseWatchEventTest, ReadsTypeAndObject) {
  auto event = parse_watch_event(R"({"type":"ADDED","object":{"metadata":{"name":"p"}}})");
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event->type, "ADDED");
  EXPECT_EQ(event->object["metadata"]["name"], "p");
  EXPECT_FALSE(parse_watch_event("{\"object\":{}}"));
  EXPECT_FALSE(parse_watch_event("not json"));
}

// A watch endpoint that plays a script: each step writes a piece of the body, pauses, or ends
// the stream (cleanly, or by breaking the connection).
struct Step {
  enum Kind { kWrite, kPause, kEnd, kBreak, kIdleForever };
  Kind kind = kEnd;
  std::string text;
  std::chrono::milliseconds pause{0};
};

Step write(std::string text) { return {Step::kWrite, std::move(text), 0ms}; }
Step pause(std::chrono::milliseconds duration) { return {Step::kPause, "", duration}; }
Step end() { return {Step::kEnd, "", 0ms}; }
Step break_connection() { return {Step::kBreak, "", 0ms}; }
Step idle_forever() { return {Step::kIdleForever, "", 0ms}; }

class WatchTest : public ::testing::Test {
 protected:
  void serve(std::vector<Step> script) {
    server.http().Get("/api/v1/pods", [this, script](const httplib::Request&, httplib::Response& response) {
      auto next = std::make_shared<size_t>(0);
      response.set_chunked_content_provider("application/json", [this, script, next](size_t, httplib::DataSink& sink) {
        if (*next >= script.size() || server.stopping()) return false;
        const Step& step = script[(*next)++];
        switch (step.kind) {
          case Step::kWrite:
            return sink.write(step.text.data(), step.text.size());
          case Step::kPause:
            std::this_thread::sleep_for(step.pause);
            return true;
          case Step::kEnd:
            sink.done();
            return true;
          case Step::kBreak:
            return false;
          case Step::kIdleForever:
            --*next;  // stay on this step until the server is torn down
            std::this_thread::sleep_for(10ms);
            return true;
        }
        return false;
      });
    });
    server.http().Get("/api/v1/gone", [](const httplib::Request&, httplib::Response& response) {
      response.status = 410;
      response.set_content(
          R"j({"kind":"Status","status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410})j",
          "application/json");
    });
    server.start();
    ClientConfig config;
    config.server = server.url();
    client = std::make_unique<ApiClient>(config);
  }

  Result<WatchEnd> watch(const std::string& path = "/api/v1/pods?watch=1") {
    return client->watch(
        path,
        [this](WatchEvent& event) {
          events.push_back(std::move(event));
          return !stop_after_first;
        },
        stop);
  }

  TestServer server;
  std::unique_ptr<ApiClient> client;
  std::atomic<bool> stop{false};
  bool stop_after_first = false;
  std::vector<WatchEvent> events;
};

TEST_F(WatchTest, DeliversEventsSplitAcrossChunksInOrder) {
  serve({write(R"({"type":"ADDED","object":{"metadata":{"na)"), pause(30ms),
         write(R"(me":"a","resourceVersion":"1"}}})"
               "\n"
               R"({"type":"MODIFIED","obj)"),
         pause(30ms),
         write(R"(ect":{"metadata":{"name":"a","resourceVersion":"2"}}})"
               "\n"
               R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3"}}})"
               "\n"
               R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"4"}}})"
               "\n"),
         end()});
  auto end = watch();
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_EQ(*end, WatchEnd::kClosed);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, "ADDED");
  EXPECT_EQ(events[0].object["metadata"]["name"], "a");
  EXPECT_EQ(events[1].type, "MODIFIED");
  EXPECT_EQ(events[1].object["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(events[2].type, "BOOKMARK");
  EXPECT_EQ(events[3].type, "DELETED");
}

TEST_F(WatchTest, AnIdleStreamOutlivesTheRequestTimeout) {
  serve({write(R"({"type":"ADDED","object":{}})"
               "\n"),
         pause(800ms),
         write(R"({"type":"ADDED","object":{}})"
               "\n"),
         end()});
  client->set_request_timeout(0.2);  // bounds ordinary requests, not the silence of a watch
  auto end = watch();
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_EQ(*end, WatchEnd::kClosed);
  EXPECT_EQ(events.size(), 2u);
}

TEST_F(WatchTest, StopsPromptlyWhileIdle) {
  serve({write(R"({"type":"ADDED","object":{}})"
               "\n"),
         idle_forever()});
  std::chrono::steady_clock::time_point stop_time;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop_time = std::chrono::steady_clock::now();
    stop.store(true);
  });
  auto end = watch();
  stopper.join();
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_EQ(*end, WatchEnd::kStopped);
  EXPECT_LT(seconds_since(stop_time), 10.0);  // the stream itself never ends
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(WatchTest, ACallbackReturningFalseStopsTheWatch) {
  serve({write(R"({"type":"ADDED","object":{}})"
               "\n"
               R"({"type":"ADDED","object":{}})"
               "\n"),
         idle_forever()});
  stop_after_first = true;
  auto end = watch();
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_EQ(*end, WatchEnd::kStopped);
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(WatchTest, AnHttpErrorCarriesTheStatusAndMessage) {
  serve({});
  auto end = watch("/api/v1/gone?watch=1");
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().message, "HTTP 410: too old resource version: 5 (9)");
  EXPECT_EQ(watch_http_status(end.error()), 410);
}

TEST_F(WatchTest, ABrokenConnectionIsATransportError) {
  serve({write(R"({"type":"ADDED","object":{}})"
               "\n"),
         break_connection()});
  auto end = watch();
  ASSERT_FALSE(end);
  EXPECT_EQ(watch_http_status(end.error()), 0) << end.error().message;
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(WatchTest, AMalformedEventEndsTheWatchWithAnError) {
  serve({write("{\"type\":\"ADDED\",\"object\":{}}\nnot json\n"), idle_forever()});
  auto end = watch();
  ASSERT_FALSE(end);
  EXPECT_NE(end.error().message.find("malformed watch event: not json"), std::string::npos) << end.error().message;
  EXPECT_EQ(watch_http_status(end.error()), 0);
}

}  // namespace
}  // namespace tessera::kube
