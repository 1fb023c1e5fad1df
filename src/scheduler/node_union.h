#pragma once

#include <cstdint>
#include <vector>

#include "core/node.h"

namespace tessera {

// The nodes of some of many node lists, as bits (word node / 64, bit node % 64): per node, how
// many of the lists counted in hold it. Lists come and go one node at a time, so a union that
// consecutive searches ask for much the same is kept rather than rebuilt.
struct NodeUnion {
  std::vector<uint32_t> count;
  std::vector<uint64_t> bits;

  void resize(size_t nodes) {
    count.assign(nodes, 0);
    bits.assign((nodes + 63) / 64, 0);
  }
  void count_node(NodeIndex node, bool in) {
    const auto index = static_cast<size_t>(node);
    const uint64_t bit = uint64_t{1} << (index % 64);
    if (in) {
      if (count[index]++ == 0) bits[index / 64] |= bit;
    } else if (--count[index] == 0) {
      bits[index / 64] &= ~bit;
    }
  }
};

}  // namespace tessera
