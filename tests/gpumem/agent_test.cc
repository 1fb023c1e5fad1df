// The node agent's parts: reading a pod's entries from what Tessera wrote at binding, bringing the
// ledger in line with the node's pods, and the metrics it serves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gpumem/agent/ledger_metrics.h"
#include "gpumem/agent/ledger_sync.h"
#include "gpumem/agent/pod_entries.h"
#include "gpumem_test_support.h"

namespace tessera::gpumem::testing {
namespace {

nlohmann::json bound_pod(const std::string& name, nlohmann::json annotations) {
  return {
      {"metadata", {{"name", name}, {"namespace", "serving"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
      {"spec",
       {{"schedulerName", "tessera"},
        {"nodeName", "gpu-1"},
        {"priority", 1000},
        {"containers", nlohmann::json::array()}}},
      {"status", {{"phase", "Running"}}}};
}

TEST(PodEntries, OneEntryPerBoundDeviceWithTheBytesTesseraWrote) {
  const PodEntries entries =
      entries_for_pod(bound_pod("llm", {{"scheduling.tessera.dev/gpu-index", "2,3"},
                                        {"scheduling.tessera.dev/gpu-memory-request-bytes", "1000"},
                                        {"scheduling.tessera.dev/gpu-memory-limit-bytes", "3000"},
                                        {"scheduling.tessera.dev/gpu-memory", "1000"},
                                        {"scheduling.tessera.dev/gpu-memory-resolver", "priority"}}));
  ASSERT_TRUE(entries.problem.empty()) << entries.problem;
  ASSERT_EQ(entries.entries.size(), 2u);
  EXPECT_EQ(entries.entries[0].device, 2);
  EXPECT_EQ(entries.entries[1].device, 3);
  EXPECT_EQ(entries.entries[0].uid, "uid-llm");
  EXPECT_EQ(entries.entries[0].name, "serving/llm");
  EXPECT_EQ(entries.entries[0].request, 1000u);
  EXPECT_EQ(entries.entries[0].limit, 3000u);
  EXPECT_EQ(entries.entries[0].priority, 1000);
  EXPECT_EQ(entries.entries[0].resolver, Resolver::kPriority);
}

TEST(PodEntries, APodWithoutGpuMemoryOrFinishedHasNone) {
  EXPECT_TRUE(entries_for_pod(bound_pod("cpu", nlohmann::json::object())).entries.empty());
  nlohmann::json done = bound_pod(
      "done", {{"scheduling.tessera.dev/gpu-index", "0"}, {"scheduling.tessera.dev/gpu-memory-limit-bytes", "10"}});
  done["status"]["phase"] = "Succeeded";
  EXPECT_TRUE(entries_for_pod(done).entries.empty());
  EXPECT_TRUE(entries_for_pod(done).problem.empty());
}

TEST(PodEntries, BadAnnotationsAreNamedWithThePod) {
  nlohmann::json numeric = bound_pod("n", {{"scheduling.tessera.dev/gpu-index", "0"}});
  numeric["metadata"]["annotations"]["scheduling.tessera.dev/gpu-memory-limit-bytes"] = 10;
  EXPECT_TRUE(entries_for_pod(numeric).entries.empty());
  EXPECT_NE(entries_for_pod(numeric).problem.find("pod serving/n: metadata.annotations"), std::string::npos)
      << entries_for_pod(numeric).problem;
  const PodEntries bytes = entries_for_pod(bound_pod(
      "a", {{"scheduling.tessera.dev/gpu-index", "0"}, {"scheduling.tessera.dev/gpu-memory-limit-bytes", "20Gi"}}));
  EXPECT_TRUE(bytes.entries.empty());
  EXPECT_NE(bytes.problem.find("pod serving/a: annotation scheduling.tessera.dev/gpu-memory-limit-bytes '20Gi'"),
            std::string::npos)
      << bytes.problem;
  const PodEntries resolver =
      entries_for_pod(bound_pod("b", {{"scheduling.tessera.dev/gpu-index", "0"},
                                      {"scheduling.tessera.dev/gpu-memory-limit-bytes", "1"},
                                      {"scheduling.tessera.dev/gpu-memory", "1"},
                                      {"scheduling.tessera.dev/gpu-memory-resolver", "evict"}}));
  EXPECT_NE(resolver.problem.find("'evict' is not a GPU memory resolver"), std::string::npos) << resolver.problem;
  const PodEntries unbound = entries_for_pod(bound_pod("c", {{"scheduling.tessera.dev/gpu-memory-limit-bytes", "1"}}));
  EXPECT_NE(unbound.problem.find("no scheduling.tessera.dev/gpu-index"), std::string::npos) << unbound.problem;
  const PodEntries inverted = entries_for_pod(bound_pod("d", {{"scheduling.tessera.dev/gpu-index", "0"},
                                                              {"scheduling.tessera.dev/gpu-memory-request-bytes", "5"},
                                                              {"scheduling.tessera.dev/gpu-memory-limit-bytes", "1"}}));
  EXPECT_NE(inverted.problem.find("above its limit"), std::string::npos) << inverted.problem;
}

class LedgerSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-agent-test-XXXXXX";
    close(mkstemp(pattern));
    unlink(pattern);
    path_ = pattern;
    std::string error;
    ledger_ = Ledger::open(path_, &error);
    ASSERT_TRUE(ledger_) << error;
  }
  void TearDown() override { unlink(path_.c_str()); }

  static EntrySpec spec(const std::string& uid, std::uint64_t request, std::uint64_t limit) {
    EntrySpec entry;
    entry.uid = uid;
    entry.name = "serving/" + uid;
    entry.request = request;
    entry.limit = limit;
    return entry;
  }

  std::string path_;
  std::unique_ptr<Ledger> ledger_;
};

TEST_F(LedgerSyncTest, WritesThePodsEntriesAndTheirDevicesAndRemovesThoseOfPodsGone) {
  SyncReport report = sync_ledger(*ledger_, {spec("a", kGiB, 2 * kGiB), spec("b", kGiB, 4 * kGiB)}, {8 * kGiB});
  EXPECT_EQ(report.entries_written, 2);
  EXPECT_EQ(ledger_->layout().devices[0].capacity, 8 * kGiB);
  EXPECT_EQ(ledger_->layout().devices[0].committed, 2 * kGiB);
  report = sync_ledger(*ledger_, {spec("b", 2 * kGiB, 4 * kGiB)}, {8 * kGiB});
  EXPECT_EQ(report.entries_removed, 1);
  EXPECT_FALSE(ledger_->find_entry("a", 0).valid());
  EXPECT_EQ(ledger_->layout().devices[0].committed, 2 * kGiB);  // b's new request
}

TEST_F(LedgerSyncTest, KeepsAGonePodsEntryWhileAProcessStillChargesIt) {
  sync_ledger(*ledger_, {spec("a", 0, 2 * kGiB)}, {8 * kGiB});
  ASSERT_GE(ledger_->register_process("a", getpid()), 0);
  ASSERT_EQ(ledger_->charge(ledger_->find_entry("a", 0), kGiB, monotonic_ns()).decision.verdict, ChargeVerdict::kGrant);
  const SyncReport report = sync_ledger(*ledger_, {}, {8 * kGiB});
  EXPECT_EQ(report.entries_kept_in_use, 1);
  EXPECT_TRUE(ledger_->find_entry("a", 0).valid());
}

TEST_F(LedgerSyncTest, MetricsNameEachPodAndDeviceWithTheirNumbers) {
  sync_ledger(*ledger_, {spec("a", kGiB, 2 * kGiB)}, {8 * kGiB});
  ASSERT_GE(ledger_->register_process("a", getpid()), 0);
  ASSERT_EQ(ledger_->charge(ledger_->find_entry("a", 0), 1536 * kMiB, monotonic_ns()).decision.verdict,
            ChargeVerdict::kGrant);
  const std::string text = ledger_metrics(*ledger_, AgentCounters{123, 4, 0});
  for (const std::string line :
       {"tessera_gpu_memory_device_capacity_bytes{device=\"0\"} 8589934592",
        "tessera_gpu_memory_device_committed_bytes{device=\"0\"} 1610612736",
        "tessera_gpu_memory_pod_used_bytes{pod=\"serving/a\",uid=\"a\",device=\"0\"} 1610612736",
        "tessera_gpu_memory_pod_request_bytes{pod=\"serving/a\",uid=\"a\",device=\"0\"} 1073741824",
        "tessera_gpu_memory_pod_limit_bytes{pod=\"serving/a\",uid=\"a\",device=\"0\"} 2147483648",
        "tessera_gpu_memory_pod_grants_total{pod=\"serving/a\",uid=\"a\",device=\"0\"} 1",
        "# TYPE tessera_gpu_memory_pod_waits_total counter", "tessera_gpu_memory_processes 1",
        "tessera_gpu_agent_reclaimed_bytes_total 123"}) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace tessera::gpumem::testing
