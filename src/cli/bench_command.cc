#include "cli/bench_command.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/bench_bind_command.h"
#include "cli/bench_dashboard_command.h"
#include "cli/bench_estimates_command.h"
#include "cli/elapsed.h"
#include "cli/policy_list.h"
#include "core/gpu_supply.h"
#include "policy/policy_registry.h"
#include "scheduler/cycle.h"
#include "sim/arrival_replay.h"
#include "sim/html_report.h"
#include "sim/scenario_loader.h"
#include "sim/statistics.h"
#include "sim/synthetic_cluster.h"

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
  const std::vector<std::string> policies = split_policy_list(options.policies);
  for (const std::string& policy : policies) {
    if (auto known = make_policy(policy, WorkloadMix()); !known) {
      fmt::print(stderr, "error: --policy: {}\n", known.error().message);
      return 2;
    }
  }
  fmt::print("Full arrival replay ({}% of GPU capacity) of {} on {} — one thread, {} runs each (seeds 1..{})\n",
             options.target_pct, scenario->workload_source, scenario->cluster_source, options.repeat, options.repeat);
  fmt::print("{:<12} {:>10} {:>10} {:>10} {:>8} {:>14}\n", "policy", "median", "min", "max", "pods", "pods/second");
  ArrivalOptions arrival;
  arrival.target_pct = options.target_pct;
  // The policies take turns, run by run, so that a machine whose load changes while they run
  // slows each of them alike: their medians are compared.
  std::vector<std::vector<double>> seconds(policies.size());
  std::vector<int64_t> pods(policies.size(), 0);
  for (int i = 0; i < options.repeat; ++i) {
    for (size_t p = 0; p < policies.size(); ++p) {
      auto run = run_arrival_seed(*scenario, policies[p], static_cast<uint64_t>(i) + 1, arrival);
      if (!run) {
        fmt::print(stderr, "error: {}\n", run.error().message);
        return 2;
      }
      seconds[p].push_back(run->wall_seconds);
      pods[p] = run->pods_arrived;
    }
  }
  for (size_t p = 0; p < policies.size(); ++p) {
    const double typical = median(seconds[p]);
    const auto [fastest, slowest] = std::minmax_element(seconds[p].begin(), seconds[p].end());
    fmt::print("{:<12} {:>9.3f}s {:>9.3f}s {:>9.3f}s {:>8} {:>14.0f}\n", policies[p], typical, *fastest, *slowest,
               pods[p], static_cast<double>(pods[p]) / typical);
  }
  return 0;
}

// --- The scheduling cycle on synthetic clusters (`bench cycle`, `bench reclaim`) -------------

struct CycleBenchOptions {
  SyntheticSpec world;
  int cycles = 5;
  std::string policy = std::string(kDefaultPolicy);
  std::string json_path;
};

struct ReclaimBenchOptions {
  ReclaimSpec world;
  int cycles = 5;
  std::string policy = std::string(kDefaultPolicy);
  std::string json_path;
};

// The options `bench cycle` and `bench reclaim` share: how many cycles, the world's seed, the
// policy and the JSON file.
void add_timing_options(CLI::App* command, int& cycles, uint64_t& seed, std::string& policy, std::string& json_path) {
  command->add_option("--cycles", cycles, "Cycles to time, each on a freshly loaded world")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--seed", seed, "Seed of the synthetic world")->capture_default_str();
  command->add_option("--policy", policy, fmt::format("Placement policy: {}", fmt::join(policy_names(), ", ")))
      ->capture_default_str();
  command->add_option("--json", json_path,
                      "Also write the figures as JSON to this file (schema: docs/bench-json-schema.md)");
}

// JSON figures: seconds to the microsecond, MiB and GPUs to 3 decimals.
double micro(double seconds) { return std::round(seconds * 1e6) / 1e6; }
double milli(double value) { return std::round(value * 1e3) / 1e3; }

// Resident memory now (/proc/self/statm), in MiB; NaN where the file cannot be read.
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long total_pages = 0;
  long resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return std::nan("");
  return static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The most resident memory the process has held (getrusage), in MiB.
double peak_resident_mib() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nan("");
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

std::string thousands(int64_t value) {
  std::string digits = fmt::format("{}", value < 0 ? -value : value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return value < 0 ? "-" + text : text;
}

// GPUs to one decimal, with thousands separators; whole numbers without the decimal.
std::string gpus_text(double gpus) {
  const auto tenths = static_cast<int64_t>(std::llround(gpus * 10));
  if (tenths % 10 == 0) return thousands(tenths / 10);
  return fmt::format("{}.{}", thousands(tenths / 10), std::abs(tenths % 10));
}

// One cycle's figures.
struct CycleSample {
  double load_seconds = 0;
  double fair_share_seconds = 0;
  double reserve_seconds = 0;
  int reservations_made = 0;
  std::array<ActionStats, kActionCount> actions{};
  double total_seconds = 0;
  int started_workloads = 0;
  int64_t placed_pods = 0;
  int evicted_workloads = 0;  // whole workloads or elastic extras taken off their nodes, not moved
  int64_t evicted_pods = 0;
  double evicted_gpus = 0;
  int64_t moved_pods = 0;  // consolidation: evicted and re-placed in the same cycle
  int pending_workloads = 0;
  std::vector<Start> started;
  uint64_t decisions = 0;  // decision_digest of the cycle's result
  uint64_t reasons = 0;    // reason_digest of the cycle's result
};

// FNV-1a, 64 bits, a byte at a time.
struct Fnv1a {
  uint64_t digest = 14695981039346656037ull;
  void mix(int64_t value) {
    for (int byte = 0; byte < 8; ++byte) add_byte(static_cast<uint64_t>(value >> (8 * byte)) & 0xff);
  }
  void mix(std::string_view text) {
    for (char c : text) add_byte(static_cast<unsigned char>(c));
    mix(static_cast<int64_t>(text.size()));
  }
  void add_byte(uint64_t byte) {
    digest ^= byte;
    digest *= 1099511628211ull;
  }
};

// A fingerprint of what a cycle decided, in order: every binding made or given up, every
// eviction (of what, by which action, for whom), every start and every reservation. Equal
// digests from two builds on one world mean they decided the same, whatever their speed.
uint64_t decision_digest(const CycleResult& result) {
  Fnv1a fnv;
  auto mix = [&fnv](int64_t value) { fnv.mix(value); };
  for (const Operation& operation : result.operations) {
    mix(static_cast<int64_t>(operation.kind));
    mix(operation.pod);
    mix(operation.binding.node);
    mix(operation.binding.milli_per_device);
    for (int16_t device : operation.binding.devices) mix(device);
  }
  for (const Eviction& eviction : result.evictions) {
    mix(eviction.workload);
    mix(static_cast<int64_t>(eviction.action));
    mix(eviction.beneficiary);
    mix(eviction.moved ? 1 : 0);
    for (PodId pod : eviction.pods) mix(pod);
  }
  for (const Start& start : result.started) {
    mix(start.workload);
    mix(static_cast<int64_t>(start.action));
  }
  for (const Reservation& reservation : result.reservations) {
    mix(reservation.workload);
    for (NodeIndex node : reservation.nodes) mix(node);
  }
  return fnv.digest;
}

// A fingerprint of why each workload still waits, as its user reads it: every pending workload,
// in order, with its reason's sentence and the attempts to make room.
uint64_t reason_digest(const CycleResult& result, const QueueTree& tree) {
  Fnv1a fnv;
  for (const PendingWorkload& pending : result.pending) {
    fnv.mix(pending.workload);
    fnv.mix(describe(pending.reason, tree));
    for (const RoomAttempt& attempt : room_attempts(pending.reason, tree)) {
      fnv.mix(attempt.action);
      fnv.mix(attempt.outcome);
    }
  }
  return fnv.digest;
}

// Loads the world (timed apart) and runs one cycle on it. `resident_after_load`, when given,
// receives the resident memory with the world loaded, before the cycle.
Result<CycleSample> time_cycle(const SyntheticWorld& world, const std::string& policy,
                               double* resident_after_load = nullptr) {
  CycleSample sample;
  const auto load_start = std::chrono::steady_clock::now();
  Result<LoadedWorld> loaded = load_world(world, policy);
  if (!loaded) return loaded.error();
  sample.load_seconds = seconds_since(load_start);
  if (resident_after_load) *resident_after_load = resident_mib();
  const ClusterState& cluster = *loaded->cluster;
  std::vector<bool> bound_before(static_cast<size_t>(cluster.pod_count()));
  for (PodId pod = 0; pod < cluster.pod_count(); ++pod)
    bound_before[static_cast<size_t>(pod)] = cluster.binding(pod).has_value();

  Result<CycleResult> result = run_cycle(loaded->inputs());
  if (!result) return result.error();

  sample.fair_share_seconds = result->fair_share_seconds;
  sample.reserve_seconds = result->reserve_seconds;
  sample.reservations_made = result->reservations_made;
  for (int action = 0; action < kActionCount; ++action)
    sample.actions[static_cast<size_t>(action)] = result->actions[action];
  sample.total_seconds = result->total_seconds;
  sample.started_workloads = static_cast<int>(result->started.size());
  sample.pending_workloads = static_cast<int>(result->pending.size());
  for (PodId pod = 0; pod < cluster.pod_count(); ++pod) {
    const bool before = bound_before[static_cast<size_t>(pod)];
    const bool after = cluster.binding(pod).has_value();
    if (!before && after) ++sample.placed_pods;
    if (before && !after) ++sample.evicted_pods;
  }
  for (const Eviction& eviction : result->evictions) {
    if (eviction.moved) {
      sample.moved_pods += static_cast<int64_t>(eviction.pods.size());
    } else {
      ++sample.evicted_workloads;
      sample.evicted_gpus += static_cast<double>(eviction.gpu_milli) / kMilliPerGpu;
    }
  }
  sample.decisions = decision_digest(*result);
  sample.reasons = reason_digest(*result, *loaded->queues);
  sample.started = std::move(result->started);
  return sample;
}

struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
};

template <typename Get>
Spread spread_of(const std::vector<CycleSample>& samples, Get get) {
  std::vector<double> values;
  for (const CycleSample& sample : samples) values.push_back(get(sample));
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return {median(values), *low, *high};
}

nlohmann::json spread_json(const Spread& spread) {
  return {{"median", micro(spread.median)}, {"min", micro(spread.min)}, {"max", micro(spread.max)}};
}

std::string ms(double seconds) {
  const double milliseconds = seconds * 1000;
  return milliseconds < 10 ? fmt::format("{:.2f} ms", milliseconds) : fmt::format("{:.1f} ms", milliseconds);
}

// The part of a cycle outside fair share and the actions: the snapshot of what every queue holds
// and asks for, building the cycle's context, and assembling the result.
double rest_seconds(const CycleSample& sample) {
  double steps = sample.fair_share_seconds + sample.reserve_seconds;
  for (const ActionStats& action : sample.actions) steps += action.seconds;
  return std::max(0.0, sample.total_seconds - steps);
}

// The per-step table: fair share, each action, the rest, the whole cycle.
void print_step_table(const std::vector<CycleSample>& samples) {
  fmt::print("{:<13} {:>11} {:>11} {:>11} {:>9} {:>9} {:>10}\n", "step", "median", "min", "max", "attempts", "started",
             "evictions");
  const Spread fair = spread_of(samples, [](const CycleSample& s) { return s.fair_share_seconds; });
  fmt::print("{:<13} {:>11} {:>11} {:>11}\n", "fair share", ms(fair.median), ms(fair.min), ms(fair.max));
  const CycleSample& first = samples.front();
  for (int action = 0; action < kActionCount; ++action) {
    const auto index = static_cast<size_t>(action);
    const Spread time = spread_of(samples, [index](const CycleSample& s) { return s.actions[index].seconds; });
    const ActionStats& stats = first.actions[index];
    fmt::print("{:<13} {:>11} {:>11} {:>11} {:>9} {:>9} {:>10}\n", action_name(static_cast<Action>(action)),
               ms(time.median), ms(time.min), ms(time.max), thousands(stats.attempts), thousands(stats.started),
               thousands(stats.evictions));
  }
  const Spread reserve = spread_of(samples, [](const CycleSample& s) { return s.reserve_seconds; });
  fmt::print("{:<13} {:>11} {:>11} {:>11} {:>9}\n", "reserve", ms(reserve.median), ms(reserve.min), ms(reserve.max),
             fmt::format("{} new", thousands(first.reservations_made)));
  const Spread rest = spread_of(samples, rest_seconds);
  fmt::print("{:<13} {:>11} {:>11} {:>11}\n", "rest", ms(rest.median), ms(rest.min), ms(rest.max));
  const Spread total = spread_of(samples, [](const CycleSample& s) { return s.total_seconds; });
  fmt::print("{:<13} {:>11} {:>11} {:>11}\n", "whole cycle", ms(total.median), ms(total.min), ms(total.max));
  fmt::print(
      "(rest: the cycle outside fair share, reserve and the actions — its snapshot of queue loads, setup and "
      "result)\n");
}

// Whether every cycle decided the same (the world and the engine are deterministic, so they
// should); the table shows the first cycle's counts.
bool same_outcome(const std::vector<CycleSample>& samples) {
  for (const CycleSample& sample : samples) {
    const CycleSample& first = samples.front();
    if (sample.started_workloads != first.started_workloads || sample.placed_pods != first.placed_pods ||
        sample.evicted_pods != first.evicted_pods || sample.moved_pods != first.moved_pods ||
        sample.decisions != first.decisions || sample.reasons != first.reasons) {
      return false;
    }
  }
  return true;
}

nlohmann::json sample_json(const CycleSample& sample) {
  nlohmann::json actions = nlohmann::json::array();
  for (int action = 0; action < kActionCount; ++action) {
    const ActionStats& stats = sample.actions[static_cast<size_t>(action)];
    actions.push_back({{"action", action_name(static_cast<Action>(action))},
                       {"seconds", micro(stats.seconds)},
                       {"attempts", stats.attempts},
                       {"started", stats.started},
                       {"evictions", stats.evictions}});
  }
  return {{"load_seconds", micro(sample.load_seconds)},
          {"fair_share_seconds", micro(sample.fair_share_seconds)},
          {"reserve_seconds", micro(sample.reserve_seconds)},
          {"reservations_made", sample.reservations_made},
          {"actions", actions},
          {"total_seconds", micro(sample.total_seconds)},
          {"started_workloads", sample.started_workloads},
          {"placed_pods", sample.placed_pods},
          {"evicted_workloads", sample.evicted_workloads},
          {"evicted_pods", sample.evicted_pods},
          {"evicted_gpus", milli(sample.evicted_gpus)},
          {"moved_pods", sample.moved_pods},
          {"pending_workloads", sample.pending_workloads},
          {"decisions", fmt::format("{:016x}", sample.decisions)},
          {"reasons", fmt::format("{:016x}", sample.reasons)}};
}

nlohmann::json seconds_json(const std::vector<CycleSample>& samples) {
  nlohmann::json seconds;
  seconds["fair_share"] = spread_json(spread_of(samples, [](const CycleSample& s) { return s.fair_share_seconds; }));
  for (int action = 0; action < kActionCount; ++action) {
    const auto index = static_cast<size_t>(action);
    seconds[std::string(action_name(static_cast<Action>(action)))] =
        spread_json(spread_of(samples, [index](const CycleSample& s) { return s.actions[index].seconds; }));
  }
  seconds["reserve"] = spread_json(spread_of(samples, [](const CycleSample& s) { return s.reserve_seconds; }));
  seconds["rest"] = spread_json(spread_of(samples, rest_seconds));
  seconds["cycle"] = spread_json(spread_of(samples, [](const CycleSample& s) { return s.total_seconds; }));
  seconds["load"] = spread_json(spread_of(samples, [](const CycleSample& s) { return s.load_seconds; }));
  return seconds;
}

struct MemoryFigures {
  double start = 0;      // before anything was built
  double generated = 0;  // the world described (specs, bindings)
  double loaded = 0;     // and loaded into the cycle's structures, before the first cycle
  double peak = 0;       // the most held at any time, cycles included
};

nlohmann::json memory_json(const MemoryFigures& memory) {
  return {{"start", milli(memory.start)},
          {"generated", milli(memory.generated)},
          {"loaded", milli(memory.loaded)},
          {"peak", milli(memory.peak)}};
}

void print_memory(const MemoryFigures& memory) {
  fmt::print(
      "memory: resident {:.0f} MiB at start, {:.0f} MiB with the world generated, {:.0f} MiB with it loaded "
      "for the first cycle; peak resident {:.0f} MiB\n",
      memory.start, memory.generated, memory.loaded, memory.peak);
}

int write_json(const std::string& path, const nlohmann::json& json) {
  if (path.empty()) return 0;
  if (Status written = write_file_atomically(path, json.dump(2) + "\n"); !written) {
    fmt::print(stderr, "error: {}\n", written.error().message);
    return 2;
  }
  fmt::print("\nJSON: {}\n", path);
  return 0;
}

// Runs the cycles; the first load is measured for memory before its cycle runs.
Result<std::vector<CycleSample>> run_cycles(const SyntheticWorld& world, const std::string& policy, int cycles,
                                            MemoryFigures& memory) {
  std::vector<CycleSample> samples;
  for (int i = 0; i < cycles; ++i) {
    Result<CycleSample> sample = time_cycle(world, policy, i == 0 ? &memory.loaded : nullptr);
    if (!sample) return sample.error();
    samples.push_back(std::move(sample).value());
  }
  memory.peak = peak_resident_mib();
  return samples;
}

int run_cycle_bench(const CycleBenchOptions& options) {
  if (Result<PlacementPolicyPtr> probe = make_policy(options.policy, WorkloadMix()); !probe) {
    fmt::print(stderr, "error: {}\n", probe.error().message);
    return 2;
  }
  MemoryFigures memory;
  memory.start = resident_mib();
  const auto generate_start = std::chrono::steady_clock::now();
  const SyntheticWorld world = make_synthetic_world(options.world);
  const double generate_seconds = seconds_since(generate_start);
  memory.generated = resident_mib();
  const ClusterSpec& cluster = *world.cluster;
  int a100_nodes = 0;
  const GpuModelId a100 = cluster.models.find("A100").value_or(GpuModelId{255});
  int64_t cpu_capacity_milli = 0;
  for (const NodeSpec& node : cluster.nodes) {
    a100_nodes += !node.gpus.empty() && node.gpus.front().model == a100;
    cpu_capacity_milli += node.allocatable.cpu_milli;
  }
  const int64_t gpus = cluster.gpu_capacity_milli() / kMilliPerGpu;
  const double asked_share =
      cpu_asked_share(world.mix.cpu_per_gpu_milli(), cluster.gpu_capacity_milli(), cpu_capacity_milli);
  const double running_gpus = static_cast<double>(world.running_gpu_milli) / kMilliPerGpu;
  const double pending_gpus = static_cast<double>(world.pending_gpu_milli) / kMilliPerGpu;

  fmt::print("Scheduling cycle on a synthetic cluster — policy {}, seed {}, median of {} cycle{}\n", options.policy,
             options.world.seed, options.cycles, options.cycles == 1 ? "" : "s");
  const int h100_nodes = options.world.nodes - a100_nodes;
  fmt::print("  cluster:  {} nodes × 8 GPUs = {} GPUs ({} H100 node{}, {} A100)\n", thousands(options.world.nodes),
             thousands(gpus), thousands(h100_nodes), h100_nodes == 1 ? "" : "s", thousands(a100_nodes));
  fmt::print("  cpu:      {} cores; the pods, filling the GPUs, would ask {:.2f} times that{}\n",
             thousands(cpu_capacity_milli / 1000), asked_share, asked_share > 1 ? " (CPU runs out first)" : "");
  fmt::print("  queues:   {} projects in {} departments\n", thousands(options.world.queues), world.departments);
  if (!cluster.topologies.empty()) {
    fmt::print("  topology: {} (multi-pod gangs within one block, one rack preferred)\n",
               fmt::join(cluster.topologies.front().levels, " > "));
  }
  fmt::print("  running:  {} pods in {} workloads on {} GPUs ({:.1f}% of capacity){}\n", thousands(world.running_pods),
             thousands(world.running_workloads), gpus_text(running_gpus),
             100.0 * running_gpus / static_cast<double>(gpus),
             world.running_pods < options.world.running_pods
                 ? fmt::format("; {} asked, no more fit", thousands(options.world.running_pods))
                 : "");
  fmt::print("  pending:  {} pods in {} workloads asking for {} GPUs\n", thousands(world.pending_pods),
             thousands(world.pending_workloads), gpus_text(pending_gpus));

  Result<std::vector<CycleSample>> samples = run_cycles(world, options.policy, options.cycles, memory);
  if (!samples) {
    fmt::print(stderr, "error: {}\n", samples.error().message);
    return 2;
  }
  const Spread load = spread_of(*samples, [](const CycleSample& s) { return s.load_seconds; });
  fmt::print("  setup:    world generated in {:.2f} s, loaded in {:.2f} s before each cycle (not timed)\n\n",
             generate_seconds, load.median);
  print_step_table(*samples);
  const CycleSample& first = samples->front();
  fmt::print(
      "\nper cycle: {} workloads started ({} pods placed); {} workloads evicted ({} pods, {} GPUs); {} pods "
      "moved; {} workloads still pending{}\n",
      thousands(first.started_workloads), thousands(first.placed_pods), thousands(first.evicted_workloads),
      thousands(first.evicted_pods), gpus_text(first.evicted_gpus), thousands(first.moved_pods),
      thousands(first.pending_workloads), same_outcome(*samples) ? "" : " (first cycle; the cycles differed)");
  fmt::print("decisions: {:016x} (a digest of every binding, eviction, start and reservation, in order)\n",
             first.decisions);
  fmt::print("reasons: {:016x} (a digest of why each workload still waits, in order)\n", first.reasons);
  print_memory(memory);

  nlohmann::json runs = nlohmann::json::array();
  for (const CycleSample& sample : *samples) runs.push_back(sample_json(sample));
  const nlohmann::json json = {
      {"schema", "tessera.bench.cycle/v1"},
      {"policy", options.policy},
      {"seed", options.world.seed},
      {"cycles", options.cycles},
      {"cluster",
       {{"nodes", options.world.nodes},
        {"topology_levels", options.world.topology_levels},
        {"gpus", gpus},
        {"node_cpu_share", options.world.node_cpu_share},
        {"cpu_cores", cpu_capacity_milli / 1000},
        {"cpu_asked_share", std::round(asked_share * 1e4) / 1e4},
        {"h100_nodes", options.world.nodes - a100_nodes},
        {"a100_nodes", a100_nodes}}},
      {"queues", {{"projects", options.world.queues}, {"departments", world.departments}}},
      {"running",
       {{"requested_pods", options.world.running_pods},
        {"pods", world.running_pods},
        {"workloads", world.running_workloads},
        {"gpus", milli(running_gpus)}}},
      {"pending",
       {{"pods", world.pending_pods}, {"workloads", world.pending_workloads}, {"gpus", milli(pending_gpus)}}},
      {"generate_seconds", micro(generate_seconds)},
      {"seconds", seconds_json(*samples)},
      {"same_outcome_every_cycle", same_outcome(*samples)},
      {"runs", runs},
      {"memory_mib", memory_json(memory)}};
  return write_json(options.json_path, json);
}

int run_reclaim_bench(const ReclaimBenchOptions& options) {
  if (Result<PlacementPolicyPtr> probe = make_policy(options.policy, WorkloadMix()); !probe) {
    fmt::print(stderr, "error: {}\n", probe.error().message);
    return 2;
  }
  MemoryFigures memory;
  memory.start = resident_mib();
  Result<SyntheticWorld> made = make_reclaim_world(options.world);
  if (!made) {
    fmt::print(stderr, "error: {}\n", made.error().message);
    return 2;
  }
  const SyntheticWorld& world = *made;
  memory.generated = resident_mib();
  const ReclaimSpec& spec = options.world;
  const int64_t needed_gpus = int64_t{spec.gang_pods} * spec.gpus_per_pod;
  const auto gang = static_cast<WorkloadId>(world.workloads.size() - 1);
  int research_projects = 0;
  double urgent_deserved = 0;
  for (const QueueSpec& queue : world.queues) {
    research_projects += queue.parent == "research" ? 1 : 0;
    if (queue.name == "prod-urgent") urgent_deserved = queue.quota_for(0).deserved;
  }

  fmt::print("Reclaim of a large job — policy {}, seed {}, median of {} cycle{}\n", options.policy, spec.seed,
             options.cycles, options.cycles == 1 ? "" : "s");
  fmt::print(
      "  cluster:  {} nodes × 8 H100 = {} GPUs, every one busy: {} preemptible 1- and 2-GPU pods of {} "
      "research project{} above their fair share\n",
      thousands(spec.nodes), thousands(int64_t{spec.nodes} * 8), thousands(world.running_pods), research_projects,
      research_projects == 1 ? "" : "s");
  fmt::print(
      "  job:      a gang of {} pods × {} GPUs = {} GPUs in queue 'prod-urgent' (deserved {} GPUs, holds none)\n",
      spec.gang_pods, spec.gpus_per_pod, thousands(needed_gpus), gpus_text(urgent_deserved));

  Result<std::vector<CycleSample>> samples = run_cycles(world, options.policy, options.cycles, memory);
  if (!samples) {
    fmt::print(stderr, "error: {}\n", samples.error().message);
    return 2;
  }
  fmt::print("\n");
  print_step_table(*samples);

  // The gang's outcome, cycle by cycle: it must start, by reclaim, within the eviction bound.
  int started_cycles = 0;
  int started_by_reclaim = 0;
  for (const CycleSample& sample : *samples) {
    for (const Start& start : sample.started) {
      if (start.workload != gang) continue;
      ++started_cycles;
      started_by_reclaim += start.action == Action::kReclaim ? 1 : 0;
    }
  }
  const CycleSample& first = samples->front();
  const bool started = started_cycles == options.cycles;
  const double ratio = first.evicted_gpus / static_cast<double>(needed_gpus);
  const double bound = CycleOptions{}.max_evicted_gpu_ratio;
  fmt::print("\ngang started: {} in {} of {} cycles, by reclaim in {}\n", started ? "yes" : "NO", started_cycles,
             options.cycles, started_by_reclaim);
  fmt::print("evicted: {} workloads, {} pods, {} GPUs for {} needed (ratio {:.2f}; bound {:.2f}){}\n",
             thousands(first.evicted_workloads), thousands(first.evicted_pods), gpus_text(first.evicted_gpus),
             thousands(needed_gpus), ratio, bound, same_outcome(*samples) ? "" : " (first cycle; the cycles differed)");
  print_memory(memory);

  nlohmann::json runs = nlohmann::json::array();
  for (const CycleSample& sample : *samples) runs.push_back(sample_json(sample));
  const nlohmann::json json = {{"schema", "tessera.bench.reclaim/v1"},
                               {"policy", options.policy},
                               {"seed", spec.seed},
                               {"cycles", options.cycles},
                               {"cluster", {{"nodes", spec.nodes}, {"gpus", int64_t{spec.nodes} * 8}}},
                               {"running",
                                {{"pods", world.running_pods},
                                 {"workloads", world.running_workloads},
                                 {"research_projects", research_projects}}},
                               {"gang",
                                {{"pods", spec.gang_pods},
                                 {"gpus_per_pod", spec.gpus_per_pod},
                                 {"needed_gpus", needed_gpus},
                                 {"started_cycles", started_cycles},
                                 {"started_by_reclaim_cycles", started_by_reclaim}}},
                               {"evicted",
                                {{"workloads", first.evicted_workloads},
                                 {"pods", first.evicted_pods},
                                 {"gpus", milli(first.evicted_gpus)},
                                 {"ratio", milli(ratio)},
                                 {"bound", bound}}},
                               {"seconds", seconds_json(*samples)},
                               {"same_outcome_every_cycle", same_outcome(*samples)},
                               {"runs", runs},
                               {"memory_mib", memory_json(memory)}};
  if (int status = write_json(options.json_path, json); status != 0) return status;
  if (!started) {
    fmt::print(stderr, "error: the gang did not start in every cycle\n");
    return 1;
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

  auto cycle_options = std::make_shared<CycleBenchOptions>();
  CLI::App* cycle = bench->add_subcommand(
      "cycle",
      "Time one full scheduling cycle (fair share, allocate, consolidate, reclaim, preempt) on a synthetic "
      "multi-tenant cluster: each step and the whole cycle, median of --cycles, and memory");
  cycle->add_option("--nodes", cycle_options->world.nodes, "Nodes of 8 GPUs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cycle->add_option("--pending", cycle_options->world.pending_pods, "Pending pods")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}))
      ->capture_default_str();
  cycle
      ->add_option("--running", cycle_options->world.running_pods,
                   "Running pods, bound before the cycle (fewer if the cluster fills first)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}))
      ->capture_default_str();
  cycle->add_option("--queues", cycle_options->world.queues, "Leaf queues (projects), in about sqrt(Q/2) departments")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cycle
      ->add_option("--topology-levels", cycle_options->world.topology_levels,
                   "Topology levels (zone, block, rack, host: the first N); gangs then need one block and prefer "
                   "one rack")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  cycle
      ->add_option("--node-cpu-share", cycle_options->world.node_cpu_share,
                   "Nodes' CPU as a share of 128 cores (H100 nodes) and 96 (A100); at 0.7 or less CPU runs out "
                   "before GPUs do")
      ->check(CLI::Range(0.05, 4.0))
      ->capture_default_str();
  add_timing_options(cycle, cycle_options->cycles, cycle_options->world.seed, cycle_options->policy,
                     cycle_options->json_path);
  cycle->callback([cycle_options, &exit_code] { exit_code = run_cycle_bench(*cycle_options); });

  auto reclaim_options = std::make_shared<ReclaimBenchOptions>();
  CLI::App* reclaim = bench->add_subcommand(
      "reclaim", "Time the reclaim of room for one large gang on a cluster full of other queues' preemptible pods");
  reclaim->add_option("--nodes", reclaim_options->world.nodes, "Nodes of 8 GPUs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  reclaim->add_option("--gang-pods", reclaim_options->world.gang_pods, "Pods in the gang")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  reclaim->add_option("--gpus-per-pod", reclaim_options->world.gpus_per_pod, "Whole GPUs per gang pod")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  add_timing_options(reclaim, reclaim_options->cycles, reclaim_options->world.seed, reclaim_options->policy,
                     reclaim_options->json_path);
  reclaim->callback([reclaim_options, &exit_code] { exit_code = run_reclaim_bench(*reclaim_options); });

  add_bench_bind_command(*bench, exit_code);
  add_bench_estimates_command(*bench, exit_code);
  add_bench_dashboard_command(*bench, exit_code);
}

}  // namespace tessera
