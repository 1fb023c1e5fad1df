#include "engine/node_groups.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

NodeStateKey key_with(int64_t free_cpu_milli, std::vector<int32_t> devices) {
  return NodeStateKey{0, free_cpu_milli, 1 << 30, std::move(devices), -1};
}

// Verdicts and scores are cached under a group's id: a state that comes back after its group
// emptied must find them again, and no other state may ever read them.
TEST(NodeGroups, AStateThatComesBackGetsItsIdBackAndNoOtherStateDoes) {
  NodeGroups groups(3);
  const NodeStateKey idle = key_with(8000, {0, 0});
  const NodeStateKey busy = key_with(4000, {1000, 0});
  groups.assign(0, idle);
  groups.assign(1, idle);
  const uint64_t idle_id = groups.group_of(0).uid;
  EXPECT_EQ(groups.group_of(1).uid, idle_id);

  groups.assign(0, busy);
  groups.assign(1, busy);  // the idle group empties
  const uint64_t busy_id = groups.group_of(0).uid;
  EXPECT_NE(busy_id, idle_id);
  EXPECT_EQ(groups.group_count(), 1U);

  groups.assign(2, key_with(2000, {1000, 1000}));
  EXPECT_NE(groups.group_of(2).uid, idle_id);
  EXPECT_NE(groups.group_of(2).uid, busy_id);

  groups.assign(0, idle);  // a pod left: the node is idle again
  EXPECT_EQ(groups.group_of(0).uid, idle_id);
  EXPECT_EQ(groups.group_of(1).uid, busy_id);

  groups.assign(0, busy);  // the idle group empties again
  groups.clear();          // node classes changed: a class number may now mean another class
  groups.assign(0, idle);
  EXPECT_NE(groups.group_of(0).uid, idle_id);
  EXPECT_NE(groups.group_of(0).uid, busy_id);
}

}  // namespace
}  // namespace tessera
