// The arrival experiment of "Beware of Fragmentation": pods of the workload arrive one at a time
// and never leave; each is placed by the policy or fails. The order is the reference's: every
// pod of the workload once in a seeded random order, then pods drawn from it with replacement. Arrivals stop once the
// arrived GPU requests reach target_pct of the cluster's GPU capacity. Every policy sees the same pod sequence for a
// given seed.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/scenario.h"
#include "sim/sim_results.h"

namespace tessera {

struct ArrivalOptions {
  double target_pct = 130;
  std::vector<uint64_t> seeds = {1, 2, 3, 4, 5};
  int threads = 0;                // 0: one per core
  bool check_invariants = false;  // verify the safety invariants after every placement (slow)
  // Ties between equally good nodes: to the lowest index, to the first in a random order of the
  // nodes drawn once per seed (the FGD paper's simulator does this, and its published figures
  // need it), or at random afresh each time (the stock Kubernetes scheduler). Policies that rank
  // by node order (first-fit) keep their order whichever.
  TieBreak tie_break = TieBreak::kLowestIndex;
  bool offline_bound = true;  // also pack each seed's arrived pods offline (offline_packing.h)
};

Result<ArrivalReport> run_arrival_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                             const ArrivalOptions& options);

// One seed of one policy; exposed for benchmarks and tests.
Result<ArrivalRun> run_arrival_seed(const Scenario& scenario, std::string_view policy, uint64_t seed,
                                    const ArrivalOptions& options);

}  // namespace tessera
