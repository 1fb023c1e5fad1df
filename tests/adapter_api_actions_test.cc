// The scheduler's writes about pods, against a fake API server: what each sends, and how each
// answer is read (a refusal is only what the server said about the pod).
#include "adapter/api_actions.h"

#include <gtest/gtest.h>

#include <mutex>

#include "kube_test_server.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;
using testing::TestServer;

struct Seen {
  std::string path;
  std::string content_type;
  json body;
};

class ApiActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server.http().Post(".*", [this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
    });
    server.http().Patch(".*", [this](const httplib::Request& request, httplib::Response& response) {
      answer(request, response);
    });
    server.start();
  }

  void answer(const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex);
    seen.push_back({request.path, request.get_header_value("Content-Type"), json::parse(request.body)});
    response.status = status;
    response.set_content(answer_body.dump(), "application/json");
  }

  kube::ApiClient client() const {
    kube::ClientConfig config;
    config.server = server.url();
    return kube::ApiClient(config);
  }

  std::mutex mutex;
  std::vector<Seen> seen;
  int status = 201;
  json answer_body = json::object();
  TestServer server;  // last: its threads end before the state they use goes away
};

const VictimDecision kVictim{"ml/borrower", "ml/borrower", "ml", "borrower", Action::kReclaim, false};

TEST_F(ApiActionsTest, TheGpuAnnotationsTravelInTheBindingItself) {
  kube::ApiClient api = client();
  const PodBindingDecision binding{"ml/train-0", "ml", "train-0", {"node-3", {2, 3}, 1000}, false, {}};
  const CallResult result = bind_pod(api, binding);
  EXPECT_EQ(result.outcome, CallOutcome::kDone) << result.message;
  ASSERT_EQ(seen.size(), 1u);  // one write: no separate annotation patch that could land alone
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ml/pods/train-0/binding");
  EXPECT_EQ(seen[0].body["target"]["name"], "node-3");
  EXPECT_EQ(seen[0].body["metadata"]["annotations"]["scheduling.tessera.dev/gpu-index"], "2,3");
}

TEST(GpuAnnotations, AGpuMemoryPodTellsTheNodeAgentItsRequestLimitAndResolver) {
  const PodBindingDecision binding{"ml/infer",           "ml", "infer",
                                   {"node-1", {3}, 250}, true, {20 * kGiB, 40 * kGiB, "priority"}};
  const json annotations = gpu_annotations(binding);
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-index"], "3");
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-portion"], "250");
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-memory-request-bytes"], "21474836480");
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-memory-limit-bytes"], "42949672960");
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-env"],
            "NVIDIA_VISIBLE_DEVICES=3\nTESSERA_GPU_PORTION=0.25\nTESSERA_GPU_MEMORY_REQUEST=21474836480\n"
            "TESSERA_GPU_MEMORY_LIMIT=42949672960\nTESSERA_GPU_MEMORY_RESOLVER=priority\n");
}

TEST(GpuAnnotations, APortionPodCarriesNoMemoryTerms) {
  const PodBindingDecision binding{"ml/nb", "ml", "nb", {"node-1", {0}, 500}, true, {}};
  const json annotations = gpu_annotations(binding);
  EXPECT_FALSE(annotations.contains("scheduling.tessera.dev/gpu-memory-request-bytes"));
  EXPECT_FALSE(annotations.contains("scheduling.tessera.dev/gpu-memory-limit-bytes"));
  EXPECT_EQ(annotations["scheduling.tessera.dev/gpu-env"], "NVIDIA_VISIBLE_DEVICES=0\nTESSERA_GPU_PORTION=0.5\n");
}

TEST_F(ApiActionsTest, OnlyADisruptionBudgetRefusalIsARefusal) {
  kube::ApiClient api = client();
  status = 429;
  answer_body = {{"kind", "Status"},
                 {"code", 429},
                 {"reason", "TooManyRequests"},
                 {"details", {{"causes", json::array({{{"reason", "DisruptionBudget"}}})}}}};
  EXPECT_EQ(evict_pod(api, kVictim).outcome, CallOutcome::kRefused);
  answer_body = {{"kind", "Status"}, {"code", 429}, {"reason", "TooManyRequests"}};  // an overloaded server
  EXPECT_EQ(evict_pod(api, kVictim).outcome, CallOutcome::kFailed);
  status = 503;
  EXPECT_EQ(evict_pod(api, kVictim).outcome, CallOutcome::kFailed);
  status = 404;
  EXPECT_EQ(evict_pod(api, kVictim).outcome, CallOutcome::kGone);
  status = 201;
  EXPECT_EQ(evict_pod(api, kVictim).outcome, CallOutcome::kDone);
  EXPECT_EQ(seen.back().path, "/api/v1/namespaces/ml/pods/borrower/eviction");
}

TEST_F(ApiActionsTest, AnUnschedulablePodGetsItsConditionByAStrategicMergePatchOfStatus) {
  kube::ApiClient api = client();
  status = 200;
  const CallResult result = mark_unschedulable(api, "ml", "waits", "Unschedulable: needs 8 GPUs", "2027-01-15T08:00:00Z");
  EXPECT_EQ(result.outcome, CallOutcome::kDone);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ml/pods/waits/status");
  EXPECT_EQ(seen[0].content_type, "application/strategic-merge-patch+json");
  const json condition = seen[0].body["status"]["conditions"][0];
  EXPECT_EQ(condition["type"], "PodScheduled");
  EXPECT_EQ(condition["status"], "False");
  EXPECT_EQ(condition["reason"], "Unschedulable");
  EXPECT_EQ(condition["message"], "Unschedulable: needs 8 GPUs");
  EXPECT_EQ(condition["lastTransitionTime"], "2027-01-15T08:00:00Z");
}

}  // namespace
}  // namespace tessera::adapter
