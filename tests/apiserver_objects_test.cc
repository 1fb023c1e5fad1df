// The API's object semantics over HTTP: create, get, update with optimistic concurrency, the
// status subresource, generation, generateName, namespaces, and the Status bodies of failures.
#include <gtest/gtest.h>

#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

class ObjectsTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
};

TEST_F(ObjectsTest, CreateFillsMetadataAndDefaults) {
  Reply created = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  ASSERT_EQ(created.status, 201) << created.raw;
  const json& metadata = created.body["metadata"];
  EXPECT_EQ(metadata["name"], "a");
  EXPECT_EQ(metadata["namespace"], "default");
  EXPECT_EQ(metadata["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(metadata["generation"], 1);
  EXPECT_TRUE(metadata["creationTimestamp"].get<std::string>().ends_with("Z"));
  EXPECT_FALSE(metadata["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(created.body["status"]["phase"], "Pending");
  EXPECT_EQ(created.body["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(created.body["spec"]["priority"], 0);

  Reply fetched = client.get("/api/v1/namespaces/default/pods/a");
  ASSERT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, created.body);
}

TEST_F(ObjectsTest, ResourceVersionsFollowOneCounter) {
  Reply first = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  Reply second =
      client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}, {"data", {{"k", "v"}}}});
  const uint64_t one = std::stoull(first.body["metadata"]["resourceVersion"].get<std::string>());
  const uint64_t two = std::stoull(second.body["metadata"]["resourceVersion"].get<std::string>());
  EXPECT_EQ(two, one + 1);
  EXPECT_EQ(second.body["kind"], "ConfigMap");
  EXPECT_EQ(second.body["apiVersion"], "v1");
}

TEST_F(ObjectsTest, CreatingTwiceIsAlreadyExists) {
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("a")).status, 201);
  Reply again = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body["kind"], "Status");
  EXPECT_EQ(again.body["apiVersion"], "v1");
  EXPECT_EQ(again.body["status"], "Failure");
  EXPECT_EQ(again.body["reason"], "AlreadyExists");
  EXPECT_EQ(again.body["message"], "pods \"a\" already exists");
  EXPECT_EQ(again.body["details"], json({{"name", "a"}, {"kind", "pods"}}));
  EXPECT_EQ(again.body["code"], 409);
}

TEST_F(ObjectsTest, MissingObjectIsNotFound) {
  Reply missing = client.get("/api/v1/namespaces/default/pods/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body["reason"], "NotFound");
  EXPECT_EQ(missing.body["message"], "pods \"nope\" not found");
  EXPECT_EQ(client.del("/api/v1/namespaces/default/pods/nope").status, 404);
  EXPECT_EQ(client.put("/api/v1/namespaces/default/pods/nope", pod_manifest("nope")).status, 404);
}

TEST_F(ObjectsTest, CreatingInAMissingNamespaceIsNotFound) {
  Reply created = client.post("/api/v1/namespaces/ghost/pods", pod_manifest("a"));
  EXPECT_EQ(created.status, 404);
  EXPECT_EQ(created.body["message"], "namespaces \"ghost\" not found");
  EXPECT_EQ(created.body["details"]["kind"], "namespaces");
}

TEST_F(ObjectsTest, StaleUpdateIsConflict) {
  Reply created =
      client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}, {"data", {{"k", "1"}}}});
  json first = created.body;
  json second = created.body;
  first["data"]["k"] = "2";
  Reply updated = client.put("/api/v1/namespaces/default/configmaps/c", first);
  ASSERT_EQ(updated.status, 200) << updated.raw;
  EXPECT_NE(updated.body["metadata"]["resourceVersion"], created.body["metadata"]["resourceVersion"]);

  second["data"]["k"] = "3";  // still carries the first resourceVersion
  Reply stale = client.put("/api/v1/namespaces/default/configmaps/c", second);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.body["reason"], "Conflict");
  EXPECT_EQ(stale.body["message"],
            "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your "
            "changes to the latest version and try again");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/configmaps/c").body["data"]["k"], "2");

  // Without a resourceVersion the update is unconditional.
  second["metadata"].erase("resourceVersion");
  EXPECT_EQ(client.put("/api/v1/namespaces/default/configmaps/c", second).status, 200);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/configmaps/c").body["data"]["k"], "3");
}

TEST_F(ObjectsTest, UnchangedUpdateKeepsTheResourceVersion) {
  Reply created =
      client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}, {"data", {{"k", "1"}}}});
  Reply same = client.put("/api/v1/namespaces/default/configmaps/c", created.body);
  ASSERT_EQ(same.status, 200);
  EXPECT_EQ(same.body["metadata"]["resourceVersion"], created.body["metadata"]["resourceVersion"]);
}

TEST_F(ObjectsTest, NameInBodyMustMatchTheUrl) {
  Reply created = client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}});
  json renamed = created.body;
  renamed["metadata"]["name"] = "d";
  Reply update = client.put("/api/v1/namespaces/default/configmaps/c", renamed);
  EXPECT_EQ(update.status, 400);
  EXPECT_EQ(update.body["reason"], "BadRequest");
}

TEST_F(ObjectsTest, GenerateNameMakesUniqueNames) {
  json pod = pod_manifest("");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "worker-";
  Reply one = client.post("/api/v1/namespaces/default/pods", pod);
  Reply two = client.post("/api/v1/namespaces/default/pods", pod);
  ASSERT_EQ(one.status, 201);
  ASSERT_EQ(two.status, 201);
  const std::string a = one.body["metadata"]["name"];
  const std::string b = two.body["metadata"]["name"];
  EXPECT_TRUE(a.starts_with("worker-") && a.size() == 12) << a;
  EXPECT_NE(a, b);
}

TEST_F(ObjectsTest, InvalidNamesAndMissingFieldsAreInvalid) {
  Reply bad_name = client.post("/api/v1/namespaces/default/pods", pod_manifest("Bad_Name"));
  EXPECT_EQ(bad_name.status, 422);
  EXPECT_EQ(bad_name.body["reason"], "Invalid");
  EXPECT_EQ(bad_name.body["details"]["causes"][0]["field"], "metadata.name");

  json no_containers = pod_manifest("p");
  no_containers["spec"]["containers"] = json::array();
  Reply invalid = client.post("/api/v1/namespaces/default/pods", no_containers);
  EXPECT_EQ(invalid.status, 422);
  EXPECT_EQ(invalid.body["message"], "Pod \"p\" is invalid: spec.containers: Required value");

  json nameless = pod_manifest("");
  nameless["metadata"].erase("name");
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods", nameless).status, 422);
}

TEST_F(ObjectsTest, LabelsAreValidatedAsOnTheRealServer) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  const std::string long_value(64, 'v');
  Reply too_long = client.post(pods, pod_manifest("a", {{"app", long_value}}));
  EXPECT_EQ(too_long.status, 422);
  EXPECT_EQ(too_long.body["reason"], "Invalid");
  EXPECT_EQ(too_long.body["message"], fmt::format("Pod \"a\" is invalid: metadata.labels: Invalid value: \"{}\": must "
                                                  "be no more than 63 characters",
                                                  long_value));
  EXPECT_EQ(too_long.body["details"]["causes"][0],
            json({{"reason", "FieldValueInvalid"},
                  {"message", fmt::format("Invalid value: \"{}\": must be no more than 63 characters", long_value)},
                  {"field", "metadata.labels"}}));

  Reply bad_value = client.post(pods, pod_manifest("a", {{"app", "two words"}}));
  EXPECT_EQ(bad_value.status, 422);
  EXPECT_EQ(bad_value.body["message"],
            "Pod \"a\" is invalid: metadata.labels: Invalid value: \"two words\": a valid label must be an empty "
            "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");

  Reply bad_key = client.post(pods, pod_manifest("a", {{"-app", "x"}}));
  EXPECT_EQ(bad_key.status, 422);
  EXPECT_EQ(bad_key.body["message"],
            "Pod \"a\" is invalid: metadata.labels: Invalid value: \"-app\": name part must consist of alphanumeric "
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  Reply long_key = client.post(pods, pod_manifest("a", {{std::string(64, 'k'), "x"}}));
  EXPECT_NE(long_key.body.value("message", "").find("name part must be no more than 63 characters"), std::string::npos);
  Reply bad_prefix = client.post(pods, pod_manifest("a", {{"Example.com/app", "x"}}));
  EXPECT_NE(bad_prefix.body.value("message", "").find("prefix part a lowercase RFC 1123 subdomain"), std::string::npos);
  Reply two_slashes = client.post(pods, pod_manifest("a", {{"a/b/c", "x"}}));
  EXPECT_EQ(two_slashes.status, 422);
  // Both problems of one value, as the real server lists them.
  Reply both = client.post(pods, pod_manifest("a", {{"app", std::string(64, '-')}}));
  EXPECT_EQ(both.body["details"]["causes"].size(), 2u);

  Reply fine = client.post(pods, pod_manifest("a", {{"example.com/app", "My_value-1.2"}, {"empty", ""}}));
  EXPECT_EQ(fine.status, 201) << fine.raw;
}

TEST_F(ObjectsTest, AnnotationsAreValidatedAsOnTheRealServer) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  json bad_key = pod_manifest("a");
  bad_key["metadata"]["annotations"] = {{"not a key", "x"}};
  Reply refused = client.post(pods, bad_key);
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.body["details"]["causes"][0]["field"], "metadata.annotations");
  EXPECT_NE(refused.body.value("message", "").find("metadata.annotations: Invalid value: \"not a key\": name part"),
            std::string::npos);

  json too_big = pod_manifest("a");
  too_big["metadata"]["annotations"] = {{"big", std::string(262144 - 2, 'x')}};  // 262145 bytes with the key
  Reply too_long = client.post(pods, too_big);
  EXPECT_EQ(too_long.status, 422);
  EXPECT_EQ(too_long.body["message"], "Pod \"a\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes");
  EXPECT_EQ(too_long.body["details"]["causes"][0]["reason"], "FieldValueTooLong");

  // At the limit, and keys whose case does not matter, are fine; values are free text.
  const std::string key = "Example.COM/Some-Key";
  const std::string text = "any text: {\"at\": all}";
  json at_limit = pod_manifest("a");
  at_limit["metadata"]["annotations"] = {{key, text},
                                         {"big", std::string(262144 - key.size() - text.size() - 3, 'x')}};
  Reply fine = client.post(pods, at_limit);
  EXPECT_EQ(fine.status, 201) << fine.raw.substr(0, 300);
}

TEST_F(ObjectsTest, UpdatesAndPatchesAreValidatedToo) {
  const std::string pod = "/api/v1/namespaces/default/pods/a";
  Reply created = client.post("/api/v1/namespaces/default/pods", pod_manifest("a", {{"app", "web"}}));
  ASSERT_EQ(created.status, 201);
  json updated = created.body;
  updated["metadata"]["labels"]["app"] = "not valid!";
  EXPECT_EQ(client.put(pod, updated).status, 422);
  const std::string long_value(64, 'v');
  for (const auto& [body, content_type] : std::vector<std::pair<std::string, std::string>>{
           {R"({"metadata":{"labels":{"app":")" + long_value + R"("}}})", "application/merge-patch+json"},
           {R"({"metadata":{"labels":{"app":")" + long_value + R"("}}})", "application/strategic-merge-patch+json"},
           {R"([{"op":"add","path":"/metadata/annotations","value":{"bad key":"x"}}])", "application/json-patch+json"}}) {
    Reply patched = client.patch(pod, body, content_type);
    EXPECT_EQ(patched.status, 422) << content_type << ": " << patched.raw;
    EXPECT_EQ(patched.body["reason"], "Invalid");
  }
  Reply current = client.get(pod);
  EXPECT_EQ(current.body["metadata"]["labels"], json({{"app", "web"}}));
  EXPECT_FALSE(current.body["metadata"].contains("annotations"));
  EXPECT_EQ(current.body["metadata"]["resourceVersion"], created.body["metadata"]["resourceVersion"]);
}

TEST_F(ObjectsTest, StatusSubresourceIsIsolated) {
  Reply created = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  json with_status = created.body;
  with_status["status"]["phase"] = "Running";
  with_status["metadata"]["labels"]["changed"] = "yes";

  // The main endpoint ignores status changes...
  Reply main = client.put("/api/v1/namespaces/default/pods/a", with_status);
  ASSERT_EQ(main.status, 200) << main.raw;
  EXPECT_EQ(main.body["status"]["phase"], "Pending");
  EXPECT_EQ(main.body["metadata"]["labels"]["changed"], "yes");

  // ...and the status endpoint changes nothing else.
  json status_update = main.body;
  status_update["status"]["phase"] = "Running";
  status_update["metadata"]["labels"]["changed"] = "again";
  Reply status = client.put("/api/v1/namespaces/default/pods/a/status", status_update);
  ASSERT_EQ(status.status, 200) << status.raw;
  EXPECT_EQ(status.body["status"]["phase"], "Running");
  EXPECT_EQ(status.body["metadata"]["labels"]["changed"], "yes");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a/status").body["status"]["phase"], "Running");
}

TEST_F(ObjectsTest, PodSpecIsImmutableExceptImages) {
  Reply created = client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  json moved = created.body;
  moved["spec"]["nodeName"] = "node-1";
  Reply update = client.put("/api/v1/namespaces/default/pods/a", moved);
  EXPECT_EQ(update.status, 422);
  json new_image = created.body;
  new_image["spec"]["containers"][0]["image"] = "busybox:1.37";
  EXPECT_EQ(client.put("/api/v1/namespaces/default/pods/a", new_image).status, 200);
}

TEST_F(ObjectsTest, GenerationCountsSpecChanges) {
  Reply created = client.post("/apis/apps/v1/namespaces/default/deployments",
                              {{"metadata", {{"name", "d"}}}, {"spec", {{"replicas", 1}}}});
  ASSERT_EQ(created.status, 201);
  json labelled = created.body;
  labelled["metadata"]["labels"]["a"] = "b";
  Reply metadata_only = client.put("/apis/apps/v1/namespaces/default/deployments/d", labelled);
  EXPECT_EQ(metadata_only.body["metadata"]["generation"], 1);
  json scaled = metadata_only.body;
  scaled["spec"]["replicas"] = 3;
  EXPECT_EQ(client.put("/apis/apps/v1/namespaces/default/deployments/d", scaled).body["metadata"]["generation"], 2);
}

TEST_F(ObjectsTest, ClusterScopedObjectsHaveNoNamespace) {
  Reply created = client.post("/api/v1/nodes", {{"metadata", {{"name", "n1"}, {"namespace", "default"}}}});
  ASSERT_EQ(created.status, 201);
  EXPECT_FALSE(created.body["metadata"].contains("namespace"));
  EXPECT_EQ(client.get("/api/v1/namespaces/default/nodes/n1").status, 404);
}

TEST_F(ObjectsTest, DefaultNamespacesExist) {
  for (const char* name : {"default", "kube-system", "kube-public", "tessera-system"}) {
    Reply ns = client.get(std::string("/api/v1/namespaces/") + name);
    EXPECT_EQ(ns.status, 200) << name;
    EXPECT_EQ(ns.body["status"]["phase"], "Active");
  }
  EXPECT_EQ(client.del("/api/v1/namespaces/default").status, 403);
}

TEST_F(ObjectsTest, DeletingANamespaceDeletesItsObjects) {
  ASSERT_EQ(client.post("/api/v1/namespaces", {{"metadata", {{"name", "team"}}}}).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/team/pods", pod_manifest("a")).status, 201);
  ASSERT_EQ(client.post("/api/v1/namespaces/team/configmaps", {{"metadata", {{"name", "c"}}}}).status, 201);
  EXPECT_EQ(client.del("/api/v1/namespaces/team").status, 200);
  EXPECT_EQ(client.get("/api/v1/namespaces/team").status, 404);
  EXPECT_EQ(client.get("/api/v1/namespaces/team/pods/a").status, 404);
  EXPECT_EQ(client.get("/api/v1/namespaces/team/configmaps").body["items"].size(), 0u);
}

TEST_F(ObjectsTest, DeleteReturnsTheObjectAndHonoursPreconditions) {
  Reply created = client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", "c"}}}});
  Reply wrong = client.del("/api/v1/namespaces/default/configmaps/c",
                           {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", {{"uid", "other"}}}});
  EXPECT_EQ(wrong.status, 409);
  Reply deleted = client.del("/api/v1/namespaces/default/configmaps/c",
                             {{"preconditions", {{"uid", created.body["metadata"]["uid"]}}}});
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body["metadata"]["name"], "c");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/configmaps/c").status, 404);
}

TEST_F(ObjectsTest, FinalizersHoldDeletionUntilRemoved) {
  client.post("/api/v1/namespaces/default/configmaps",
              {{"metadata", {{"name", "c"}, {"finalizers", {"example.com/keep"}}}}});
  Reply pending = client.del("/api/v1/namespaces/default/configmaps/c");
  EXPECT_EQ(pending.status, 202);
  Reply held = client.get("/api/v1/namespaces/default/configmaps/c");
  ASSERT_EQ(held.status, 200);
  EXPECT_TRUE(held.body["metadata"].contains("deletionTimestamp"));
  json released = held.body;
  released["metadata"]["finalizers"] = json::array();
  EXPECT_EQ(client.put("/api/v1/namespaces/default/configmaps/c", released).status, 200);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/configmaps/c").status, 404);
}

TEST_F(ObjectsTest, DryRunStoresNothing) {
  Reply dry = client.post("/api/v1/namespaces/default/pods?dryRun=All", pod_manifest("a"));
  EXPECT_EQ(dry.status, 201);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a").status, 404);
}

TEST_F(ObjectsTest, PriorityComesFromThePriorityClass) {
  ASSERT_EQ(
      client.post("/apis/scheduling.k8s.io/v1/priorityclasses", {{"metadata", {{"name", "high"}}}, {"value", 1000}})
          .status,
      201);
  json pod = pod_manifest("a");
  pod["spec"]["priorityClassName"] = "high";
  EXPECT_EQ(client.post("/api/v1/namespaces/default/pods", pod).body["spec"]["priority"], 1000);
  pod["metadata"]["name"] = "b";
  pod["spec"]["priorityClassName"] = "missing";
  Reply missing = client.post("/api/v1/namespaces/default/pods", pod);
  EXPECT_EQ(missing.status, 403);
  EXPECT_EQ(missing.body["reason"], "Forbidden");
}

}  // namespace
}  // namespace tessera::apiserver::testing
