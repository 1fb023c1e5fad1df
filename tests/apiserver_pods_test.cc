// The pod subresources a scheduler uses: binding and eviction (with PodDisruptionBudgets).
#include <gtest/gtest.h>

#include "apiserver_test_support.h"
#include "wire/timestamp.h"

namespace tessera::apiserver::testing {
namespace {

json eviction(const std::string& pod, const std::string& api_version = "policy/v1") {
  return {{"apiVersion", api_version}, {"kind", "Eviction"}, {"metadata", {{"name", pod}, {"namespace", "default"}}}};
}

class PodsTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};

  // A pod as a kubelet reports it once it runs: Running and Ready.
  void make_running(const std::string& name, const json& labels) {
    ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest(name, labels)).status, 201);
    ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/" + name + "/binding", binding(name, "node-1")).status, 201);
    Reply status = client.patch("/api/v1/namespaces/default/pods/" + name + "/status",
                                R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})",
                                "application/strategic-merge-patch+json");
    ASSERT_EQ(status.status, 200) << status.raw;
  }
};

TEST_F(PodsTest, BindingSetsTheNodeOnce) {
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  Reply bound = client.post("/api/v1/namespaces/default/pods/a/binding", binding("a", "node-1"));
  EXPECT_EQ(bound.status, 201);
  EXPECT_EQ(bound.body, json({{"kind", "Status"},
                              {"apiVersion", "v1"},
                              {"metadata", json::object()},
                              {"status", "Success"},
                              {"code", 201}}));
  Reply pod = client.get("/api/v1/namespaces/default/pods/a");
  EXPECT_EQ(pod.body["spec"]["nodeName"], "node-1");
  const json& conditions = pod.body["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["type"], "PodScheduled");
  EXPECT_EQ(conditions[0]["status"], "True");

  Reply again = client.post("/api/v1/namespaces/default/pods/a/binding", binding("a", "node-2"));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body["reason"], "Conflict");
  EXPECT_EQ(again.body["message"],
            "Operation cannot be fulfilled on pods/binding \"a\": pod a is already assigned to node \"node-1\"");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a").body["spec"]["nodeName"], "node-1");
}

TEST_F(PodsTest, BindingCopiesAnnotationsAndSchedulesInOneChange) {
  json pod = pod_manifest("a");
  pod["metadata"]["annotations"] = {{"kept", "yes"}, {"replaced", "old"}};
  Reply created = client.post("/api/v1/namespaces/default/pods", pod);
  ASSERT_EQ(created.status, 201);
  const std::string version = created.body["metadata"]["resourceVersion"];
  json bind = binding("a", "node-1");
  bind["metadata"]["annotations"] = {{"replaced", "new"}, {"scheduling.tessera.dev/placed-by", "tessera"}};
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/a/binding", bind).status, 201);

  // One change carries the node, the annotations and the condition, as on the real server.
  std::vector<json> events = client.watch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + version,
                                          [](const std::vector<json>& seen) { return !seen.empty(); });
  ASSERT_EQ(events.size(), 1u);
  const json& bound = events[0]["object"];
  EXPECT_EQ(events[0]["type"], "MODIFIED");
  EXPECT_EQ(bound["spec"]["nodeName"], "node-1");
  EXPECT_EQ(bound["metadata"]["annotations"],
            json({{"kept", "yes"}, {"replaced", "new"}, {"scheduling.tessera.dev/placed-by", "tessera"}}));
  ASSERT_EQ(bound["status"]["conditions"].size(), 1u);
  const json& scheduled = bound["status"]["conditions"][0];
  EXPECT_EQ(scheduled["type"], "PodScheduled");
  EXPECT_EQ(scheduled["status"], "True");
  ASSERT_TRUE(scheduled["lastTransitionTime"].is_string());
  EXPECT_TRUE(wire::parse_time_point(scheduled["lastTransitionTime"].get<std::string>()).ok());
}

TEST_F(PodsTest, BindingErrors) {
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/missing/binding", binding("missing", "n")).status, 404);
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/a/binding", binding("b", "n")).status, 400);
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/a/binding", binding("a", "")).status, 422);
  // The legacy bindings collection binds the pod its body names.
  EXPECT_EQ(client.post("/api/v1/namespaces/default/bindings", binding("a", "node-3")).status, 201);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a").body["spec"]["nodeName"], "node-3");
}

TEST_F(PodsTest, EvictionWithoutBudgetDeletes) {
  make_running("a", {{"app", "web"}});
  Reply evicted = client.post("/api/v1/namespaces/default/pods/a/eviction", eviction("a"));
  EXPECT_EQ(evicted.status, 201) << evicted.raw;
  EXPECT_EQ(evicted.body["status"], "Success");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a").status, 404);
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/a/eviction", eviction("a")).status, 404);
}

TEST_F(PodsTest, EvictionRespectsTheDisruptionBudget) {
  for (const char* name : {"a", "b", "c"}) make_running(name, {{"app", "web"}});
  Reply budget = client.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                             {{"metadata", {{"name", "web-pdb"}}},
                              {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "web"}}}}}}}});
  ASSERT_EQ(budget.status, 201) << budget.raw;

  Reply first = client.post("/api/v1/namespaces/default/pods/a/eviction", eviction("a"));
  EXPECT_EQ(first.status, 201) << first.raw;
  Reply second = client.post("/api/v1/namespaces/default/pods/b/eviction", eviction("b", "policy/v1beta1"));
  EXPECT_EQ(second.status, 429);
  EXPECT_EQ(second.body["reason"], "TooManyRequests");
  EXPECT_EQ(second.body["message"], "Cannot evict pod as it would violate the pod's disruption budget.");
  ASSERT_EQ(second.body["details"]["causes"].size(), 1u);
  EXPECT_EQ(second.body["details"]["causes"][0]["reason"], "DisruptionBudget");
  EXPECT_EQ(second.body["details"]["causes"][0]["message"],
            "The disruption budget web-pdb needs 2 healthy pods and has 2 currently");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/b").status, 200);
  // The budget's status records the spent disruption.
  Reply recorded = client.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-pdb");
  EXPECT_EQ(recorded.body["status"]["disruptionsAllowed"], 0);
  EXPECT_EQ(recorded.body["status"]["currentHealthy"], 2);

  // A pod the budget does not select is not protected by it.
  make_running("other", {{"app", "db"}});
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/other/eviction", eviction("other")).status, 201);
  // Nor is a pending pod.
  client.post("/api/v1/namespaces/default/pods", pod_manifest("pending", {{"app", "web"}}));
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/pending/eviction", eviction("pending")).status, 201);
}

TEST_F(PodsTest, MinAvailablePercent) {
  for (const char* name : {"a", "b", "c", "d"}) make_running(name, {{"app", "web"}});
  client.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets",
              {{"metadata", {{"name", "pdb"}}},
               {"spec", {{"minAvailable", "75%"}, {"selector", {{"matchLabels", {{"app", "web"}}}}}}}});
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/a/eviction", eviction("a")).status, 201);
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/b/eviction", eviction("b")).status, 429);
}

TEST_F(PodsTest, EvictionNameMustMatch) {
  make_running("a", {});
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods/a/eviction", eviction("b")).status, 400);
}

}  // namespace
}  // namespace tessera::apiserver::testing
