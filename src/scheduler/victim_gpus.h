#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/node.h"
#include "core/queue.h"
#include "scheduler/node_union.h"

namespace tessera {

// The GPUs an action's victims (VictimIndex) still hold, per node, leaf queue and priority, kept
// as units go. A search for room asks it which nodes could free enough GPUs at all, and does not
// look into the others: it bounds from above what evicting units could free.
class VictimGpus {
 public:
  // One node's units of one leaf queue and priority: the GPUs (milli) they hold on the node, and
  // the GPUs of the smallest of them that holds any, on all its nodes (INT64_MAX: none does).
  struct Entry {
    QueueIndex queue = 0;
    int priority = 0;
    int64_t gpu_milli = 0;
    int64_t smallest_unit_milli = INT64_MAX;
  };

  VictimGpus(size_t node_count, size_t queue_count);

  // While building: a unit of the queue and priority, holding `unit_gpu_milli` in all, has a pod
  // on the node that counts `milli` (0 for a pod counted with another unit). Then finish().
  void add(NodeIndex node, QueueIndex queue, int priority, int64_t milli, int64_t unit_gpu_milli);
  void finish();

  // What the units of a queue and priority hold on the node changed by `milli` (a unit went, or
  // an elastic extra now counts alone).
  void change(NodeIndex node, QueueIndex queue, int priority, int64_t milli);

  // A node's entries, by queue then priority, and their sum.
  std::span<const Entry> on(NodeIndex node) const {
    const auto index = static_cast<size_t>(node);
    return {entries_.data() + start_[index], start_[index + 1] - start_[index]};
  }
  int64_t held_on(NodeIndex node) const { return held_[static_cast<size_t>(node)]; }

  // Priority levels: the entries' priorities, lowest first, one level each (at most kMaxLevels;
  // beyond that, neighbouring priorities share one). A level's floor is its lowest priority.
  static constexpr size_t kMaxLevels = 8;
  size_t level_count() const { return level_floor_.size(); }
  int level_floor(size_t level) const { return level_floor_[level]; }
  // How many levels have their floor at or below `priority` (the first ones), or below it.
  size_t levels_at_most(int priority) const {
    return static_cast<size_t>(std::upper_bound(level_floor_.begin(), level_floor_.end(), priority) -
                               level_floor_.begin());
  }
  size_t levels_below(int priority) const {
    return static_cast<size_t>(std::lower_bound(level_floor_.begin(), level_floor_.end(), priority) -
                               level_floor_.begin());
  }
  // Chooses, per leaf queue and level, whether its units count in nodes_of: where the queue may
  // lose (`cap`, per queue, in GPU milli; INT64_MIN: nothing) at least the smallest unit of the
  // level that holds GPUs. Consecutive searches choose much the same: only changes are counted.
  void choose_givers(std::span<const int64_t> cap);
  // The nodes where units of a chosen queue and the level still hold GPUs, as bits (word node /
  // 64, bit node % 64).
  const uint64_t* nodes_of(size_t level) const { return unions_[level].bits.data(); }
  // What the chosen queues' units of the first `levels` levels still hold on the node (GPU milli):
  // with the node's free GPUs, a bound on what a search under the chosen caps can free there,
  // read in one look where the node's entries would take a pass.
  int64_t chosen_held_on(NodeIndex node, size_t levels) const {
    const int64_t* held = chosen_milli_.data() + static_cast<size_t>(node) * level_count();
    int64_t sum = 0;
    for (size_t level = 0; level < levels; ++level) sum += held[level];
    return sum;
  }

 private:
  size_t level_of(int priority) const;
  Entry& entry(NodeIndex node, QueueIndex queue, int priority);

  // One queue's units of one level that hold GPUs.
  struct GiverList {
    std::vector<NodeIndex> nodes;     // where they held GPUs when indexed, in node order
    std::vector<int64_t> live_milli;  // per node of `nodes`: what they hold there now
    int64_t smallest_unit_milli = INT64_MAX;
    bool chosen = false;  // its live nodes count in unions_
  };

  size_t queue_count_;
  // What add() was told, until finish() merges it into entries_: one flat list, as most nodes
  // have a few entries and a list per node cost an allocation each.
  struct Added {
    NodeIndex node = 0;
    uint32_t queue = 0;
    int priority = 0;
    int64_t milli = 0;
    int64_t unit_gpu_milli = 0;
  };
  std::vector<Added> added_;
  std::vector<Entry> entries_;  // node after node
  std::vector<size_t> start_;   // per node, and one past the last
  std::vector<int64_t> held_;   // per node
  std::vector<int> level_floor_;
  std::vector<GiverList> lists_;    // per queue × level
  std::vector<int64_t> chosen_by_;  // per queue: the cap its lists were last chosen by
  std::vector<NodeUnion> unions_;   // per level
  // Per node × level: the live_milli of the chosen lists, summed (chosen_held_on).
  std::vector<int64_t> chosen_milli_;
};

}  // namespace tessera
