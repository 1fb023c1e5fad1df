#include "scheduler/victim_gpus.h"

#include <algorithm>
#include <cassert>

#include "scheduler/by_node.h"

namespace tessera {

VictimGpus::VictimGpus(size_t node_count, size_t queue_count) : queue_count_(queue_count), held_(node_count, 0) {}

void VictimGpus::add(NodeIndex node, QueueIndex queue, int priority, int64_t milli, int64_t unit_gpu_milli) {
  added_.push_back({node, static_cast<uint32_t>(queue), priority, milli, unit_gpu_milli});
  held_[static_cast<size_t>(node)] += milli;
}

void VictimGpus::finish() {
  // The additions by node, then each node's by queue and priority, merged into one entry per
  // queue and priority.
  const size_t node_count = held_.size();
  std::vector<Added> added = by_node(added_, node_count, start_);
  added_ = {};
  std::vector<int> priorities;
  entries_.reserve(added.size());
  size_t node_first = 0;  // the node's first addition
  for (size_t node = 0; node < node_count; ++node) {
    // start_ holds where each node's additions begin until it is overwritten with where its entries do.
    const auto begin = added.begin() + static_cast<std::ptrdiff_t>(node_first);
    const auto end = added.begin() + static_cast<std::ptrdiff_t>(start_[node + 1]);
    node_first = start_[node + 1];
    start_[node] = entries_.size();
    std::sort(begin, end, [](const Added& a, const Added& b) {
      return a.queue != b.queue ? a.queue < b.queue : a.priority < b.priority;
    });
    for (auto added = begin; added != end; ++added) {
      if (added == begin || added->queue != entries_.back().queue || added->priority != entries_.back().priority) {
        entries_.push_back(Entry{added->queue, added->priority, 0, INT64_MAX});
        priorities.push_back(added->priority);
      }
      Entry& entry = entries_.back();
      if (added->unit_gpu_milli > 0)
        entry.smallest_unit_milli = std::min(entry.smallest_unit_milli, added->unit_gpu_milli);
      entry.gpu_milli += added->milli;
    }
  }
  start_[node_count] = entries_.size();
  std::sort(priorities.begin(), priorities.end());
  priorities.erase(std::unique(priorities.begin(), priorities.end()), priorities.end());
  const size_t per_level = (priorities.size() + kMaxLevels - 1) / kMaxLevels;
  for (size_t first = 0; first < priorities.size(); first += per_level) level_floor_.push_back(priorities[first]);

  const size_t levels = level_count();
  lists_.assign(queue_count_ * levels, {});
  chosen_by_.assign(queue_count_, INT64_MIN);  // no list chosen
  for (size_t node = 0; node + 1 < start_.size(); ++node) {
    for (size_t e = start_[node]; e < start_[node + 1]; ++e) {
      const Entry& entry = entries_[e];
      GiverList& list = lists_[entry.queue * levels + level_of(entry.priority)];
      list.smallest_unit_milli = std::min(list.smallest_unit_milli, entry.smallest_unit_milli);
      if (entry.gpu_milli == 0) continue;
      if (list.nodes.empty() || list.nodes.back() != static_cast<NodeIndex>(node)) {
        list.nodes.push_back(static_cast<NodeIndex>(node));
        list.live_milli.push_back(0);
      }
      list.live_milli.back() += entry.gpu_milli;
    }
  }
  unions_.assign(levels, {});
  for (NodeUnion& level : unions_) level.resize(held_.size());
  chosen_milli_.assign(held_.size() * levels, 0);
}

VictimGpus::Entry& VictimGpus::entry(NodeIndex node, QueueIndex queue, int priority) {
  const auto index = static_cast<size_t>(node);
  return *std::find_if(entries_.begin() + static_cast<std::ptrdiff_t>(start_[index]),
                       entries_.begin() + static_cast<std::ptrdiff_t>(start_[index + 1]),
                       [&](const Entry& entry) { return entry.queue == queue && entry.priority == priority; });
}

void VictimGpus::change(NodeIndex node, QueueIndex queue, int priority, int64_t milli) {
  entry(node, queue, priority).gpu_milli += milli;
  held_[static_cast<size_t>(node)] += milli;
  const size_t level = level_of(priority);
  GiverList& list = lists_[queue * level_count() + level];
  // A unit's GPUs on a node were counted there when indexed (an extra's, with its whole unit).
  auto position = std::lower_bound(list.nodes.begin(), list.nodes.end(), node);
  assert(position != list.nodes.end() && *position == node && "GPUs on a node the level did not list");
  if (position == list.nodes.end() || *position != node) return;
  int64_t& live = list.live_milli[static_cast<size_t>(position - list.nodes.begin())];
  const bool was_live = live > 0;
  live += milli;
  if (!list.chosen) return;
  chosen_milli_[static_cast<size_t>(node) * level_count() + level] += milli;
  if (was_live != (live > 0)) unions_[level].count_node(node, live > 0);
}

void VictimGpus::choose_givers(std::span<const int64_t> cap) {
  const size_t levels = level_count();
  for (QueueIndex queue = 0; queue < queue_count_; ++queue) {
    const int64_t queue_cap = queue < cap.size() ? cap[queue] : INT64_MIN;
    if (queue_cap == chosen_by_[queue]) continue;  // its lists were chosen by this cap
    chosen_by_[queue] = queue_cap;
    for (size_t level = 0; level < levels; ++level) {
      GiverList& list = lists_[queue * levels + level];
      const bool chosen = queue_cap >= list.smallest_unit_milli;
      if (chosen == list.chosen) continue;
      list.chosen = chosen;
      for (size_t i = 0; i < list.nodes.size(); ++i) {
        const int64_t live = list.live_milli[i];
        if (live <= 0) continue;
        unions_[level].count_node(list.nodes[i], chosen);
        chosen_milli_[static_cast<size_t>(list.nodes[i]) * levels + level] += chosen ? live : -live;
      }
    }
  }
}

size_t VictimGpus::level_of(int priority) const { return levels_at_most(priority) - 1; }

}  // namespace tessera
