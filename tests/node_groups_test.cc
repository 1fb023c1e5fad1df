#include "engine/node_groups.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

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

// The placer keeps its verdicts by group slot (placer.h): a group must keep its slot while it
// lives, and no two live groups may share one.
TEST(NodeGroups, ALiveGroupKeepsItsSlotAndNoTwoShareOne) {
  constexpr int kNodes = 12;
  NodeGroups groups(kNodes);
  std::mt19937_64 random(7);
  std::map<uint64_t, int32_t> slot_of_live_uid;
  std::set<NodeIndex> assigned;
  for (int step = 0; step < 3000; ++step) {
    const auto node = static_cast<NodeIndex>(random() % kNodes);
    const auto used = static_cast<int32_t>(random() % 5 * 250);
    groups.assign(node, key_with(8000 - 1000 * static_cast<int64_t>(random() % 3), {used, 0}));
    std::set<int32_t> slots;
    std::map<uint64_t, int32_t> live;
    groups.for_each([&](const NodeGroups::Group& group) {
      ASSERT_GE(group.slot, 0);
      ASSERT_LT(static_cast<size_t>(group.slot), groups.slot_count());
      EXPECT_TRUE(slots.insert(group.slot).second) << "two live groups in slot " << group.slot;
      live[group.uid] = group.slot;
      if (auto known = slot_of_live_uid.find(group.uid); known != slot_of_live_uid.end()) {
        EXPECT_EQ(known->second, group.slot) << "a live group moved slots at step " << step;
      }
    });
    assigned.insert(node);
    for (NodeIndex member : assigned) {
      EXPECT_EQ(live.at(groups.group_of(member).uid), groups.group_of(member).slot);
    }
    slot_of_live_uid = std::move(live);
  }
}

}  // namespace
}  // namespace tessera
