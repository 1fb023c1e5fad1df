// The topology experiment (docs/topology.md, docs/results.md): one scenario with a topology
// replayed through the scheduling cycle per placement policy, with topology off (constraints
// ignored) and on under each domain rule — Tessera's fragmentation-aware choice and the peers'
// two simple rules (the fullest domain that fits; best fit by free capacity) — and without
// topology-aware room-making for gangs with a required level. Per run: the share
// of multi-node gangs within one domain of each level, job completion time, GPU allocation, and
// the wait of gangs with a required level.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/scenario.h"
#include "sim/timeline_replay.h"

namespace tessera {

struct TopologyRun {
  std::string policy;
  // "off"; the domain rule: "fragmentation", "fullest", "best-fit"; "no-room": fragmentation
  // without room made for gangs with a required level
  std::string topology;
  TimelinePolicyResult result;
};

struct TopologyReport {
  std::string scenario;
  std::string cluster_source;
  std::string workload_source;
  int nodes = 0;
  int64_t gpus = 0;
  std::vector<std::string> levels;  // of the topology measured
  std::vector<double> run_time_factors;
  std::vector<TopologyRun> runs;  // per policy: off, then each rule
};

// Fails on a scenario without queues (the cycle replays it) or without a topology.
Result<TopologyReport> run_topology_experiment(const Scenario& scenario, std::span<const std::string> policies,
                                               const TimelineOptions& options);

// Of the multi-node gangs started, the share (%) within one domain of the level (0 without any).
double within_share_pct(const TopologySummary& topology, size_t level);

// A level as people say it: the label key's last segment ("tessera.dev/rack" -> "rack").
std::string level_noun(const std::string& label);

// The report as a table, one row per run.
std::string topology_table(const TopologyReport& report);

}  // namespace tessera
