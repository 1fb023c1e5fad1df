// The server's small pieces: JSONPath, continue tokens, paths, content negotiation and YAML (its
// time formats, durations and quantities are wire/'s, tested there).
#include <gtest/gtest.h>

#include "apiserver/content_negotiation.h"
#include "apiserver/continue_token.h"
#include "apiserver/json_path.h"
#include "apiserver/request_path.h"
#include "apiserver/yaml_json.h"

namespace tessera::apiserver {
namespace {

using nlohmann::json;

TEST(JsonPathTest, FieldsIndexesAndFilters) {
  const json object = {
      {"spec", {{"queue", "q"}, {"items", {1, 2, 3}}}},
      {"status", {{"conditions", {{{"type", "Ready"}, {"reason", "A"}}, {{"type", "Scheduled"}, {"reason", "B"}}}}}}};
  EXPECT_EQ(*evaluate_json_path(object, ".spec.queue"), std::vector<json>{"q"});
  EXPECT_EQ(*evaluate_json_path(object, "{.spec.items[1]}"), std::vector<json>{2});
  EXPECT_EQ(*evaluate_json_path(object, ".spec.items[-1]"), std::vector<json>{3});
  EXPECT_EQ(evaluate_json_path(object, ".spec.items[*]")->size(), 3u);
  EXPECT_EQ(*evaluate_json_path(object, ".status.conditions[?(@.type==\"Scheduled\")].reason"), std::vector<json>{"B"});
  EXPECT_EQ(*evaluate_json_path(object, ".status.conditions[?(@.type=='Ready')].reason"), std::vector<json>{"A"});
  EXPECT_EQ(*evaluate_json_path(object, ".status.conditions[?(@.type!=\"Ready\")].reason"), std::vector<json>{"B"});
  EXPECT_TRUE(evaluate_json_path(object, ".spec.missing.deeper")->empty());
  EXPECT_FALSE(evaluate_json_path(object, "spec..queue").has_value());
  EXPECT_FALSE(evaluate_json_path(object, ".a[?(@.x~1)]").has_value());
}

TEST(ContinueTokenTest, RoundTrip) {
  const std::string token = encode_continue_token({42, "team-a", "pod-7"});
  std::optional<ContinuePoint> point = decode_continue_token(token);
  ASSERT_TRUE(point.has_value());
  EXPECT_EQ(point->revision, 42u);
  EXPECT_EQ(point->namespace_name, "team-a");
  EXPECT_EQ(point->name, "pod-7");
  EXPECT_EQ(decode_continue_token(encode_continue_token({7, "", "node-1"}))->name, "node-1");
  EXPECT_FALSE(decode_continue_token("not a token").has_value());
  EXPECT_FALSE(decode_continue_token("eyJ2IjoxfQ").has_value());  // {"v":1}
}

TEST(RequestPathTest, Shapes) {
  std::optional<ResourcePath> pods = parse_resource_path("/api/v1/namespaces/ns/pods/p/binding");
  ASSERT_TRUE(pods.has_value());
  EXPECT_EQ(pods->group, "");
  EXPECT_EQ(pods->namespace_name, "ns");
  EXPECT_EQ(pods->resource, "pods");
  EXPECT_EQ(pods->name, "p");
  EXPECT_EQ(pods->subresource, "binding");
  std::optional<ResourcePath> queues = parse_resource_path("/apis/scheduling.tessera.dev/v1alpha1/queues/q");
  EXPECT_EQ(queues->group, "scheduling.tessera.dev");
  EXPECT_EQ(queues->name, "q");
  std::optional<ResourcePath> ns_status = parse_resource_path("/api/v1/namespaces/ns/status");
  EXPECT_EQ(ns_status->resource, "namespaces");
  EXPECT_EQ(ns_status->subresource, "status");
  EXPECT_TRUE(parse_resource_path("/api/v1/watch/pods")->legacy_watch);
  EXPECT_FALSE(parse_resource_path("/api/v1").has_value());
  EXPECT_FALSE(parse_resource_path("/apis/apps/v1").has_value());
  EXPECT_FALSE(parse_resource_path("/api/v1/namespaces/ns/pods/p/status/extra").has_value());
}

TEST(ContentNegotiationTest, Accept) {
  EXPECT_EQ(negotiate_output("")->form, OutputForm::kObject);
  EXPECT_EQ(negotiate_output("application/json, */*")->form, OutputForm::kObject);
  std::optional<Output> table = negotiate_output(
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/"
      "json");
  EXPECT_EQ(table->form, OutputForm::kTable);
  EXPECT_EQ(table->meta_version, "v1");
  EXPECT_EQ(negotiate_output("application/json;as=Table;v=v2;g=meta.k8s.io,application/json")->form,
            OutputForm::kObject);
  EXPECT_FALSE(negotiate_output("application/vnd.kubernetes.protobuf").has_value());
  EXPECT_EQ(body_format("application/json; charset=utf-8"), BodyFormat::kJson);
  EXPECT_EQ(body_format("application/yaml"), BodyFormat::kYaml);
  EXPECT_FALSE(body_format("text/plain").has_value());
}

TEST(YamlJsonTest, ScalarsAreTyped) {
  Result<json> converted = yaml_to_json("a: 1\nb: \"1\"\nc: true\nd: ~\ne: 1.5\nf: [x, 'y']\ng: 0x1\n");
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ(*converted,
            json({{"a", 1}, {"b", "1"}, {"c", true}, {"d", nullptr}, {"e", 1.5}, {"f", {"x", "y"}}, {"g", "0x1"}}));
  EXPECT_EQ(yaml_documents_to_json("a: 1\n---\n---\nb: 2\n")->size(), 2u);
  EXPECT_FALSE(yaml_to_json("a: [1, 2").ok());
}

TEST(YamlJsonTest, NumbersBeyondSixtyFourBitsStayStrings) {
  // Long enough to overflow the stack of a recursive matcher.
  const std::string digits(200000, '7');
  Result<json> converted = yaml_to_json("huge: " + digits +
                                        "\nunsigned: 18446744073709551615\nwide: 123456789012345678901234\n"
                                        "overflow: 1e999\nexponent: -12.5e-1\nfraction: .5\nnot_a_number: 1.2.3\n");
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ((*converted)["huge"], digits);
  EXPECT_EQ((*converted)["unsigned"], json(uint64_t{18446744073709551615ULL}));
  EXPECT_DOUBLE_EQ((*converted)["wide"].get<double>(), 123456789012345678901234.0);
  EXPECT_EQ((*converted)["overflow"], "1e999");
  EXPECT_EQ((*converted)["exponent"], -1.25);
  EXPECT_EQ((*converted)["fraction"], 0.5);
  EXPECT_EQ((*converted)["not_a_number"], "1.2.3");
}

}  // namespace
}  // namespace tessera::apiserver
