// The domains of a cluster's topologies (docs/topology.md): for each topology and level, the
// nodes that share the level's label value and the values of every wider level. Keying a domain
// by the whole path keeps domains nested even where two blocks both have a rack "r1". A node
// without a level's label (or a wider one's) is in no domain of that level. Immutable: built
// once from the declared cluster.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/gpu_request.h"

namespace tessera {

struct TopologyDomain {
  std::string value;    // the level's label value ("r7")
  int32_t parent = -1;  // the domain of the next wider level holding it (-1 at the widest level)
  std::vector<NodeIndex> nodes;
  int64_t gpu_capacity_milli = 0;
};

class TopologyDomains {
 public:
  TopologyDomains() = default;
  explicit TopologyDomains(const ClusterSpec& spec);

  int topology_count() const { return static_cast<int>(topologies_.size()); }
  int find_topology(std::string_view name) const;              // -1: none of that name
  int find_level(int topology, std::string_view label) const;  // -1: not a level of it
  int level_count(int topology) const { return static_cast<int>(topology_(topology).levels.size()); }
  const std::string& label(int topology, int level) const { return level_(topology, level).label; }
  // The level as people say it: the label key's last segment ("tessera.dev/rack" -> "rack").
  std::string_view noun(int topology, int level) const;

  const std::vector<TopologyDomain>& domains(int topology, int level) const { return level_(topology, level).domains; }
  int32_t domain_of(int topology, int level, NodeIndex node) const {
    return level_(topology, level).domain_of[static_cast<size_t>(node)];
  }
  // The domain of `wider_level` (<= level) that holds a domain of `level`.
  int32_t ancestor(int topology, int level, int32_t domain, int wider_level) const;

  // Every domain of every topology and level has a slot in one flat array (ClusterState keeps
  // each domain's free GPUs there): those of (topology, level) from first_slot on, in domain
  // order; slots_of(node) lists the slots of the domains holding the node.
  size_t slot_count() const { return slot_count_; }
  size_t first_slot(int topology, int level) const { return level_(topology, level).first_slot; }
  std::span<const uint32_t> slots_of(NodeIndex node) const {
    const auto index = static_cast<size_t>(node);
    return {node_slots_.data() + node_slots_start_[index], node_slots_start_[index + 1] - node_slots_start_[index]};
  }

 private:
  struct Level {
    std::string label;
    std::vector<TopologyDomain> domains;
    std::vector<int32_t> domain_of;  // per node
    size_t first_slot = 0;
  };
  struct Tree {
    std::string name;
    std::vector<Level> levels;
  };
  const Tree& topology_(int topology) const { return topologies_[static_cast<size_t>(topology)]; }
  const Level& level_(int topology, int level) const { return topology_(topology).levels[static_cast<size_t>(level)]; }

  std::vector<Tree> topologies_;
  size_t slot_count_ = 0;
  std::vector<uint32_t> node_slots_;
  std::vector<size_t> node_slots_start_;  // per node, and one past the last
};

}  // namespace tessera
