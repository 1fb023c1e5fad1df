#include "engine/node_groups.h"

#include <algorithm>

namespace tessera {

size_t NodeStateKeyHash::operator()(const NodeStateKey& key) const {
  uint64_t hash = 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(key.node_class);
  auto mix = [&hash](uint64_t value) { hash ^= value + 0x9E3779B97F4A7C15ULL + (hash << 6) + (hash >> 2); };
  mix(static_cast<uint64_t>(key.free_cpu_milli));
  mix(static_cast<uint64_t>(key.free_memory_bytes));
  for (int32_t device : key.devices) mix(static_cast<uint64_t>(device));
  mix(static_cast<uint64_t>(key.reserved_for));
  return static_cast<size_t>(hash);
}

void NodeGroups::clear() {
  groups_.clear();
  free_slots_.clear();
  index_.clear();
  past_uids_.clear();
  std::fill(group_of_.begin(), group_of_.end(), -1);
}

uint64_t NodeGroups::uid_for(const NodeStateKey& key) {
  auto past = past_uids_.find(key);
  if (past == past_uids_.end()) return next_uid_++;
  const uint64_t uid = past->second;
  past_uids_.erase(past);
  return uid;
}

void NodeGroups::assign(NodeIndex node, NodeStateKey key) {
  int32_t& slot = group_of_[static_cast<size_t>(node)];
  if (slot >= 0) {
    Group& old_group = groups_[static_cast<size_t>(slot)];
    if (old_group.key == key) return;
    old_group.members.erase(node);
    old_group.size = static_cast<int32_t>(old_group.members.size());
    if (!old_group.members.empty()) old_group.representative = *old_group.members.begin();
    if (old_group.members.empty()) {
      index_.erase(old_group.key);
      free_slots_.push_back(slot);
      if (past_uids_.size() >= kMaxPastKeys) past_uids_.clear();
      past_uids_.emplace(std::move(old_group.key), old_group.uid);  // a free slot's key is never read
    }
  }
  auto [it, inserted] = index_.try_emplace(key, -1);
  if (inserted) {
    if (free_slots_.empty()) {
      const uint64_t uid = uid_for(key);
      it->second = static_cast<int32_t>(groups_.size());
      groups_.push_back(Group{std::move(key), {}, -1, 0, uid, it->second});
    } else {
      it->second = free_slots_.back();
      free_slots_.pop_back();
      Group& reused = groups_[static_cast<size_t>(it->second)];
      reused.uid = uid_for(key);
      reused.key = std::move(key);
    }
  }
  slot = it->second;
  Group& group = groups_[static_cast<size_t>(slot)];
  group.members.insert(node);
  group.size = static_cast<int32_t>(group.members.size());
  group.representative = *group.members.begin();
}

}  // namespace tessera
