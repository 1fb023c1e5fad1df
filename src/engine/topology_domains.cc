#include "engine/topology_domains.h"

#include <map>
#include <utility>

namespace tessera {

TopologyDomains::TopologyDomains(const ClusterSpec& spec) {
  for (const Topology& topology : spec.topologies) {
    Tree tree;
    tree.name = topology.name;
    const std::vector<int32_t>* wider = nullptr;
    for (const std::string& label : topology.levels) {
      Level level;
      level.label = label;
      level.domain_of.assign(spec.nodes.size(), -1);
      std::map<std::pair<int32_t, std::string>, int32_t> ids;  // (parent, value) -> domain
      for (size_t node = 0; node < spec.nodes.size(); ++node) {
        const int32_t parent = wider ? (*wider)[node] : -1;
        if (wider && parent < 0) continue;
        auto value = spec.nodes[node].labels.find(label);
        if (value == spec.nodes[node].labels.end()) continue;
        auto [it, inserted] = ids.try_emplace({parent, value->second}, static_cast<int32_t>(level.domains.size()));
        if (inserted) level.domains.push_back(TopologyDomain{value->second, parent, {}, 0});
        TopologyDomain& domain = level.domains[static_cast<size_t>(it->second)];
        domain.nodes.push_back(static_cast<NodeIndex>(node));
        domain.gpu_capacity_milli += int64_t{spec.nodes[node].gpu_count()} * kMilliPerGpu;
        level.domain_of[node] = it->second;
      }
      level.first_slot = slot_count_;
      slot_count_ += level.domains.size();
      tree.levels.push_back(std::move(level));
      wider = &tree.levels.back().domain_of;
    }
    topologies_.push_back(std::move(tree));
  }
  node_slots_start_.reserve(spec.nodes.size() + 1);
  node_slots_start_.push_back(0);
  for (size_t node = 0; node < spec.nodes.size(); ++node) {
    for (const Tree& tree : topologies_) {
      for (const Level& level : tree.levels) {
        if (level.domain_of[node] >= 0)
          node_slots_.push_back(static_cast<uint32_t>(level.first_slot + static_cast<size_t>(level.domain_of[node])));
      }
    }
    node_slots_start_.push_back(node_slots_.size());
  }
}

int TopologyDomains::find_topology(std::string_view name) const {
  for (size_t i = 0; i < topologies_.size(); ++i) {
    if (topologies_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int TopologyDomains::find_level(int topology, std::string_view label) const {
  const Tree& tree = topology_(topology);
  for (size_t i = 0; i < tree.levels.size(); ++i) {
    if (tree.levels[i].label == label) return static_cast<int>(i);
  }
  return -1;
}

std::string_view TopologyDomains::noun(int topology, int level) const {
  std::string_view text = label(topology, level);
  const size_t slash = text.rfind('/');
  return slash == std::string_view::npos ? text : text.substr(slash + 1);
}

int32_t TopologyDomains::ancestor(int topology, int level, int32_t domain, int wider_level) const {
  for (int at = level; at > wider_level && domain >= 0; --at) {
    domain = domains(topology, at)[static_cast<size_t>(domain)].parent;
  }
  return domain;
}

}  // namespace tessera
