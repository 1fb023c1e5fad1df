// Failed writes are logged once per cause, so a missing RBAC rule is named at once and the log
// does not fill with a line per object every cycle.
#include "adapter/failure_log.h"

#include <gtest/gtest.h>

namespace tessera::adapter {
namespace {

kube::ApiResponse forbidden(const std::string& name) {
  const nlohmann::json status = {
      {"kind", "Status"},
      {"status", "Failure"},
      {"reason", "Forbidden"},
      {"code", 403},
      {"message", "queues.scheduling.tessera.dev \"" + name + "\" is forbidden: cannot patch resource"}};
  return {403, status.dump()};
}

class FailureLogTest : public ::testing::Test {
 protected:
  std::vector<std::string> lines;
  FailureLog log{[this](const std::string& line) { lines.push_back(line); }};
};

TEST_F(FailureLogTest, NamesTheOperationTheCauseAndTheServersMessage) {
  log.record("queue-status", "writing the status of Queue team-a", forbidden("team-a"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "writing the status of Queue team-a failed: HTTP 403 Forbidden: queues.scheduling.tessera.dev \"team-a\" "
            "is forbidden: cannot patch resource");
}

TEST_F(FailureLogTest, TheSameCauseAgainIsNotLoggedAgainUntilAWriteSucceeds) {
  log.record("queue-status", "writing the status of Queue team-a", forbidden("team-a"));
  log.record("queue-status", "writing the status of Queue team-b", forbidden("team-b"));
  EXPECT_EQ(lines.size(), 1u);
  log.record("queue-status", "writing the status of Queue team-a", kube::ApiResponse{200, "{}"});
  log.record("queue-status", "writing the status of Queue team-b", forbidden("team-b"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("Queue team-b"), std::string::npos) << lines[1];
}

TEST_F(FailureLogTest, ANewCauseOrAnotherKindIsLogged) {
  log.record("queue-status", "writing the status of Queue team-a", forbidden("team-a"));
  log.record("queue-status", "writing the status of Queue team-a", Error{"connection refused"});
  log.record("event", "writing the Scheduled event of Pod ml/a", forbidden("a"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "writing the status of Queue team-a failed: connection refused");
  EXPECT_NE(lines[2].find("HTTP 403 Forbidden"), std::string::npos) << lines[2];
}

TEST(FailureCause, IsTheStatusAndReasonOrTheTransportError) {
  EXPECT_EQ(failure_cause(kube::ApiResponse{403, R"({"kind":"Status","reason":"Forbidden"})"}), "HTTP 403 Forbidden");
  EXPECT_EQ(failure_cause(kube::ApiResponse{502, "bad gateway"}), "HTTP 502");
  EXPECT_EQ(failure_cause(Error{"TLS handshake failed"}), "TLS handshake failed");
}

}  // namespace
}  // namespace tessera::adapter
