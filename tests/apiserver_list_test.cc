// Lists: label and field selectors, limit and continue, and resourceVersion semantics.
#include <gtest/gtest.h>

#include <set>

#include "apiserver/selectors.h"
#include "apiserver_test_support.h"

namespace tessera::apiserver::testing {
namespace {

std::set<std::string> names(const json& list) {
  std::set<std::string> result;
  for (const json& item : list["items"]) result.insert(item["metadata"]["name"].get<std::string>());
  return result;
}

TEST(LabelSelectorTest, Operators) {
  const json labels = {{"app", "web"}, {"tier", "front"}, {"version", "3"}};
  auto matches = [&](const char* text) {
    ApiResult<LabelSelector> selector = LabelSelector::parse(text);
    EXPECT_TRUE(selector.ok()) << text;
    return selector.ok() && selector->matches(labels);
  };
  EXPECT_TRUE(matches(""));
  EXPECT_TRUE(matches("app=web"));
  EXPECT_TRUE(matches("app==web,tier=front"));
  EXPECT_FALSE(matches("app=db"));
  EXPECT_TRUE(matches("app!=db"));
  EXPECT_TRUE(matches("missing!=x"));  // != also selects objects without the label
  EXPECT_TRUE(matches("tier in (front, back)"));
  EXPECT_FALSE(matches("tier notin (front,back)"));
  EXPECT_TRUE(matches("env notin (prod)"));
  EXPECT_TRUE(matches("app"));
  EXPECT_FALSE(matches("!app"));
  EXPECT_TRUE(matches("!env"));
  EXPECT_TRUE(matches("version>2"));
  EXPECT_FALSE(matches("version<3"));
  EXPECT_FALSE(LabelSelector::parse("app in front").ok());
  EXPECT_FALSE(LabelSelector::parse("a b=c").ok());
  EXPECT_EQ(LabelSelector::parse("app=(x").error().code, 400);
}

TEST(LabelSelectorTest, FromObject) {
  ApiResult<LabelSelector> selector = LabelSelector::from_object(
      {{"matchLabels", {{"app", "web"}}},
       {"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"front"}}}}}});
  ASSERT_TRUE(selector.ok());
  EXPECT_TRUE(selector->matches({{"app", "web"}, {"tier", "front"}}));
  EXPECT_FALSE(selector->matches({{"app", "web"}, {"tier", "back"}}));
}

class ListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 7; ++i) {
      json pod =
          pod_manifest(fmt::format("pod-{}", i), {{"app", i % 2 == 0 ? "even" : "odd"}, {"index", std::to_string(i)}});
      if (i < 3) pod["spec"]["nodeName"] = "node-a";
      ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod).status, 201);
    }
    ASSERT_EQ(client.post("/api/v1/namespaces", {{"metadata", {{"name", "other"}}}}).status, 201);
    ASSERT_EQ(client.post("/api/v1/namespaces/other/pods", pod_manifest("elsewhere", {{"app", "even"}})).status, 201);
  }

  std::unique_ptr<ApiServer> server = start_server();
  TestClient client{*server};
};

TEST_F(ListTest, ListHasKindAndResourceVersion) {
  Reply list = client.get("/api/v1/namespaces/default/pods");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["kind"], "PodList");
  EXPECT_EQ(list.body["apiVersion"], "v1");
  EXPECT_EQ(list.body["metadata"]["resourceVersion"], std::to_string(server->store().revision()));
  EXPECT_EQ(list.body["items"].size(), 7u);
  EXPECT_EQ(client.get("/api/v1/pods").body["items"].size(), 8u);
}

TEST_F(ListTest, LabelSelector) {
  EXPECT_EQ(names(client.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dodd").body),
            (std::set<std::string>{"pod-1", "pod-3", "pod-5"}));
  EXPECT_EQ(names(client.get("/api/v1/pods?labelSelector=app%3Deven,index%20notin%20(0,2,4)").body),
            (std::set<std::string>{"pod-6", "elsewhere"}));
  Reply bad = client.get("/api/v1/pods?labelSelector=a%20b");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["reason"], "BadRequest");
}

TEST_F(ListTest, FieldSelector) {
  EXPECT_EQ(names(client.get("/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode-a").body),
            (std::set<std::string>{"pod-0", "pod-1", "pod-2"}));
  // The empty value selects unbound pods, as schedulers ask for them.
  EXPECT_EQ(client.get("/api/v1/pods?fieldSelector=spec.nodeName%3D").body["items"].size(), 5u);
  EXPECT_EQ(names(client.get("/api/v1/pods?fieldSelector=metadata.name%3D%3Dpod-4").body),
            (std::set<std::string>{"pod-4"}));
  EXPECT_EQ(client.get("/api/v1/pods?fieldSelector=metadata.namespace!%3Ddefault").body["items"].size(), 1u);
  EXPECT_EQ(client.get("/api/v1/pods?fieldSelector=status.phase%3DPending,spec.schedulerName%3Ddefault-scheduler")
                .body["items"]
                .size(),
            8u);
  Reply unsupported = client.get("/api/v1/pods?fieldSelector=spec.priority%3D1");
  EXPECT_EQ(unsupported.status, 400);
  EXPECT_EQ(unsupported.body["message"], "field label not supported: spec.priority");
}

TEST_F(ListTest, PaginationVisitsEveryObjectOnce) {
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  std::string first_version;
  do {
    Reply page = client.get("/api/v1/pods?limit=3" + (token.empty() ? "" : "&continue=" + token));
    ASSERT_EQ(page.status, 200) << page.raw;
    EXPECT_LE(page.body["items"].size(), 3u);
    for (const json& item : page.body["items"]) seen.push_back(item["metadata"]["name"]);
    token = page.body["metadata"].value("continue", "");
    if (pages == 0) {
      first_version = page.body["metadata"]["resourceVersion"];
      EXPECT_EQ(page.body["metadata"]["remainingItemCount"], 5);
      // A change between pages does not show: the list is served as of its first page.
      ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("pod-late")).status, 201);
    } else {
      EXPECT_EQ(page.body["metadata"]["resourceVersion"], first_version);
    }
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  const std::vector<std::string> expected = {"pod-0", "pod-1", "pod-2", "pod-3",
                                             "pod-4", "pod-5", "pod-6", "elsewhere"};
  std::vector<std::string> sorted_expected = expected;
  std::sort(sorted_expected.begin(), sorted_expected.end());
  std::vector<std::string> sorted_seen = seen;
  std::sort(sorted_seen.begin(), sorted_seen.end());
  EXPECT_EQ(sorted_seen, sorted_expected);
}

TEST_F(ListTest, PaginationWithSelector) {
  Reply page = client.get("/api/v1/namespaces/default/pods?limit=2&labelSelector=app%3Deven");
  ASSERT_EQ(page.body["items"].size(), 2u);
  Reply rest = client.get("/api/v1/namespaces/default/pods?limit=2&labelSelector=app%3Deven&continue=" +
                          page.body["metadata"]["continue"].get<std::string>());
  EXPECT_EQ(names(rest.body), (std::set<std::string>{"pod-4", "pod-6"}));
}

TEST_F(ListTest, BadContinueTokenIsBadRequest) {
  EXPECT_EQ(client.get("/api/v1/pods?limit=2&continue=garbage!").status, 400);
}

TEST_F(ListTest, ExactResourceVersionServesThePast) {
  const std::string before = client.get("/api/v1/namespaces/default/pods").body["metadata"]["resourceVersion"];
  ASSERT_EQ(client.del("/api/v1/namespaces/default/pods/pod-0").status, 200);
  ASSERT_EQ(client.post("/api/v1/namespaces/default/pods", pod_manifest("pod-new")).status, 201);
  Reply now = client.get("/api/v1/namespaces/default/pods");
  EXPECT_TRUE(names(now.body).contains("pod-new"));
  Reply past = client.get("/api/v1/namespaces/default/pods?resourceVersion=" + before + "&resourceVersionMatch=Exact");
  ASSERT_EQ(past.status, 200) << past.raw;
  EXPECT_EQ(past.body["metadata"]["resourceVersion"], before);
  EXPECT_TRUE(names(past.body).contains("pod-0"));
  EXPECT_FALSE(names(past.body).contains("pod-new"));
  Reply future = client.get("/api/v1/pods?resourceVersion=999999&resourceVersionMatch=Exact");
  EXPECT_EQ(future.status, 504);
  EXPECT_EQ(future.body["reason"], "Timeout");
  EXPECT_EQ(client.get("/api/v1/pods?resourceVersionMatch=Exact").status, 400);
}

TEST(ListHistoryTest, TooOldVersionsAreGone) {
  ApiServerOptions options = plain_options();
  options.watch_history = 4;
  std::unique_ptr<ApiServer> server = start_server(options);
  TestClient client(*server);
  for (int i = 0; i < 3; ++i) client.post("/api/v1/namespaces/default/pods", pod_manifest(fmt::format("p{}", i)));
  Reply page = client.get("/api/v1/namespaces/default/pods?limit=1");
  const std::string old_version = page.body["metadata"]["resourceVersion"];
  for (int i = 0; i < 6; ++i)
    client.post("/api/v1/namespaces/default/configmaps", {{"metadata", {{"name", fmt::format("c{}", i)}}}});

  Reply exact =
      client.get("/api/v1/namespaces/default/pods?resourceVersion=" + old_version + "&resourceVersionMatch=Exact");
  EXPECT_EQ(exact.status, 410);
  EXPECT_EQ(exact.body["reason"], "Expired");
  EXPECT_EQ(exact.body["message"], "The resourceVersion for the provided list is too old.");

  Reply next = client.get("/api/v1/namespaces/default/pods?limit=1&continue=" +
                          page.body["metadata"]["continue"].get<std::string>());
  EXPECT_EQ(next.status, 410);
  EXPECT_EQ(next.body["reason"], "Expired");
  EXPECT_TRUE(next.body["message"].get<std::string>().starts_with("The provided continue parameter is too old"));
}

}  // namespace
}  // namespace tessera::apiserver::testing
