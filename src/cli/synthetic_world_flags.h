// The world and flags of the bench commands that run on a synthetic multi-tenant cluster
// (sim/synthetic_cluster.h): its size, its work and its seed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "sim/synthetic_cluster.h"

namespace tessera {

// The world the 10,000-node benchmarks default to: 60,000 running and 20,000 pending pods.
inline SyntheticSpec large_synthetic_world() {
  SyntheticSpec spec;
  spec.nodes = 10000;
  spec.running_pods = 60000;
  spec.pending_pods = 20000;
  return spec;
}

inline void add_synthetic_world_flags(CLI::App& command, SyntheticSpec& world, const char* seed_help) {
  command.add_option("--nodes", world.nodes, "Nodes of 8 GPUs")->check(CLI::Range(1, 1000000))->capture_default_str();
  command.add_option("--pending", world.pending_pods, "Pending pods")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}))
      ->capture_default_str();
  command.add_option("--running", world.running_pods, "Running pods (fewer if the cluster fills first)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}))
      ->capture_default_str();
  command.add_option("--queues", world.queues, "Leaf queues")->check(CLI::Range(1, 100000))->capture_default_str();
  command.add_option("--seed", world.seed, seed_help)->capture_default_str();
}

}  // namespace tessera
