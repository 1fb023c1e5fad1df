// CustomResourceDefinitions: registering one makes its resources served and discoverable at once;
// custom resources then behave as any object (CRUD, status subresource, watch, printer columns).
#include <gtest/gtest.h>

#include "apiserver/crd_registration.h"
#include "apiserver/embedded_crds.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

const std::string kTables = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

json widget_crd() {
  return {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"kind", "Widget"}, {"shortNames", {"wd"}}}},
        {"versions",
         {{{"name", "v1"},
           {"served", true},
           {"storage", true},
           {"schema", {{"openAPIV3Schema", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}},
           {"subresources", {{"status", json::object()}}},
           {"additionalPrinterColumns",
            {{{"name", "Size"}, {"type", "integer"}, {"jsonPath", ".spec.size"}},
             {{"name", "Ready"}, {"type", "string"}, {"jsonPath", ".status.conditions[?(@.type==\"Ready\")].status"}},
             {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}}}}}}}}};
}

class CrdTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
};

TEST_F(CrdTest, RegisteringServesTheResource) {
  EXPECT_EQ(client.get("/apis/example.com/v1/namespaces/default/widgets").status, 404);
  Reply created = client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd());
  ASSERT_EQ(created.status, 201) << created.raw;
  bool established = false;
  for (const json& condition : created.body["status"]["conditions"]) {
    if (condition["type"] == "Established") established = condition["status"] == "True";
  }
  EXPECT_TRUE(established);
  EXPECT_EQ(created.body["status"]["acceptedNames"]["kind"], "Widget");

  Reply discovery = client.get("/apis/example.com/v1");
  ASSERT_EQ(discovery.status, 200);
  EXPECT_EQ(discovery.body["resources"][0]["name"], "widgets");
  EXPECT_EQ(discovery.body["resources"][0]["shortNames"], json({"wd"}));
  EXPECT_EQ(discovery.body["resources"][1]["name"], "widgets/status");
  bool listed = false;
  const Reply groups = client.get("/apis");
  for (const json& group : groups.body["groups"]) listed = listed || group["name"] == "example.com";
  EXPECT_TRUE(listed);

  Reply widget = client.post("/apis/example.com/v1/namespaces/default/widgets", {{"apiVersion", "example.com/v1"},
                                                                                 {"kind", "Widget"},
                                                                                 {"metadata", {{"name", "w"}}},
                                                                                 {"spec", {{"size", 3}}},
                                                                                 {"status", {{"ignored", true}}}});
  ASSERT_EQ(widget.status, 201) << widget.raw;
  EXPECT_FALSE(widget.body.contains("status"));  // creation drops status when it is a subresource
  Reply status =
      client.patch("/apis/example.com/v1/namespaces/default/widgets/w/status",
                   R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})", "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.raw;
  EXPECT_EQ(status.body["metadata"]["generation"], 1);
  Reply spec = client.patch("/apis/example.com/v1/namespaces/default/widgets/w", R"({"spec":{"size":4}})",
                            "application/merge-patch+json");
  EXPECT_EQ(spec.body["metadata"]["generation"], 2);
  EXPECT_EQ(
      client.patch("/apis/example.com/v1/namespaces/default/widgets/w", "{}", "application/strategic-merge-patch+json")
          .status,
      415);

  Reply table = client.get("/apis/example.com/v1/namespaces/default/widgets", {{"Accept", kTables}});
  ASSERT_EQ(table.status, 200);
  EXPECT_EQ(table.body["kind"], "Table");
  std::vector<std::string> headers;
  for (const json& column : table.body["columnDefinitions"]) headers.push_back(column["name"]);
  EXPECT_EQ(headers, (std::vector<std::string>{"Name", "Size", "Ready", "Age"}));
  const json& cells = table.body["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "w");
  EXPECT_EQ(cells[1], 4);
  EXPECT_EQ(cells[2], "True");
  EXPECT_TRUE(cells[3].get<std::string>().ends_with("s")) << cells[3];
  EXPECT_EQ(table.body["rows"][0]["object"]["kind"], "PartialObjectMetadata");

  // Deleting the CRD takes its objects and its endpoints away.
  EXPECT_EQ(client.del("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com").status, 200);
  EXPECT_EQ(client.get("/apis/example.com/v1/namespaces/default/widgets").status, 404);
  EXPECT_EQ(client.get("/apis/example.com/v1").status, 404);
}

TEST_F(CrdTest, InvalidDefinitionsAreRejected) {
  json wrong_name = widget_crd();
  wrong_name["metadata"]["name"] = "widgets";
  Reply reply = client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", wrong_name);
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(reply.body["reason"], "Invalid");
  json no_schema = widget_crd();
  no_schema["spec"]["versions"][0].erase("schema");
  EXPECT_EQ(client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", no_schema).status, 422);
}

TEST_F(CrdTest, TesseraCrdsPrintTheirColumns) {
  Result<std::vector<json>> crds = embedded_crds();
  ASSERT_TRUE(crds.ok());
  ASSERT_EQ(crds->size(), 3u);
  for (const json& crd : *crds) {
    ASSERT_EQ(client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status, 201);
  }
  Reply group = client.post("/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/podgroups",
                            {{"metadata", {{"name", "g"}}}, {"spec", {{"minMember", 4}, {"queue", "research"}}}});
  ASSERT_EQ(group.status, 201) << group.raw;
  client.patch(
      "/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/podgroups/g/status",
      R"({"status":{"phase":"Pending","conditions":[{"type":"Scheduled","status":"False","reason":"Unschedulable"}]}})",
      "application/merge-patch+json");
  Reply table =
      client.get("/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/podgroups/g", {{"Accept", kTables}});
  ASSERT_EQ(table.status, 200);
  std::vector<std::string> headers;
  for (const json& column : table.body["columnDefinitions"]) headers.push_back(column["name"]);
  EXPECT_EQ(headers, (std::vector<std::string>{"Name", "Queue", "MinMember", "Phase", "Running", "Reason", "Age"}));
  const json& cells = table.body["rows"][0]["cells"];
  EXPECT_EQ(cells[1], "research");
  EXPECT_EQ(cells[2], 4);
  EXPECT_EQ(cells[3], "Pending");
  EXPECT_TRUE(cells[4].is_null());
  EXPECT_EQ(cells[5], "Unschedulable");

  Reply queue =
      client.post("/apis/scheduling.tessera.dev/v1alpha1/queues",
                  {{"metadata", {{"name", "research"}}}, {"spec", {{"resources", {{"gpu", {{"deserved", 8}}}}}}}});
  ASSERT_EQ(queue.status, 201);
  EXPECT_EQ(client.get("/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/queues").status,
            404);  // cluster-scoped
  Reply queues = client.get("/apis/scheduling.tessera.dev/v1alpha1/queues", {{"Accept", kTables}});
  EXPECT_EQ(queues.body["rows"][0]["cells"][2], "8");  // a string column prints numbers as text
}

TEST_F(CrdTest, SchemaPrunesDefaultsAndValidates) {
  Result<std::vector<json>> crds = embedded_crds();
  ASSERT_TRUE(crds.ok());
  for (const json& crd : *crds) client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  const std::string groups = "/apis/scheduling.tessera.dev/v1alpha1/namespaces/default/podgroups";
  Reply created =
      client.post(groups, {{"metadata", {{"name", "g"}}}, {"spec", {{"minMember", 2}, {"unknownField", 1}}}});
  ASSERT_EQ(created.status, 201) << created.raw;
  EXPECT_FALSE(created.body["spec"].contains("unknownField"));  // pruned, as the real server does
  Reply status = client.patch(groups + "/g/status", R"({"status":{"running":1,"notInSchema":"x"}})",
                              "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.raw;
  EXPECT_EQ(status.body["status"], json({{"running", 1}}));

  Reply wrong_type = client.post(groups, {{"metadata", {{"name", "h"}}}, {"spec", {{"minMember", "two"}}}});
  EXPECT_EQ(wrong_type.status, 422);
  EXPECT_EQ(wrong_type.body["details"]["causes"][0]["field"], "spec.minMember");
  EXPECT_EQ(
      wrong_type.body["message"],
      "PodGroup.scheduling.tessera.dev \"h\" is invalid: spec.minMember: Invalid value: \"two\": spec.minMember in "
      "body must be of type integer: \"string\"");
  EXPECT_EQ(client.post(groups, {{"metadata", {{"name", "h"}}}, {"spec", {{"minMember", 0}}}}).status, 422);
  EXPECT_EQ(client.post(groups, {{"metadata", {{"name", "h"}}}, {"spec", {{"queue", "q"}}}}).status, 422);  // required
  EXPECT_EQ(
      client.post(groups, {{"metadata", {{"name", "h"}}}, {"spec", {{"minMember", 1}, {"workloadType", "batch"}}}})
          .status,
      422);  // enum
  Reply quantity = client.post(
      "/apis/scheduling.tessera.dev/v1alpha1/queues",
      {{"metadata", {{"name", "q"}}}, {"spec", {{"resources", {{"gpu", {{"deserved", "2.5"}, {"limit", 4}}}}}}}});
  EXPECT_EQ(quantity.status, 201) << quantity.raw;  // int-or-string
}

TEST(CrdRegistrationTest, TypesPerServedVersion) {
  json crd = widget_crd();
  crd["spec"]["versions"].push_back(
      {{"name", "v2"}, {"served", true}, {"storage", false}, {"schema", {{"openAPIV3Schema", json::object()}}}});
  crd["spec"]["versions"].push_back(
      {{"name", "v0"}, {"served", false}, {"storage", false}, {"schema", {{"openAPIV3Schema", json::object()}}}});
  ApiResult<std::vector<ResourceType>> types = custom_resource_types(crd);
  ASSERT_TRUE(types.ok());
  ASSERT_EQ(types->size(), 2u);
  EXPECT_EQ((*types)[0].api_version(), "example.com/v1");
  EXPECT_TRUE((*types)[0].has_status());
  EXPECT_EQ((*types)[0].singular, "widget");
  EXPECT_EQ((*types)[1].version, "v2");
  EXPECT_FALSE((*types)[1].has_status());
}

}  // namespace
}  // namespace tessera::apiserver::testing
