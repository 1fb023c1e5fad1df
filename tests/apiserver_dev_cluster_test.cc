// The dev cluster: nodes from a cluster file, Tessera's CRDs preinstalled, and simulated kubelets
// that start bound pods, complete them after their duration and remove deleted ones.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "apiserver/dev_cluster.h"
#include "apiserver/kubeconfig_writer.h"
#include "apiserver/node_objects.h"
#include "apiserver_test_support.h"
#include "sim/scenario_loader.h"

namespace tessera::apiserver::testing {
namespace {

DevClusterOptions dev_options() {
  DevClusterOptions options;
  options.server = plain_options();
  options.nodes = load_cluster(std::string(TESSERA_SOURCE_DIR) + "/clusters/dev-cluster.yaml").value();
  options.kubelet_options.pod_start_delay = std::chrono::milliseconds(100);
  options.kubelet_options.termination_delay = std::chrono::milliseconds(200);
  return options;
}

std::string phase(TestClient& client, const std::string& pod) {
  Reply reply = client.get("/api/v1/namespaces/default/pods/" + pod);
  return reply.status == 404 ? "Gone" : reply.body["status"].value("phase", "");
}

TEST(DevClusterTest, NodesComeFromTheClusterFile) {
  DevCluster cluster(dev_options());
  ASSERT_TRUE(cluster.start().ok());
  TestClient client(cluster.server());
  Reply nodes = client.get("/api/v1/nodes");
  ASSERT_EQ(nodes.body["items"].size(), 7u);
  EXPECT_EQ(cluster.node_count(), 7u);
  Reply a100 = client.get("/api/v1/nodes/a100-0");
  const json& status = a100.body["status"];
  EXPECT_EQ(status["capacity"]["cpu"], "64");
  EXPECT_EQ(status["capacity"]["memory"], "512Gi");
  EXPECT_EQ(status["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(status["allocatable"]["pods"], "110");
  const json& labels = a100.body["metadata"]["labels"];
  EXPECT_EQ(labels["nvidia.com/gpu.product"], "A100");
  EXPECT_EQ(labels["nvidia.com/gpu.memory"], "81920");
  EXPECT_EQ(labels["nvidia.com/gpu.count"], "8");
  EXPECT_EQ(labels["kubernetes.io/hostname"], "a100-0");
  EXPECT_EQ(labels["rack"], "r1");
  bool ready = false;
  for (const json& condition : status["conditions"])
    ready = ready || (condition["type"] == "Ready" && condition["status"] == "True");
  EXPECT_TRUE(ready);
  Reply h100 = client.get("/api/v1/nodes/h100-1");
  EXPECT_EQ(h100.body["spec"]["taints"][0],
            json({{"key", "dedicated"}, {"value", "inference"}, {"effect", "NoSchedule"}}));
  Reply cpu = client.get("/api/v1/nodes/cpu");
  EXPECT_FALSE(cpu.body["status"]["capacity"].contains("nvidia.com/gpu"));
  EXPECT_EQ(client.get("/apis/scheduling.tessera.dev/v1alpha1/queues").status, 200);
  EXPECT_EQ(client.get("/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/podgroups").status, 200);
}

TEST(DevClusterTest, BadClusterFileIsAnErrorNamingIt) {
  auto nodes = load_cluster("/nonexistent/cluster.yaml");
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.error().message.find("/nonexistent/cluster.yaml"), std::string::npos);
}

TEST(DevClusterTest, KubeletRunsCompletesAndRemovesPods) {
  DevCluster cluster(dev_options());
  ASSERT_TRUE(cluster.start().ok());
  TestClient client(cluster.server());
  json pod = pod_manifest("short");
  pod["metadata"]["annotations"]["scheduling.tessera.dev/duration"] = "1s";
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("long")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("unbound")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("lost")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/short/binding", binding("short", "a100-0")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/long/binding", binding("long", "h100-1")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/lost/binding", binding("lost", "no-such-node")).status, 201);

  ASSERT_TRUE(eventually([&] { return phase(client, "long") == "Running"; }));
  Reply running = client.get("/api/v1/namespaces/default/pods/long");
  const json& status = running.body["status"];
  EXPECT_EQ(status["hostIP"], node_internal_ip(5));
  EXPECT_FALSE(status["podIP"].get<std::string>().empty());
  EXPECT_FALSE(status["startTime"].get<std::string>().empty());
  EXPECT_EQ(status["containerStatuses"][0]["ready"], true);
  EXPECT_TRUE(status["containerStatuses"][0]["state"].contains("running"));
  std::set<std::string> true_conditions;
  for (const json& condition : status["conditions"]) {
    if (condition["status"] == "True") true_conditions.insert(condition["type"]);
  }
  EXPECT_EQ(true_conditions, (std::set<std::string>{"PodScheduled", "Initialized", "ContainersReady", "Ready"}));

  ASSERT_TRUE(eventually([&] { return phase(client, "short") == "Succeeded"; }));
  Reply done = client.get("/api/v1/namespaces/default/pods/short");
  EXPECT_EQ(done.body["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
  EXPECT_EQ(phase(client, "unbound"), "Pending");
  EXPECT_EQ(phase(client, "lost"), "Pending");  // its node does not exist: no kubelet runs it

  // A running pod is deleted gracefully: marked, then removed by its kubelet.
  Reply deleted = client.del("/api/v1/namespaces/default/pods/long");
  EXPECT_EQ(deleted.status, 202);
  EXPECT_TRUE(deleted.body["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(deleted.body["metadata"]["deletionGracePeriodSeconds"], 30);
  ASSERT_TRUE(eventually([&] { return phase(client, "long") == "Gone"; }));
  // Pods that do not run go at once.
  EXPECT_EQ(client.del("/api/v1/namespaces/default/pods/unbound").status, 200);
  EXPECT_EQ(client.del("/api/v1/namespaces/default/pods/short").status, 200);
}

TEST(DevClusterTest, WatchSeesTheLifecycleInOrder) {
  DevCluster cluster(dev_options());
  ASSERT_TRUE(cluster.start().ok());
  TestClient client(cluster.server());
  Reply created = client.post("/api/v1/namespaces/default/pods", pod_manifest("p"));
  const std::string version = created.body["metadata"]["resourceVersion"];
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/p/binding", binding("p", "a100-1")).status, 201);
  ASSERT_TRUE(eventually([&] { return phase(client, "p") == "Running"; }));
  ASSERT_EQ(client.del("/api/v1/namespaces/default/pods/p").status, 202);
  std::vector<json> events =
      client.watch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + version,
                   [](const std::vector<json>& seen) { return !seen.empty() && seen.back()["type"] == "DELETED"; });
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["object"]["spec"]["nodeName"], "a100-1");                // bound
  EXPECT_EQ(events[1]["object"]["status"]["phase"], "Running");                // started
  EXPECT_TRUE(events[2]["object"]["metadata"].contains("deletionTimestamp"));  // terminating
  EXPECT_EQ(events[3]["type"], "DELETED");
}

TEST(DevClusterTest, KubeletKeepsTheConditionTheBindingSet) {
  DevCluster cluster(dev_options());
  ASSERT_TRUE(cluster.start().ok());
  TestClient client(cluster.server());
  client.post("/api/v1/namespaces/default/pods", pod_manifest("p"));
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods/p/binding", binding("p", "a100-1")).status, 201);
  auto conditions_of = [&](const std::string& type) {
    std::vector<json> found;
    const Reply pod = client.get("/api/v1/namespaces/default/pods/p");  // outlives the loop
    for (const json& condition : pod.body["status"]["conditions"]) {
      if (condition["type"] == type) found.push_back(condition);
    }
    return found;
  };
  // Scheduled by the binding itself, before any kubelet acts.
  const std::vector<json> at_binding = conditions_of("PodScheduled");
  ASSERT_EQ(at_binding.size(), 1u);
  EXPECT_EQ(at_binding[0]["status"], "True");
  ASSERT_TRUE(eventually([&] { return phase(client, "p") == "Running"; }));
  const std::vector<json> running = conditions_of("PodScheduled");
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0]["status"], "True");
  EXPECT_EQ(running[0]["lastTransitionTime"], at_binding[0]["lastTransitionTime"]);
  EXPECT_EQ(conditions_of("Ready").size(), 1u);
}

TEST(DevClusterTest, EvictionIsGracefulToo) {
  DevCluster cluster(dev_options());
  ASSERT_TRUE(cluster.start().ok());
  TestClient client(cluster.server());
  client.post("/api/v1/namespaces/default/pods", pod_manifest("p"));
  client.post("/api/v1/namespaces/default/pods/p/binding", binding("p", "a100-1"));
  ASSERT_TRUE(eventually([&] { return phase(client, "p") == "Running"; }));
  Reply evicted = client.post("/api/v1/namespaces/default/pods/p/eviction",
                              {{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", "p"}}}});
  EXPECT_EQ(evicted.status, 201);
  EXPECT_TRUE(client.get("/api/v1/namespaces/default/pods/p").body["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(eventually([&] { return phase(client, "p") == "Gone"; }));
}

TEST(KubeconfigTest, WritesClusterUserAndContext) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / fmt::format("kubeconfig-test-{}", getpid());
  std::filesystem::create_directories(directory);
  const std::string path = (directory / "config").string();
  KubeconfigContents contents;
  contents.server_url = "https://127.0.0.1:6443";
  contents.ca_certificate_pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  contents.token = "t0k3n";
  ASSERT_TRUE(write_kubeconfig(path, contents).ok());
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("current-context: tessera-dev"), std::string::npos);
  EXPECT_NE(text.find("server: https://127.0.0.1:6443"), std::string::npos);
  EXPECT_NE(text.find("token: t0k3n"), std::string::npos);
  EXPECT_NE(text.find("certificate-authority-data: LS0tLS1CRUdJTi"), std::string::npos);
  EXPECT_NE(text.find("namespace: default"), std::string::npos);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tessera::apiserver::testing
