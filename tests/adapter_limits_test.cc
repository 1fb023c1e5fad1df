// Time and idle-GPU limits on Kubernetes: the Queue's rules as read, GPU utilisation from
// Prometheus' HTTP API (a real HTTP server here, answering as Prometheus does), and the limits
// step over a snapshot — a notebook idle past its limit is stopped with the numbers, and
// Prometheus going away pauses idle time instead of ending anything.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "adapter/gpu_telemetry.h"
#include "adapter/limit_enforcer.h"
#include "adapter/scheduler_memory.h"
#include "adapter/status_reports.h"
#include "adapter/world_snapshot.h"
#include "kube_test_server.h"

namespace tessera::adapter {
namespace {

using nlohmann::json;

constexpr double kStart = 1'800'000'000;  // a fixed Unix time

std::string vector_response(const std::vector<std::tuple<std::string, std::string, std::string>>& series) {
  json result = json::array();
  for (const auto& [ns, pod, value] : series) {
    result.push_back({{"metric", {{"namespace", ns}, {"pod", pod}, {"gpu", "0"}}}, {"value", {kStart, value}}});
  }
  return json({{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}).dump();
}

TEST(GpuTelemetry, ReadsTheHighestUtilisationPerPod) {
  const std::string body = vector_response(
      {{"ml", "nb-0", "3.5"}, {"ml", "train-0", "88"}, {"ml", "train-0", "91"}, {"ml", "empty", "NaN"}});
  auto read = parse_utilisation(body);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->size(), 2u);
  EXPECT_DOUBLE_EQ(read->at("ml/nb-0"), 3.5);
  EXPECT_DOUBLE_EQ(read->at("ml/train-0"), 91);  // its busiest device
  EXPECT_FALSE(read->contains("ml/empty"));      // no samples in the window

  auto failed = parse_utilisation(R"({"status": "error", "errorType": "bad_data", "error": "parse error at char 4"})");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "Prometheus answered error: parse error at char 4");
  auto matrix = parse_utilisation(R"({"status": "success", "data": {"resultType": "matrix", "result": []}})");
  ASSERT_FALSE(matrix.ok());
  EXPECT_NE(matrix.error().message.find("not an instant vector"), std::string::npos);
  EXPECT_FALSE(parse_utilisation("<html>").ok());
}

TEST(GpuTelemetry, TheQueryCarriesTheIdleWindow) {
  EXPECT_EQ(utilisation_query(kDefaultUtilisationQuery, 300),
            "max by (namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}[300s]))");
  EXPECT_EQ(utilisation_query("a[$window] b[$window]", 59.6), "a[60s] b[60s]");
}

// Answers /api/v1/query as Prometheus would, with the series set at the time.
class FakePrometheus {
 public:
  FakePrometheus() : server_(std::make_unique<testing::TestServer>()) {
    server_->http().Get("/api/v1/query", [this](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex_);
      queries_.push_back(request.get_param_value("query"));
      response.set_content(vector_response(series_), "application/json");
    });
    server_->start();
    url_ = server_->url();
  }
  void stop() { server_.reset(); }
  void set(std::vector<std::tuple<std::string, std::string, std::string>> series) {
    std::lock_guard lock(mutex_);
    series_ = std::move(series);
  }
  std::vector<std::string> queries() {
    std::lock_guard lock(mutex_);
    return queries_;
  }
  const std::string& url() const { return url_; }

 private:
  std::mutex mutex_;
  std::vector<std::tuple<std::string, std::string, std::string>> series_;
  std::vector<std::string> queries_;
  std::unique_ptr<testing::TestServer> server_;  // last: stopped before what its handler reads
  std::string url_;
};

TEST(GpuTelemetry, QueriesPrometheusOverHttpAndSaysWhenItIsGone) {
  FakePrometheus prometheus;
  prometheus.set({{"ml", "nb-0", "0"}});
  PrometheusClient client(prometheus.url(), 2);
  auto read = client.utilisation(utilisation_query(kDefaultUtilisationQuery, 120));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_DOUBLE_EQ(read->at("ml/nb-0"), 0);
  ASSERT_EQ(prometheus.queries().size(), 1u);
  EXPECT_NE(prometheus.queries()[0].find("[120s]"), std::string::npos);
  prometheus.stop();
  auto gone = client.utilisation("up");
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find(prometheus.url()), std::string::npos) << gone.error().message;
}

// ---------------------------------------------------------------------------------------------
// The limits step over a snapshot.

kube::ObjectPtr as_object(json value) { return std::make_shared<const json>(std::move(value)); }

// One node with 4 GPUs; queue "lab" whose notebooks are stopped after 60 s idle (no notice);
// notebook "ml/nb-0" bound there, started at kStart.
ObservedObjects notebook_world() {
  ObservedObjects observed;
  observed.nodes["gpu-0"] =
      as_object({{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", "gpu-0"}, {"labels", {{"nvidia.com/gpu.product", "A100"}}}}},
                 {"status",
                  {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}, {"pods", "110"}}},
                   {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  observed.queues["lab"] =
      as_object({{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                 {"kind", "Queue"},
                 {"metadata", {{"name", "lab"}}},
                 {"spec",
                  {{"resources", {{"gpu", {{"deserved", 4}}}}},
                   {"rules", {{"interactive", {{"idleLimit", "60s"}, {"notice", "0s"}, {"idleWindow", "30s"}}}}}}}});
  json container = {
      {"name", "main"},
      {"image", "jupyter"},
      {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}}};
  observed.pods["ml/nb-0"] = as_object(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "nb-0"},
         {"namespace", "ml"},
         {"uid", "uid-nb-0"},
         {"creationTimestamp", "2027-01-15T07:00:00Z"},
         {"labels", {{"scheduling.tessera.dev/queue", "lab"}}},
         {"annotations", {{"scheduling.tessera.dev/workload-type", "interactive"}}}}},
       {"spec", {{"schedulerName", "tessera"}, {"nodeName", "gpu-0"}, {"containers", json::array({container})}}},
       {"status", {{"phase", "Running"}, {"startTime", "2027-01-15T08:00:00Z"}}}});
  return observed;
}

struct LimitsRun {
  explicit LimitsRun(std::string url)
      : enforcer(TelemetryOptions{std::move(url), std::string(kDefaultUtilisationQuery), 0.1, 2}) {}
  LimitActions review(double now) {
    auto snapshot = build_snapshot(observed, memory, now);
    EXPECT_TRUE(snapshot.ok());
    return enforcer.review(*snapshot, now, metrics, [this](const std::string& line) { log.push_back(line); });
  }
  ObservedObjects observed = notebook_world();
  SchedulerMemory memory;
  Metrics metrics;
  LimitEnforcer enforcer;
  std::vector<std::string> log;
};

TEST(LimitEnforcer, ANotebookIdlePastItsLimitIsStoppedWithTheNumbers) {
  FakePrometheus prometheus;
  prometheus.set({{"ml", "nb-0", "1.5"}});
  LimitsRun run(prometheus.url());
  EXPECT_TRUE(run.review(kStart).notices.empty());  // the first read starts the idle clock
  EXPECT_TRUE(run.review(kStart + 30).notices.empty());
  const LimitActions stop = run.review(kStart + 60);
  ASSERT_EQ(stop.notices.size(), 1u);
  EXPECT_EQ(stop.notices[0].reason, "LimitStopped");
  EXPECT_EQ(stop.notices[0].message, "idle for 1 min (limit 1 min, GPU utilisation under 5%): stopped");
  EXPECT_EQ(stop.notices[0].pod_keys, std::vector<std::string>{"ml/nb-0"});
  EXPECT_EQ(stop.delete_pods, std::vector<std::string>{"ml/nb-0"});
  EXPECT_TRUE(stop.evict_pods.empty());
  const std::string metrics = run.metrics.render();
  EXPECT_NE(metrics.find("tessera_workloads_ended_total{reason=\"idle\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tessera_gpu_telemetry_up 1"), std::string::npos);
  // While its pod ends, nothing more is said or done.
  const LimitActions after = run.review(kStart + 61);
  EXPECT_TRUE(after.notices.empty());
  EXPECT_TRUE(after.delete_pods.empty());
}

TEST(LimitEnforcer, APodGroupCarriesTheLimitAsACondition) {
  FakePrometheus prometheus;
  prometheus.set({{"ml", "nb-0", "0"}});
  LimitsRun run(prometheus.url());
  json pod = *run.observed.pods.at("ml/nb-0");
  pod["metadata"]["labels"]["scheduling.tessera.dev/pod-group"] = "nb";
  run.observed.pods["ml/nb-0"] = as_object(pod);
  run.observed.pod_groups["ml/nb"] = as_object({{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                                                {"kind", "PodGroup"},
                                                {"metadata", {{"name", "nb"}, {"namespace", "ml"}}},
                                                {"spec", {{"minMember", 1}, {"queue", "lab"}}}});
  run.review(kStart);
  const LimitActions stop = run.review(kStart + 60);
  ASSERT_EQ(stop.notices.size(), 1u);
  EXPECT_EQ(stop.notices[0].pod_group, "ml/nb");
  ASSERT_TRUE(run.enforcer.standing().contains("ml/nb"));
  PodGroupProgress progress;
  progress.limits = run.enforcer.standing();
  auto snapshot = build_snapshot(run.observed, run.memory, kStart + 60);
  ASSERT_TRUE(snapshot.ok());
  const json status = pod_group_status(*run.observed.pod_groups.at("ml/nb"), *snapshot, progress, kStart + 60);
  ASSERT_EQ(status["conditions"].size(), 2u);
  const json& condition = status["conditions"][1];
  EXPECT_EQ(condition["type"], "WorkLimit");
  EXPECT_EQ(condition["status"], "True");
  EXPECT_EQ(condition["reason"], "LimitStopped");
  EXPECT_EQ(condition["message"], "idle for 1 min (limit 1 min, GPU utilisation under 5%): stopped");
}

TEST(LimitEnforcer, PrometheusGoingAwayPausesIdleTimeAndEndsNothing) {
  auto prometheus = std::make_unique<FakePrometheus>();
  prometheus->set({{"ml", "nb-0", "0"}});
  LimitsRun run(prometheus->url());
  run.review(kStart);
  run.review(kStart + 40);  // 40 s idle
  prometheus->stop();       // Prometheus is gone
  for (double at = kStart + 50; at <= kStart + 300; at += 10) {
    const LimitActions actions = run.review(at);
    EXPECT_TRUE(actions.delete_pods.empty()) << at;
    EXPECT_TRUE(actions.notices.empty()) << at;
  }
  ASSERT_FALSE(run.log.empty());
  EXPECT_NE(run.log.back().find("GPU utilisation unavailable"), std::string::npos) << run.log.back();
  EXPECT_NE(run.log.back().find("idle time does not accrue until it is back"), std::string::npos);
  const std::string metrics = run.metrics.render();
  EXPECT_NE(metrics.find("tessera_gpu_telemetry_up 0"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tessera_workload_idle_seconds{workload=\"ml/nb-0\"} 40"), std::string::npos) << metrics;
}

TEST(LimitEnforcer, WithoutPrometheusIdleDetectionIsOffAndSaysSo) {
  LimitsRun run("");
  EXPECT_EQ(run.enforcer.describe(),
            "idle detection: off (no --prometheus-url): idle-GPU limits do not act; maximum runtimes do");
  for (double at = kStart; at <= kStart + 600; at += 60) EXPECT_TRUE(run.review(at).delete_pods.empty());
}

}  // namespace
}  // namespace tessera::adapter
