// tessera-gpu-agent against an API server (the project's, in process): the ledger follows the
// pods bound to its node as they come and go, and /metrics and /ledger serve it.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "apiserver/api_server.h"
#include "gpumem/agent/node_agent.h"
#include "gpumem_test_support.h"
#include "kube/api_client.h"

namespace tessera::gpumem::testing {
namespace {

using nlohmann::json;

json gpu_pod(const std::string& name, const std::string& node, const std::string& devices, std::uint64_t request,
             std::uint64_t limit) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "serving"},
            {"annotations",
             {{"scheduling.tessera.dev/gpu-index", devices},
              {"scheduling.tessera.dev/gpu-memory-request-bytes", std::to_string(request)},
              {"scheduling.tessera.dev/gpu-memory-limit-bytes", std::to_string(limit)}}}}},
          {"spec",
           {{"schedulerName", "tessera"},
            {"nodeName", node},
            {"priorityClassName", "serving"},
            {"containers", json::array({{{"name", "server"}, {"image", "inference:1"}}})}}}};
}

class AgentClusterTest : public ::testing::Test {
 protected:
  AgentClusterTest() : server_(plain_http()) {}

  static apiserver::ApiServerOptions plain_http() {
    apiserver::ApiServerOptions options;
    options.tls = false;
    options.authenticate = false;
    return options;
  }

  void SetUp() override {
    ASSERT_TRUE(server_.start().ok());
    char pattern[] = "/tmp/tessera-agent-cluster-XXXXXX";
    close(mkstemp(pattern));
    unlink(pattern);
    ledger_path_ = pattern;
    kube::ClientConfig config;
    config.server = server_.url();
    client_ = std::make_unique<kube::ApiClient>(config);
    post("/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "serving"}}}});
    post("/apis/scheduling.k8s.io/v1/priorityclasses", {{"apiVersion", "scheduling.k8s.io/v1"},
                                                        {"kind", "PriorityClass"},
                                                        {"metadata", {{"name", "serving"}}},
                                                        {"value", 100}});
    post("/api/v1/nodes",
         {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "gpu-1"}, {"labels", {{"nvidia.com/gpu.memory", "16384"}}}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "2"}}}, {"allocatable", {{"nvidia.com/gpu", "2"}}}}}});
  }

  void TearDown() override {
    stop_ = true;
    if (agent_.joinable()) agent_.join();
    server_.stop();
    unlink(ledger_path_.c_str());
  }

  void post(const std::string& path, const json& body) {
    auto response = client_->post(path, body);
    ASSERT_TRUE(response && response->ok())
        << path << ": " << (response ? response->error_message() : response.error().message);
  }

  void start_agent() {
    AgentOptions options;
    options.node_name = "gpu-1";
    options.ledger_path = ledger_path_;
    options.listen_address = "127.0.0.1";
    options.port = 0;
    options.sync_interval_seconds = 0.05;
    options.listening_port = &port_;
    agent_ = std::thread([this, options] { exit_code_ = run_node_agent(*client_, options, stop_); });
  }

  std::unique_ptr<Ledger> ledger() const {
    std::string error;
    return Ledger::open(ledger_path_, &error);
  }

  apiserver::ApiServer server_;
  std::unique_ptr<kube::ApiClient> client_;
  std::string ledger_path_;
  std::atomic<bool> stop_{false};
  std::atomic<int> port_{0};
  int exit_code_ = -1;
  std::thread agent_;
};

// The entry of pod `name` on `device`, or null.
const EntryRecord* entry_named(Ledger& ledger, const std::string& name, int device) {
  for (const EntryRecord& entry : ledger.layout().entries) {
    if (entry.state == kSlotLive && entry.device == device && name == entry.name) return &entry;
  }
  return nullptr;
}

std::string http_get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  auto response = client.Get(path);
  return response && response->status == 200 ? response->body : "";
}

TEST_F(AgentClusterTest, TheLedgerFollowsThePodsBoundToItsNodeAndIsServed) {
  post("/api/v1/namespaces/serving/pods", gpu_pod("llm-a", "gpu-1", "0", 4 * kGiB, 8 * kGiB));
  post("/api/v1/namespaces/serving/pods", gpu_pod("llm-b", "gpu-1", "0,1", 2 * kGiB, 6 * kGiB));
  post("/api/v1/namespaces/serving/pods", gpu_pod("elsewhere", "gpu-2", "0", kGiB, kGiB));
  start_agent();
  auto view = ledger();
  ASSERT_TRUE(view);
  ASSERT_TRUE(eventually([&] {
    return entry_named(*view, "serving/llm-a", 0) && entry_named(*view, "serving/llm-b", 0) &&
           entry_named(*view, "serving/llm-b", 1);
  }));
  const EntryRecord& a = *entry_named(*view, "serving/llm-a", 0);
  EXPECT_EQ(a.request, 4 * kGiB);
  EXPECT_EQ(a.limit, 8 * kGiB);
  EXPECT_EQ(a.priority, 100);
  EXPECT_EQ(entry_named(*view, "serving/elsewhere", 0), nullptr);
  EXPECT_TRUE(eventually([&] { return view->layout().devices[1].capacity == 16 * kGiB; }));
  EXPECT_EQ(view->layout().devices[0].capacity, 16 * kGiB);
  EXPECT_EQ(view->layout().devices[0].committed, 6 * kGiB);  // both requests reserved

  ASSERT_TRUE(eventually([&] { return port_.load() > 0; }));
  const std::string metrics = http_get(port_, "/metrics");
  EXPECT_NE(metrics.find("tessera_gpu_memory_pod_request_bytes{pod=\"serving/llm-a\",uid=\"" + std::string(a.uid) +
                         "\",device=\"0\"} 4294967296\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(http_get(port_, "/ledger").find("name=serving/llm-b"), std::string::npos);

  auto deleted = client_->del("/api/v1/namespaces/serving/pods/llm-a");
  ASSERT_TRUE(deleted && deleted->ok());
  EXPECT_TRUE(eventually([&] { return entry_named(*view, "serving/llm-a", 0) == nullptr; }));
  EXPECT_EQ(view->layout().devices[0].committed, 2 * kGiB);
  stop_ = true;
  agent_.join();
  EXPECT_EQ(exit_code_, 0);
}

}  // namespace
}  // namespace tessera::gpumem::testing
