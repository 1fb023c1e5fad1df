#include "cli/bench_estimates_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cli/elapsed.h"
#include "cli/synthetic_world_flags.h"
#include "policy/policy_registry.h"
#include "scheduler/start_estimates.h"
#include "sim/statistics.h"
#include "sim/synthetic_cluster.h"

namespace tessera {

namespace {

struct EstimateBenchOptions {
  SyntheticSpec world = large_synthetic_world();
  EstimateOptions estimates;
  int runs = 3;
};

// A uniform draw in [0, 1) from a workload's id and the seed (splitmix64): the same world gets
// the same runtimes whatever else changes.
double unit_draw(uint64_t seed, WorkloadId id) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(id) + 1;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(uint64_t{1} << 53);
}

// The synthetic world declares no runtimes: running work is given 1 min to 6 h still to run,
// pending work 10 min to 6 h in all, so that the forward run has ends to step through.
std::vector<double> drawn_runtimes(const LoadedWorld& loaded, uint64_t seed) {
  constexpr double kMinute = 60;
  constexpr double kSixHours = 6 * 3600;
  std::vector<double> runtimes(loaded.workloads->size(), -1);
  for (WorkloadId id : loaded.workloads->active()) {
    const double draw = unit_draw(seed, id);
    if (loaded.workloads->is_running(id, *loaded.cluster)) {
      const double ran = std::max(0.0, loaded.now - (*loaded.workloads)[id].started_at);
      runtimes[static_cast<size_t>(id)] = ran + kMinute + draw * (kSixHours - kMinute);
    } else {
      runtimes[static_cast<size_t>(id)] = 10 * kMinute + draw * (kSixHours - 10 * kMinute);
    }
  }
  return runtimes;
}

struct EstimateRun {
  double cycle_seconds = 0;  // the real cycle before the estimates
  StartEstimates estimates;
};

Result<EstimateRun> run_once(const SyntheticWorld& world, const EstimateBenchOptions& options) {
  Result<LoadedWorld> loaded = load_world(world, kDefaultPolicy);
  if (!loaded) return loaded.error();
  EstimateRun run;
  CarriedState carried;
  CycleInputs inputs = loaded->inputs();
  inputs.carried = &carried;
  const auto cycle_start = Clock::now();
  Result<CycleResult> cycle = run_cycle(inputs);
  if (!cycle) return cycle.error();
  run.cycle_seconds = seconds_since(cycle_start);
  const std::vector<double> runtimes = drawn_runtimes(*loaded, options.world.seed);
  auto estimates = estimate_starts({*loaded->cluster, *loaded->policy, *loaded->workloads, *loaded->queues,
                                    *loaded->meter, loaded->now, &carried, runtimes},
                                   CycleOptions{}, options.estimates);
  if (!estimates) return estimates.error();
  run.estimates = std::move(*estimates);
  return run;
}

int run_estimate_bench(const EstimateBenchOptions& options) {
  const SyntheticWorld world = make_synthetic_world(options.world);
  fmt::print(
      "Start-time estimates on a synthetic cluster — {} nodes × 8 GPUs, {} queues; {} running pods in {} workloads, "
      "{} pending pods in {} workloads; at most {} forward cycles and {:.2f} s per estimate; {} runs\n",
      options.world.nodes, options.world.queues, world.running_pods, world.running_workloads, world.pending_pods,
      world.pending_workloads, options.estimates.max_steps, options.estimates.max_wall_seconds, options.runs);
  fmt::print("{:>4} {:>12} {:>12} {:>7} {:>12} {:>10} {:>10} {:>22}\n", "run", "real cycle", "estimates", "steps",
             "per step", "estimated", "unreached", "stopped by");
  std::vector<double> seconds;
  for (int i = 0; i < options.runs; ++i) {
    Result<EstimateRun> run = run_once(world, options);
    if (!run) {
      fmt::print(stderr, "error: {}\n", run.error().message);
      return 2;
    }
    const StartEstimates& estimates = run->estimates;
    seconds.push_back(estimates.seconds);
    fmt::print("{:>4} {:>9.1f} ms {:>9.1f} ms {:>7} {:>9.1f} ms {:>10} {:>10} {:>22}\n", i + 1,
               run->cycle_seconds * 1000, estimates.seconds * 1000, estimates.steps,
               estimates.seconds * 1000 / std::max(1, estimates.steps), estimates.estimates.size(),
               estimates.unreached.size(), estimate_stop_name(estimates.stop));
  }
  fmt::print("estimates: median {:.1f} ms per call\n", median(seconds) * 1000);
  return 0;
}

}  // namespace

void add_bench_estimates_command(CLI::App& bench, int& exit_code) {
  auto options = std::make_shared<EstimateBenchOptions>();
  CLI::App* command = bench.add_subcommand(
      "estimates",
      "Time the start-time estimates (the cycle run forward in simulated time) after one real cycle on a synthetic "
      "multi-tenant cluster, whose running and pending work is given drawn runtimes");
  add_synthetic_world_flags(*command, options->world, "Seed of the world and its runtimes");
  command->add_option("--steps", options->estimates.max_steps, "Forward cycles per estimate at most")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  command->add_option("--budget", options->estimates.max_wall_seconds, "Wall-clock seconds per estimate at most")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  command->add_option("--runs", options->runs, "Runs, each on a freshly loaded world")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  command->callback([options, &exit_code] { exit_code = run_estimate_bench(*options); });
}

}  // namespace tessera
