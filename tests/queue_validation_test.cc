// Queues a user wrote badly are left out one by one, with a reason each; the rest still form a
// tree. Warnings for quotas that are accepted but cannot all be met.
#include "policy/queue_validation.h"

#include <gtest/gtest.h>

#include <map>

namespace tessera {
namespace {

QueueSpec queue(std::string name, std::string parent = "", double deserved_gpus = 0) {
  QueueSpec spec;
  spec.name = std::move(name);
  spec.parent = std::move(parent);
  spec.quota.resize(1);
  spec.quota[0].deserved = deserved_gpus;
  return spec;
}

std::map<std::string, std::string> reasons(const UsableQueues& usable) {
  std::map<std::string, std::string> by_queue;
  for (const QueueProblem& problem : usable.problems) {
    EXPECT_TRUE(problem.excluded);
    EXPECT_NE(problem.message.find(problem.queue), std::string::npos) << problem.message;
    by_queue[problem.queue] = problem.reason;
  }
  return by_queue;
}

std::vector<std::string> names(const UsableQueues& usable) {
  std::vector<std::string> kept;
  for (const QueueSpec& spec : usable.specs) kept.push_back(spec.name);
  return kept;
}

TEST(UsableQueues, ACycleLeavesOutItsMembersAndWhatHangsBelowOnly) {
  const UsableQueues usable = usable_queues(
      {queue("org"), queue("team", "org"), queue("loop-a", "loop-b"), queue("loop-b", "loop-a"),
       queue("under-loop", "loop-a"), queue("under-under", "under-loop")},
      ResourceNames::standard());
  EXPECT_EQ(names(usable), (std::vector<std::string>{"org", "team"}));
  EXPECT_EQ(reasons(usable), (std::map<std::string, std::string>{{"loop-a", "CyclicParent"},
                                                                  {"loop-b", "CyclicParent"},
                                                                  {"under-loop", "ParentExcluded"},
                                                                  {"under-under", "ParentExcluded"}}));
  for (const QueueProblem& problem : usable.problems) {
    if (problem.reason == "CyclicParent") {
      EXPECT_NE(problem.message.find("loop-a -> loop-b -> loop-a"), std::string::npos) << problem.message;
    }
  }
  EXPECT_TRUE(QueueTree::build(usable.specs, ResourceNames::standard()).ok());
}

TEST(UsableQueues, ASelfParentIsACycle) {
  const UsableQueues usable = usable_queues({queue("self", "self"), queue("fine")}, ResourceNames::standard());
  EXPECT_EQ(names(usable), (std::vector<std::string>{"fine"}));
  EXPECT_EQ(reasons(usable), (std::map<std::string, std::string>{{"self", "CyclicParent"}}));
}

TEST(UsableQueues, BadQuotasMissingParentsAndDuplicatesAreLeftOutWithTheirChildren) {
  QueueSpec negative = queue("negative", "", -1);
  QueueSpec low_limit = queue("low-limit", "", 4);
  low_limit.quota[0].limit = 2;
  const UsableQueues usable =
      usable_queues({queue("org"), negative, queue("below-negative", "negative"), low_limit,
                     queue("orphan", "nowhere"), queue("below-orphan", "orphan"), queue("org")},
                    ResourceNames::standard());
  EXPECT_EQ(names(usable), (std::vector<std::string>{"org"}));
  const auto by_queue = reasons(usable);
  EXPECT_EQ(by_queue.at("negative"), "InvalidQuota");
  EXPECT_EQ(by_queue.at("below-negative"), "ParentExcluded");
  EXPECT_EQ(by_queue.at("low-limit"), "InvalidQuota");
  EXPECT_EQ(by_queue.at("orphan"), "ParentMissing");
  EXPECT_EQ(by_queue.at("below-orphan"), "ParentExcluded");
  EXPECT_EQ(by_queue.at("org"), "DuplicateName");  // the second "org"; the first is kept
}

TEST(UsableQueues, AGoodListIsKeptWholeAndInOrder) {
  const UsableQueues usable =
      usable_queues({queue("b", "a"), queue("a"), queue("c", "b")}, ResourceNames::standard());
  EXPECT_EQ(names(usable), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_TRUE(usable.problems.empty());
}

TEST(QuotaWarnings, AChildDeservingMoreThanItsParentIsNamed) {
  auto tree = QueueTree::build({queue("parent", "", 2), queue("big", "parent", 4), queue("small", "parent", 1)},
                               ResourceNames::standard());
  ASSERT_TRUE(tree.ok());
  const std::vector<QueueProblem> warnings = quota_warnings(*tree);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].queue, "big");
  EXPECT_EQ(warnings[0].reason, "DeservedExceedsParent");
  EXPECT_FALSE(warnings[0].excluded);
  EXPECT_NE(warnings[0].message.find("gpu 4 > 2"), std::string::npos) << warnings[0].message;
}

}  // namespace
}  // namespace tessera
