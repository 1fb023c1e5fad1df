// The HTTP surface: TLS with the generated CA, bearer tokens, discovery, OpenAPI, content
// negotiation, and bad requests answered with a Status rather than a crash.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "apiserver/discovery.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

ApiServerOptions secure_options() {
  ApiServerOptions options;
  options.token = "secret-token";
  return options;
}

TEST(AuthTest, HttpsWithTheGeneratedCaAndToken) {
  std::unique_ptr<ApiServer> server = start_server(secure_options());
  EXPECT_TRUE(server->url().starts_with("https://127.0.0.1:"));
  EXPECT_NE(server->ca_certificate_pem().find("BEGIN CERTIFICATE"), std::string::npos);
  TestClient client(*server);
  Reply nodes = client.get("/api/v1/nodes");
  EXPECT_EQ(nodes.status, 200) << nodes.raw;

  TestClient anonymous(*server, false);
  Reply denied = anonymous.get("/api/v1/nodes");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.body, json({{"kind", "Status"},
                               {"apiVersion", "v1"},
                               {"metadata", json::object()},
                               {"status", "Failure"},
                               {"message", "Unauthorized"},
                               {"reason", "Unauthorized"},
                               {"code", 401}}));
  EXPECT_EQ(anonymous.get("/version").status, 200);  // public, as on the real server

  anonymous.raw().set_bearer_token_auth("wrong");
  EXPECT_EQ(anonymous.get("/api/v1/nodes").status, 401);
  EXPECT_EQ(anonymous.get("/version").status, 401);
}

TEST(AuthTest, RandomTokenWhenNoneGiven) {
  ApiServerOptions options;
  std::unique_ptr<ApiServer> server = start_server(options);
  EXPECT_GE(server->token().size(), 32u);
  EXPECT_EQ(TestClient(*server).get("/api").status, 200);
}

TEST(AuthTest, UntrustedCertificateIsRefused) {
  std::unique_ptr<ApiServer> server = start_server(secure_options());
  std::unique_ptr<ApiServer> other = start_server(secure_options());
  httplib::Client client(server->url());
  // Trust the other server's CA: verification must fail.
  client.set_ca_cert_store(ca_store_from_pem(other->ca_certificate_pem()));
  client.enable_server_certificate_verification(true);
  EXPECT_FALSE(client.Get("/version"));
}

class HttpTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
};

TEST_F(HttpTest, Discovery) {
  Reply version = client.get("/version");
  EXPECT_EQ(version.body["gitVersion"], kServerGitVersion);
  Reply api = client.get("/api");
  EXPECT_EQ(api.body["kind"], "APIVersions");
  EXPECT_EQ(api.body["versions"], json({"v1"}));
  Reply core = client.get("/api/v1");
  EXPECT_EQ(core.body["kind"], "APIResourceList");
  std::map<std::string, json> resources;
  for (const json& resource : core.body["resources"]) resources[resource["name"]] = resource;
  ASSERT_TRUE(resources.contains("pods"));
  EXPECT_EQ(resources["pods"]["kind"], "Pod");
  EXPECT_EQ(resources["pods"]["namespaced"], true);
  EXPECT_EQ(resources["pods"]["shortNames"], json({"po"}));
  EXPECT_EQ(resources["pods/binding"]["verbs"], json({"create"}));
  EXPECT_EQ(resources["pods/eviction"]["group"], "policy");
  EXPECT_EQ(resources["nodes"]["namespaced"], false);
  for (const char* name :
       {"namespaces", "nodes", "pods", "events", "services", "serviceaccounts", "configmaps", "secrets"}) {
    EXPECT_TRUE(resources.contains(name)) << name;
  }
  std::set<std::string> groups;
  const Reply group_list = client.get("/apis");
  for (const json& group : group_list.body["groups"]) groups.insert(group["name"]);
  for (const char* group :
       {"apps", "coordination.k8s.io", "policy", "rbac.authorization.k8s.io", "apiextensions.k8s.io"}) {
    EXPECT_TRUE(groups.contains(group)) << group;
  }
  EXPECT_EQ(client.get("/apis/coordination.k8s.io/v1").body["resources"][0]["name"], "leases");
  EXPECT_EQ(client.get("/apis/rbac.authorization.k8s.io/v1").body["resources"].size(), 4u);
  EXPECT_EQ(client.get("/apis/nope.example.com/v1").status, 404);
}

TEST_F(HttpTest, OpenApi) {
  Reply protobuf =
      client.get("/openapi/v2", {{"Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}});
  ASSERT_EQ(protobuf.status, 200);
  // Document{swagger: "2.0" (field 1), info (field 2)}.
  ASSERT_GE(protobuf.raw.size(), 5u);
  EXPECT_EQ(protobuf.raw.substr(0, 5), std::string("\x0a\x03"
                                                   "2.0",
                                                   5));
  EXPECT_EQ(static_cast<unsigned char>(protobuf.raw[5]), 0x12);
  Reply json_document = client.get("/openapi/v2", {{"Accept", "application/json"}});
  EXPECT_EQ(json_document.body["swagger"], "2.0");
}

TEST_F(HttpTest, TablesForKubectl) {
  client.post("/api/v1/namespaces/default/pods", pod_manifest("a"));
  Reply table =
      client.get("/api/v1/namespaces/default/pods", {{"Accept",
                                                      "application/json;as=Table;v=v1;g=meta.k8s.io,application/"
                                                      "json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}});
  ASSERT_EQ(table.status, 200);
  EXPECT_EQ(table.body["kind"], "Table");
  EXPECT_EQ(table.body["apiVersion"], "meta.k8s.io/v1");
  std::vector<std::string> headers;
  for (const json& column : table.body["columnDefinitions"]) {
    if (column["priority"] == 0) headers.push_back(column["name"]);
  }
  EXPECT_EQ(headers, (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age"}));
  EXPECT_EQ(table.body["rows"][0]["cells"][1], "0/1");
  EXPECT_EQ(table.body["rows"][0]["cells"][2], "Pending");
  EXPECT_FALSE(table.body["metadata"]["resourceVersion"].get<std::string>().empty());
  Reply full = client.get("/api/v1/namespaces/default/pods?includeObject=Object",
                          {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  EXPECT_EQ(full.body["rows"][0]["object"]["kind"], "Pod");
  Reply nodes = client.get("/api/v1/nodes", {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  EXPECT_EQ(nodes.body["columnDefinitions"][1]["name"], "Status");
  Reply metadata = client.get("/api/v1/namespaces/default/pods",
                              {{"Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}});
  EXPECT_EQ(metadata.body["kind"], "PartialObjectMetadataList");
  EXPECT_FALSE(metadata.body["items"][0].contains("spec"));
  EXPECT_EQ(client.get("/api/v1/pods", {{"Accept", "application/vnd.kubernetes.protobuf"}}).status, 406);
}

TEST_F(HttpTest, BadRequestsGetStatusBodies) {
  Reply malformed = client.post_raw("/api/v1/namespaces/default/pods", "{\"metadata\": ", "application/json");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.body["reason"], "BadRequest");
  Reply not_object = client.post_raw("/api/v1/namespaces/default/pods", "[1,2]", "application/json");
  EXPECT_EQ(not_object.status, 400);
  Reply wrong_kind =
      client.post("/api/v1/namespaces/default/pods", {{"kind", "Service"}, {"metadata", {{"name", "x"}}}});
  EXPECT_EQ(wrong_kind.status, 400);
  Reply media = client.post_raw("/api/v1/namespaces/default/pods", "x=1", "application/x-www-form-urlencoded");
  EXPECT_EQ(media.status, 415);
  EXPECT_EQ(media.body["reason"], "UnsupportedMediaType");
  Reply unknown_path = client.get("/nothing/here");
  EXPECT_EQ(unknown_path.status, 404);
  EXPECT_EQ(unknown_path.body["kind"], "Status");
  EXPECT_EQ(client.get("/api/v1/widgets").status, 404);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/pods/a/logs").status, 404);
  EXPECT_EQ(client.get("/api/v1/pods/a").status, 404);  // a namespaced object needs its namespace
  Reply method = client.put("/api/v1/namespaces/default/pods", json::object());
  EXPECT_EQ(method.status, 405);
  EXPECT_EQ(method.body["reason"], "MethodNotAllowed");
  EXPECT_EQ(client.get("/api/v1/namespaces/default/bindings").status, 405);
  EXPECT_EQ(client.get("/api/v1/pods?limit=abc").status, 400);
  EXPECT_EQ(client.get("/api/v1/pods?watch=1&resourceVersion=abc").status, 400);
}

TEST_F(HttpTest, YamlBodies) {
  Reply created =
      client.post_raw("/api/v1/namespaces/default/configmaps",
                      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  n: \"1\"\n", "application/yaml");
  EXPECT_EQ(created.status, 201) << created.raw;
  EXPECT_EQ(created.body["data"]["n"], "1");
}

TEST_F(HttpTest, HugeYamlNumberIsAStringAsOnTheRealServer) {
  const std::string digits(200000, '9');
  Reply created = client.post_raw("/api/v1/namespaces/default/configmaps",
                                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  n: " + digits + "\n",
                                  "application/yaml");
  EXPECT_EQ(created.status, 201) << created.raw.substr(0, 200);
  EXPECT_EQ(created.body["data"]["n"], digits);
  // Where a number must go, it is a bad request, and the server goes on serving.
  Reply priority = client.post_raw(
      "/apis/scheduling.k8s.io/v1/priorityclasses",
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: huge\nvalue: " + digits + "\n",
      "application/yaml");
  EXPECT_GE(priority.status, 400);
  EXPECT_LT(priority.status, 500);
  EXPECT_EQ(client.get("/api/v1/namespaces/default/configmaps/huge").status, 200);
}

TEST_F(HttpTest, MalformedResourceVersionIsBadRequest) {
  for (const char* version : {"-1", "%2B1", "1a", "18446744073709551616"}) {
    Reply watch = client.get(fmt::format("/api/v1/pods?watch=1&resourceVersion={}", version));
    EXPECT_EQ(watch.status, 400) << version << ": " << watch.raw;
    EXPECT_EQ(watch.body["kind"], "Status");
    EXPECT_EQ(watch.body["reason"], "BadRequest");
    Reply list = client.get(fmt::format("/api/v1/pods?resourceVersion={}", version));
    EXPECT_EQ(list.status, 400) << version << ": " << list.raw;
    EXPECT_EQ(list.body["reason"], "BadRequest");
  }
}

TEST_F(HttpTest, RandomBodiesNeverCrashTheServer) {
  std::mt19937 random(7);
  const std::vector<std::string> paths = {"/api/v1/namespaces/default/pods",
                                          "/api/v1/namespaces/default/pods/a",
                                          "/api/v1/namespaces/default/pods/a/binding",
                                          "/api/v1/namespaces/default/pods/a/eviction",
                                          "/api/v1/namespaces/default/pods/a/status",
                                          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                          "/api/v1/nodes",
                                          "/apis/policy/v1/namespaces/default/poddisruptionbudgets"};
  const std::vector<std::string> seeds = {
      R"({"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}})",
      R"({"metadata":{"name":"a"},"target":{"name":"n"}})",
      R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"a"}})",
      R"([{"op":"replace","path":"/metadata/labels","value":{"a":"b"}}])",
      R"({"metadata":{"name":"widgets.x.io"},"spec":{"group":"x.io","names":{"plural":"widgets","kind":"W"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"a":"b"}}}})",
      R"({"metadata":{"generateName":"x-","labels":[1]},"spec":{"containers":{"name":"c"}}})",
      R"({"metadata":{"name":null,"generateName":"n-","labels":null,"finalizers":null},"spec":{"nodeName":null,"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":0.5}}}]}})"};
  const std::vector<std::string> content_types = {"application/json",
                                                  "application/merge-patch+json",
                                                  "application/json-patch+json",
                                                  "application/strategic-merge-patch+json",
                                                  "application/yaml",
                                                  "text/plain"};
  for (int i = 0; i < 1000; ++i) {
    std::string body = seeds[random() % seeds.size()];
    const int mutations = static_cast<int>(random() % 4);
    for (int m = 0; m < mutations && !body.empty(); ++m) {
      const size_t at = random() % body.size();
      switch (random() % 3) {
        case 0:
          body.erase(at, 1 + random() % 5);
          break;
        case 1:
          body.insert(at, 1, "{}[]\":,0a-\\"[random() % 12]);
          break;
        default:
          body[at] = static_cast<char>(random() % 256);
          break;
      }
    }
    const std::string& path = paths[random() % paths.size()];
    const std::string& content_type = content_types[random() % content_types.size()];
    const unsigned method = random() % 4;
    httplib::Result result = method == 0   ? client.raw().Post(path, body, content_type)
                             : method == 1 ? client.raw().Put(path, body, content_type)
                             : method == 2 ? client.raw().Patch(path, body, content_type)
                                           : client.raw().Delete(path, body, content_type);
    ASSERT_TRUE(result) << "request " << i << " got no answer";
    EXPECT_NE(result->status, 500) << path << " " << content_type << " " << body << " -> " << result->body;
    if (result->status >= 400) {
      const json status = json::parse(result->body, nullptr, false);
      EXPECT_EQ(status.value("kind", ""), "Status") << result->body;
    }
  }
  EXPECT_EQ(client.get("/version").status, 200);
}

}  // namespace
}  // namespace tessera::apiserver::testing
