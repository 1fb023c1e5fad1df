// Per-dimension shares of a node (CPU, memory, GPU), the common currency of the classic
// heuristics: what fraction of each resource is free, before or after a placement.
#pragma once

#include <array>

#include "core/node.h"
#include "core/node_state.h"

namespace tessera {

// Free CPU, memory and GPU as fractions of the node's capacity (0 where it has none).
std::array<double, 3> free_shares(const NodeSpec& node, const NodeState& state);

// Sum of the free shares over the dimensions the node has (the leftover a best fit minimises).
double leftover(const NodeSpec& node, const NodeState& state);

}  // namespace tessera
