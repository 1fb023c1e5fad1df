// A topology experiment's report for the report tests (JSON, HTML): per policy result given, one
// run with topology off and one under the fragmentation rule, on block > rack. Of 8 multi-node
// gangs all start within one block, and within one rack 3 with topology off, 7 with it on.
#pragma once

#include <string>
#include <vector>

#include "sim/topology_experiment.h"

namespace tessera::testing {

inline TopologyReport topology_report_of(const std::vector<TimelinePolicyResult>& policies) {
  TopologyReport report;
  report.scenario = "racks <demo>";
  report.cluster_source = "racks.yaml";
  report.workload_source = "racks.yaml";
  report.nodes = 64;
  report.gpus = 512;
  report.levels = {"tessera.dev/block", "tessera.dev/rack"};
  report.run_time_factors = {1.4, 1.15, 1};
  for (const TimelinePolicyResult& policy : policies) {
    for (const char* topology : {"off", "fragmentation"}) {
      TopologyRun run{policy.policy, topology, policy};
      CycleReplayResult& cycle = run.result.cycle.emplace();
      cycle.jct_seconds = {1200, 2400.00049, 3000, 3600, 1500};
      cycle.topology.levels = report.levels;
      cycle.topology.multi_node_gangs = 8;
      cycle.topology.within = {8, std::string(topology) == "off" ? 3 : 7};
      cycle.topology.required_gangs = 4;
      cycle.topology.required_started = 3;
      cycle.topology.required_wait_seconds = {300, 1560, 1560, 1560, 700};
      cycle.churn.whole_workloads = 5;
      report.runs.push_back(std::move(run));
    }
  }
  return report;
}

}  // namespace tessera::testing
