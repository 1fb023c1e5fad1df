#include "cli/bench_command.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/policy_list.h"
#include "sim/arrival_replay.h"
#include "sim/scenario_loader.h"
#include "sim/statistics.h"

namespace tessera {

namespace {

struct ReplayBenchOptions {
  ScenarioRequest scenario;
  std::string policies = "tessera,fgd,best-fit,dot-product,gpu-packing,first-fit,spread";
  int repeat = 5;
  double target_pct = 130;
};

int run_replay_bench(const ReplayBenchOptions& options) {
  auto scenario = load_scenario(options.scenario);
  if (!scenario) {
    fmt::print(stderr, "error: {}\n", scenario.error().message);
    return 2;
  }
  fmt::print("Full arrival replay ({}% of GPU capacity) of {} on {} — one thread, {} runs each (seeds 1..{})\n",
             options.target_pct, scenario->workload_source, scenario->cluster_source, options.repeat, options.repeat);
  fmt::print("{:<12} {:>10} {:>10} {:>10} {:>8} {:>14}\n", "policy", "median", "min", "max", "pods", "pods/second");
  ArrivalOptions arrival;
  arrival.target_pct = options.target_pct;
  for (const std::string& policy : split_policy_list(options.policies)) {
    std::vector<double> seconds;
    int64_t pods = 0;
    for (int i = 0; i < options.repeat; ++i) {
      auto run = run_arrival_seed(*scenario, policy, static_cast<uint64_t>(i) + 1, arrival);
      if (!run) {
        fmt::print(stderr, "error: {}\n", run.error().message);
        return 2;
      }
      seconds.push_back(run->wall_seconds);
      pods = run->pods_arrived;
    }
    const double typical = median(seconds);
    const auto [fastest, slowest] = std::minmax_element(seconds.begin(), seconds.end());
    fmt::print("{:<12} {:>9.3f}s {:>9.3f}s {:>9.3f}s {:>8} {:>14.0f}\n", policy, typical, *fastest, *slowest, pods,
               static_cast<double>(pods) / typical);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print timings");
  bench->require_subcommand(1);
  auto options = std::make_shared<ReplayBenchOptions>();
  CLI::App* replay =
      bench->add_subcommand("replay", "Wall time of a full arrival replay per policy (median of --repeat runs)");
  replay->add_option("--cluster", options->scenario.cluster, "Nodes: builtin:NAME, CSV or YAML")->capture_default_str();
  replay->add_option("--workload", options->scenario.workload, "Pods: builtin:NAME, CSV or YAML")
      ->capture_default_str()
      ->each([options](const std::string&) { options->scenario.workload_given = true; });
  replay->add_option("--policy", options->policies, "Comma-separated policies")->capture_default_str();
  replay->add_option("--repeat", options->repeat, "Runs per policy")->check(CLI::Range(1, 1000))->capture_default_str();
  replay->add_option("--target-pct", options->target_pct, "Stop once arrived GPU requests reach this % of capacity")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  replay->callback([options, &exit_code] { exit_code = run_replay_bench(*options); });
}

}  // namespace tessera
