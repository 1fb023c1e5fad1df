// Groups nodes that are interchangeable right now: same static class (capacity, devices,
// labels, taints) and same usage up to a permutation of identical devices. A placement decision
// checks and scores one representative per group — the lowest-index member — instead of every
// node, which is what keeps a decision cheap on 10,000-node clusters where most nodes look alike.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/node.h"

namespace tessera {

struct NodeStateKey {
  int32_t node_class = 0;
  int64_t free_cpu_milli = 0;
  int64_t free_memory_bytes = 0;
  std::vector<int32_t> devices;  // ClusterState::device_code of each device, sorted
  int32_t reserved_for = -1;     // NodeReservation::holder: reserved nodes group apart

  friend bool operator==(const NodeStateKey&, const NodeStateKey&) = default;
};

struct NodeStateKeyHash {
  size_t operator()(const NodeStateKey& key) const;
};

class NodeGroups {
 public:
  struct Group {
    NodeStateKey key;
    std::set<NodeIndex> members;  // ordered: begin() is the representative
    // members' first and size, kept beside the key: a placement reads them for every group, and
    // reaching into the set for them was most of its cost.
    NodeIndex representative = -1;
    int32_t size = 0;
    // One per key: a group's key never changes, so anything derived from the key (a feasibility
    // verdict, a policy score) can be cached under this id. A key whose group emptied gets its
    // id back when a node takes that state again (states recur: a pod leaves as another like it
    // came), so what was cached under it can still serve; no other key ever gets it.
    uint64_t uid = 0;
    // The group's place among the groups (for_each's order), from 0 to slot_count(): a slot keeps
    // its group while the group lives, and a later group may take it once it emptied.
    int32_t slot = -1;
  };

  explicit NodeGroups(int node_count) : group_of_(static_cast<size_t>(node_count), -1) {}

  // Moves the node into the group of `key`, creating it if needed.
  void assign(NodeIndex node, NodeStateKey key);
  // Forgets every group and the ids of past keys (node classes changed); uids keep counting.
  void clear();

  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const Group& group : groups_) {
      if (group.size > 0) visit(group);
    }
  }
  size_t group_count() const { return groups_.size() - free_slots_.size(); }
  size_t slot_count() const { return groups_.size(); }
  const Group& group_of(NodeIndex node) const { return groups_[static_cast<size_t>(group_of_[node])]; }

 private:
  // The id of a new group of `key`: its past id where it had a group before, a new one otherwise.
  uint64_t uid_for(const NodeStateKey& key);

  std::vector<Group> groups_;
  std::vector<int32_t> free_slots_;
  std::vector<int32_t> group_of_;
  uint64_t next_uid_ = 1;
  std::unordered_map<NodeStateKey, int32_t, NodeStateKeyHash> index_;
  // The ids of keys whose groups emptied, bounded: past it they are forgotten and a key that
  // comes back gets a new id (what was cached under the old one is worked out again).
  static constexpr size_t kMaxPastKeys = size_t{1} << 16;
  std::unordered_map<NodeStateKey, uint64_t, NodeStateKeyHash> past_uids_;
};

}  // namespace tessera
