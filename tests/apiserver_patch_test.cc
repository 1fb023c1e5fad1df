// PATCH in its three formats: JSON merge patch, JSON patch and strategic merge patch.
#include <gtest/gtest.h>

#include "apiserver/patches.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

TEST(StrategicMergeTest, MergesContainersByName) {
  const json original = {{"spec",
                          {{"containers",
                            {{{"name", "a"}, {"image", "a:1"}, {"env", {{{"name", "X"}, {"value", "1"}}}}},
                             {{"name", "b"}, {"image", "b:1"}}}}}}};
  const json patch = {{"spec",
                       {{"containers",
                         {{{"name", "a"}, {"image", "a:2"}, {"env", {{{"name", "Y"}, {"value", "2"}}}}},
                          {{"name", "c"}, {"image", "c:1"}}}}}}};
  const json merged = strategic_merge(original, patch);
  const json& containers = merged["spec"]["containers"];
  ASSERT_EQ(containers.size(), 3u);
  EXPECT_EQ(containers[0]["image"], "a:2");
  EXPECT_EQ(containers[0]["env"].size(), 2u);  // env merges by name too
  EXPECT_EQ(containers[1]["name"], "b");
  EXPECT_EQ(containers[2]["name"], "c");
}

TEST(StrategicMergeTest, Directives) {
  const json original = {{"metadata", {{"finalizers", {"a"}}, {"labels", {{"x", "1"}, {"y", "2"}}}}},
                         {"spec",
                          {{"containers", {{{"name", "a"}, {"image", "a:1"}}, {{"name", "b"}, {"image", "b:1"}}}},
                           {"tolerations", {{{"key", "k"}}}},
                           {"nodeSelector", {{"zone", "1"}, {"rack", "2"}}}}}};
  const json patch = {{"metadata", {{"finalizers", {"b"}}, {"labels", {{"x", nullptr}}}}},
                      {"spec",
                       {{"containers", {{{"name", "a"}, {"$patch", "delete"}}}},
                        {"tolerations", {{{"key", "other"}}}},
                        {"nodeSelector", {{"$patch", "replace"}, {"zone", "9"}}},
                        {"$setElementOrder/containers", {{{"name", "b"}}}}}}};
  const json merged = strategic_merge(original, patch);
  EXPECT_EQ(merged["metadata"]["finalizers"], json({"a", "b"}));  // finalizers merge as a set
  EXPECT_EQ(merged["metadata"]["labels"], json({{"y", "2"}}));
  EXPECT_EQ(merged["spec"]["containers"], json({{{"name", "b"}, {"image", "b:1"}}}));
  EXPECT_EQ(merged["spec"]["tolerations"], json({{{"key", "other"}}}));  // no merge key: replaced
  EXPECT_EQ(merged["spec"]["nodeSelector"], json({{"zone", "9"}}));
  EXPECT_FALSE(merged["spec"].contains("$setElementOrder/containers"));
}

TEST(StrategicMergeTest, ConditionsMergeByType) {
  const json original = {
      {"status",
       {{"conditions", {{{"type", "Ready"}, {"status", "False"}}, {{"type", "PodScheduled"}, {"status", "True"}}}}}}};
  const json merged =
      strategic_merge(original, {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  EXPECT_EQ(merged["status"]["conditions"].size(), 2u);
  EXPECT_EQ(merged["status"]["conditions"][0]["status"], "True");
}

TEST(PatchTest, JsonPatchErrors) {
  EXPECT_EQ(apply_patch({{"a", 1}}, PatchType::kJson, R"([{"op":"test","path":"/a","value":2}])").error().code, 422);
  EXPECT_EQ(apply_patch({{"a", 1}}, PatchType::kJson, R"({"a":2})").error().code, 400);
  EXPECT_EQ(apply_patch({{"a", 1}}, PatchType::kMerge, "{not json").error().code, 400);
}

class PatchHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json pod = pod_manifest("a", {{"app", "web"}, {"tier", "front"}});
    pod["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "proxy:1"}});
    created = client.post("/api/v1/namespaces/default/pods", pod).body;
  }
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
  json created;
  const std::string path = "/api/v1/namespaces/default/pods/a";
};

TEST_F(PatchHttpTest, MergePatch) {
  Reply patched =
      client.patch(path, R"({"metadata":{"labels":{"tier":null,"new":"yes"}}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["metadata"]["labels"], json({{"app", "web"}, {"new", "yes"}}));
  EXPECT_NE(patched.body["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
}

TEST_F(PatchHttpTest, JsonPatch) {
  Reply patched = client.patch(
      path,
      R"([{"op":"add","path":"/metadata/annotations","value":{"k":"v"}},{"op":"replace","path":"/spec/containers/1/image","value":"proxy:2"}])",
      "application/json-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.raw;
  EXPECT_EQ(patched.body["metadata"]["annotations"]["k"], "v");
  EXPECT_EQ(patched.body["spec"]["containers"][1]["image"], "proxy:2");
  Reply failed =
      client.patch(path, R"([{"op":"test","path":"/metadata/name","value":"b"}])", "application/json-patch+json");
  EXPECT_EQ(failed.status, 422);
}

TEST_F(PatchHttpTest, StrategicMergePatchKeepsOtherContainers) {
  Reply patched = client.patch(path, R"({"spec":{"containers":[{"name":"main","image":"busybox:1.37"}]}})",
                               "application/strategic-merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.raw;
  ASSERT_EQ(patched.body["spec"]["containers"].size(), 2u);
  EXPECT_EQ(patched.body["spec"]["containers"][0]["image"], "busybox:1.37");
  EXPECT_EQ(patched.body["spec"]["containers"][1]["image"], "proxy:1");
}

TEST_F(PatchHttpTest, StaleResourceVersionInPatchIsConflict) {
  client.patch(path, R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json");
  const std::string stale = created["metadata"]["resourceVersion"];
  Reply conflict =
      client.patch(path, fmt::format(R"({{"metadata":{{"resourceVersion":"{}","labels":{{"x":"2"}}}}}})", stale),
                   "application/merge-patch+json");
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.body["reason"], "Conflict");
}

TEST_F(PatchHttpTest, StatusPatchOnlyTouchesStatus) {
  Reply patched = client.patch(path + "/status", R"({"metadata":{"labels":{"x":"1"}},"status":{"phase":"Running"}})",
                               "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200);
  EXPECT_EQ(patched.body["status"]["phase"], "Running");
  EXPECT_FALSE(patched.body["metadata"]["labels"].contains("x"));
  Reply main = client.patch(path, R"({"status":{"phase":"Failed"}})", "application/merge-patch+json");
  EXPECT_EQ(main.body["status"]["phase"], "Running");
}

TEST_F(PatchHttpTest, UnknownPatchTypeIsUnsupportedMediaType) {
  Reply reply = client.patch(path, "{}", "application/json");
  EXPECT_EQ(reply.status, 415);
  EXPECT_EQ(reply.body["reason"], "UnsupportedMediaType");
  EXPECT_EQ(client.patch("/api/v1/namespaces/default/pods/nope", "{}", "application/merge-patch+json").status, 404);
}

}  // namespace
}  // namespace tessera::apiserver::testing
