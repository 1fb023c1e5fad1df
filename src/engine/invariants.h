// The safety invariants that must hold after every commit (checked by tests and, on request,
// by the simulator): no device above 1000 milli, no node over its CPU or memory, whole-GPU pods
// alone on their devices, usage equal to the sum of bound pods, gangs whole.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/workload.h"
#include "engine/cluster_state.h"

namespace tessera {

// Every violation found, as a sentence; empty when the state is sound.
std::vector<std::string> check_invariants(const ClusterState& cluster);

// A gang is whole when none or at least min_member of its pods are bound.
std::vector<std::string> check_gang(const ClusterState& cluster, std::span<const PodId> pods, int min_member);

// A workload's bound pods keep its required topology levels (docs/topology.md): all of them
// within one domain of the workload's level, and each subgroup's within one of its own.
std::vector<std::string> check_topology(const ClusterState& cluster, const WorkloadSpec& spec,
                                        std::span<const PodId> pods);

}  // namespace tessera
