#pragma once

#include <cstddef>
#include <vector>

namespace tessera {

// Items that each name a node (`node`), reordered by node and, within a node, in the order given
// (a counting sort): node n's are [start[n], start[n + 1]). An index built item by item sorts its
// items once this way instead of keeping a list per node, which costs an allocation each.
template <typename Item>
std::vector<Item> by_node(const std::vector<Item>& items, size_t node_count, std::vector<size_t>& start) {
  start.assign(node_count + 1, 0);
  for (const Item& item : items) ++start[static_cast<size_t>(item.node) + 1];
  for (size_t node = 0; node < node_count; ++node) start[node + 1] += start[node];
  std::vector<Item> sorted(items.size());
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (const Item& item : items) sorted[next[static_cast<size_t>(item.node)]++] = item;
  return sorted;
}

}  // namespace tessera
