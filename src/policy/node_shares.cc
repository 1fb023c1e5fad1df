#include "policy/node_shares.h"

namespace tessera {

std::array<double, 3> free_shares(const NodeSpec& node, const NodeState& state) {
  auto share = [](double free, double capacity) { return capacity > 0 ? free / capacity : 0.0; };
  return {share(static_cast<double>(state.free.cpu_milli), static_cast<double>(node.allocatable.cpu_milli)),
          share(static_cast<double>(state.free.memory_bytes), static_cast<double>(node.allocatable.memory_bytes)),
          share(static_cast<double>(state.gpu_free_total()), static_cast<double>(node.gpu_count()) * kMilliPerGpu)};
}

double leftover(const NodeSpec& node, const NodeState& state) {
  auto shares = free_shares(node, state);
  return shares[0] + shares[1] + shares[2];
}

}  // namespace tessera
