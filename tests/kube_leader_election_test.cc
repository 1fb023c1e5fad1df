// Leader election against a fake Lease endpoint that enforces resourceVersion preconditions.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <optional>

#include "kube/leader_election.h"
#include "kube_test_server.h"
#include "wire/timestamp.h"

namespace tessera::kube {
namespace {

using namespace std::chrono_literals;
using testing::seconds_since;
using testing::TestServer;
using testing::wait_until;

constexpr const char* kCollection = "/apis/coordination.k8s.io/v1/namespaces/tessera-system/leases";
constexpr const char* kLease = "/apis/coordination.k8s.io/v1/namespaces/tessera-system/leases/tessera-scheduler";

// One Lease, with the API server's optimistic concurrency: a create of an existing lease, or
// an update whose resourceVersion is not the current one, gets 409 Conflict.
class FakeLeaseServer {
 public:
  FakeLeaseServer() {
    const auto conflict = [](httplib::Response& response) {
      response.status = 409;
      response.set_content(R"({"kind":"Status","reason":"Conflict","code":409})", "application/json");
    };
    server.http().Get(kLease, [this](const httplib::Request&, httplib::Response& response) {
      std::lock_guard lock(mutex);
      if (!lease) {
        response.status = 404;
        response.set_content(R"({"kind":"Status","reason":"NotFound","code":404})", "application/json");
        return;
      }
      response.set_content(lease->dump(), "application/json");
    });
    server.http().Post(kCollection, [this, conflict](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      if (lease) return conflict(response);
      store(nlohmann::json::parse(request.body));
      response.status = 201;
      response.set_content(lease->dump(), "application/json");
    });
    server.http().Put(kLease, [this, conflict](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      const nlohmann::json body = nlohmann::json::parse(request.body);
      if (fail_updates) {
        response.status = 500;
        return;
      }
      if (!lease || body["metadata"].value("resourceVersion", "") != (*lease)["metadata"]["resourceVersion"]) {
        return conflict(response);
      }
      store(body);
      response.set_content(lease->dump(), "application/json");
    });
    server.start();
  }

  ClientConfig config() const {
    ClientConfig config;
    config.server = server.url();
    return config;
  }

  nlohmann::json spec() {
    std::lock_guard lock(mutex);
    return lease ? (*lease)["spec"] : nlohmann::json();
  }

  // Someone else writes the lease behind the electors' backs.
  void overwrite_holder(const std::string& holder) {
    std::lock_guard lock(mutex);
    nlohmann::json next = *lease;
    next["spec"]["holderIdentity"] = holder;
    next["spec"]["renewTime"] = wire::format_micro_time(std::chrono::system_clock::now());
    store(next);
  }

  void store(nlohmann::json next) {
    next["metadata"]["resourceVersion"] = std::to_string(++version);
    lease = std::move(next);
  }

  std::mutex mutex;
  std::optional<nlohmann::json> lease;
  int version = 0;
  bool fail_updates = false;
  TestServer server;  // last: its threads end before the state they use goes away
};

// "2026-11-21T10:00:00.123456Z": digits where the pattern has 'd'.
bool looks_like_micro_time(const std::string& text) {
  const std::string pattern = "dddd-dd-ddTdd:dd:dd.ddddddZ";
  if (text.size() != pattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (pattern[i] == 'd' ? !digit : text[i] != pattern[i]) return false;
  }
  return true;
}

LeaderElectionConfig fast_config(const std::string& identity) {
  LeaderElectionConfig config;
  config.identity = identity;
  // Short enough for a quick test, long enough that a busy machine delaying a renewal by a
  // second or two does not change who leads.
  config.lease_duration_seconds = 4;
  config.renew_deadline_seconds = 2.5;
  config.retry_period_seconds = 0.2;
  return config;
}

class LeaderElectionTest : public ::testing::Test {
 protected:
  FakeLeaseServer fake;
  ApiClient client{fake.config()};
  std::atomic<bool> stop{false};
};

TEST_F(LeaderElectionTest, OneLeaderAtATimeAndTakeoverAfterTheLeaseLapses) {
  auto first = std::make_unique<LeaderElector>(client, fast_config("replica-1"));
  ASSERT_TRUE(first->acquire(stop));
  EXPECT_TRUE(first->is_leader());
  EXPECT_EQ(fake.spec()["holderIdentity"], "replica-1");
  EXPECT_EQ(first->transitions_seen(), 0);
  const std::string renew_time = fake.spec()["renewTime"];
  EXPECT_TRUE(looks_like_micro_time(renew_time)) << renew_time;

  LeaderElector second(client, fast_config("replica-2"));
  auto second_won = std::async(std::launch::async, [&] { return second.acquire(stop); });
  // While the first renews, the second waits, however long that is.
  const auto watch_start = std::chrono::steady_clock::now();
  while (seconds_since(watch_start) < 2.0) {
    EXPECT_FALSE(first->is_leader() && second.is_leader());
    EXPECT_TRUE(first->is_leader());
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(second_won.wait_for(0ms), std::future_status::timeout);
  EXPECT_EQ(fake.spec()["holderIdentity"], "replica-1");
  EXPECT_NE(fake.spec()["renewTime"], renew_time);  // renewed meanwhile

  first.reset();  // stops renewing without releasing
  const auto lapse_start = std::chrono::steady_clock::now();
  ASSERT_EQ(second_won.wait_for(30s), std::future_status::ready);
  const double takeover_seconds = seconds_since(lapse_start);
  EXPECT_TRUE(second_won.get());
  EXPECT_GE(takeover_seconds, 3.5);  // not before the lease (4 s) lapsed, less a retry period
  EXPECT_TRUE(second.is_leader());
  EXPECT_EQ(fake.spec()["holderIdentity"], "replica-2");
  EXPECT_EQ(fake.spec()["leaseTransitions"], 1);
  EXPECT_EQ(second.transitions_seen(), 1);
}

TEST_F(LeaderElectionTest, ReleaseHandsOverAtOnce) {
  LeaderElector first(client, fast_config("replica-1"));
  ASSERT_TRUE(first.acquire(stop));
  LeaderElector second(client, fast_config("replica-2"));
  auto second_won = std::async(std::launch::async, [&] { return second.acquire(stop); });
  std::this_thread::sleep_for(300ms);  // the second has seen the lease held
  const auto release_start = std::chrono::steady_clock::now();
  first.release();
  EXPECT_FALSE(first.is_leader());
  ASSERT_EQ(second_won.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(second_won.get());
  EXPECT_LT(seconds_since(release_start), 3.5);  // before the lease (4 s) could have lapsed
  EXPECT_EQ(fake.spec()["holderIdentity"], "replica-2");
  EXPECT_EQ(fake.spec()["leaseTransitions"], 1);
}

TEST_F(LeaderElectionTest, StopEndsAWaitingCandidate) {
  LeaderElector first(client, fast_config("replica-1"));
  ASSERT_TRUE(first.acquire(stop));
  LeaderElector second(client, fast_config("replica-2"));
  std::atomic<bool> second_stop{false};
  auto second_won = std::async(std::launch::async, [&] { return second.acquire(second_stop); });
  std::this_thread::sleep_for(200ms);
  second_stop.store(true);
  ASSERT_EQ(second_won.wait_for(3s), std::future_status::ready);  // the lease would take 4 s
  EXPECT_FALSE(second_won.get());
  EXPECT_FALSE(second.is_leader());
}

TEST_F(LeaderElectionTest, StepsDownWhenTheLeaseIsTakenOrCannotBeRenewed) {
  std::atomic<int> lost{0};
  LeaderElector elector(client, fast_config("replica-1"));
  ASSERT_TRUE(elector.acquire(stop, [&] { ++lost; }));
  fake.overwrite_holder("intruder");
  ASSERT_TRUE(wait_until([&] { return !elector.is_leader(); }, 10));
  ASSERT_TRUE(wait_until([&] { return lost.load() == 1; }, 10));

  // Leader again once the intruder's lease lapses; then renewals fail until the deadline.
  ASSERT_TRUE(elector.acquire(stop, [&] { ++lost; }));
  EXPECT_EQ(fake.spec()["holderIdentity"], "replica-1");
  {
    std::lock_guard lock(fake.mutex);
    fake.fail_updates = true;
  }
  const auto failing_since = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return !elector.is_leader(); }, 10));
  // Stepped down at the renew deadline (2.5 s), before another replica could take the lease (4 s).
  EXPECT_LT(seconds_since(failing_since), 4.0);
  ASSERT_TRUE(wait_until([&] { return lost.load() == 2; }, 10));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(lost.load(), 2);  // once per loss
}

TEST_F(LeaderElectionTest, AFailingRenewalIsReportedOncePerCause) {
  std::mutex reports_mutex;
  std::vector<std::string> reports;
  LeaderElectionConfig config = fast_config("replica-1");
  config.on_failure = [&](const std::string& report) {
    std::lock_guard lock(reports_mutex);
    reports.push_back(report);
  };
  LeaderElector elector(client, config);
  ASSERT_TRUE(elector.acquire(stop));
  {
    std::lock_guard lock(fake.mutex);
    fake.fail_updates = true;
  }
  ASSERT_TRUE(wait_until([&] { return !elector.is_leader(); }, 10));
  std::lock_guard lock(reports_mutex);
  ASSERT_EQ(reports.size(), 1u) << "renewals failed about a dozen times with the same cause";
  EXPECT_NE(reports[0].find("leader election: updating the lease tessera-system/tessera-scheduler failed: HTTP 500"),
            std::string::npos)
      << reports[0];
}

TEST(MicroTimeTest, FormatsUtcWithMicroseconds) {
  const auto time = std::chrono::system_clock::time_point(std::chrono::microseconds(1'795'255'200'123'456LL));
  EXPECT_EQ(wire::format_micro_time(time), "2026-11-21T10:00:00.123456Z");
}

}  // namespace
}  // namespace tessera::kube
