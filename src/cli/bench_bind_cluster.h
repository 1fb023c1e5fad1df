// `tessera bench bind --kubeconfig FILE`: pods bound per second on a running cluster (a real
// control plane with KWOK's fake nodes: scripts/bench-real-cluster.sh), for `tessera scheduler`
// and, with --kube-scheduler PATH, for the upstream kube-scheduler on the same server in the same
// run. Each scheduler runs as a process of its own, so its CPU seconds and peak memory are its own.
#pragma once

#include <string>

namespace tessera {

struct ClusterBindBenchOptions {
  std::string kubeconfig;
  std::string tessera;         // the tessera binary that runs `tessera scheduler`
  std::string kube_scheduler;  // empty: Tessera only
  int pods = 5000;
  int gpus_per_pod = 1;
  int create_workers = 16;  // concurrent creates while the pending pods are made
  double timeout_seconds = 900;
  std::string json_path;
};

// Prints the figures; 0 when every run bound every pod, 1 otherwise, 2 for bad options.
int run_cluster_bind_bench(const ClusterBindBenchOptions& options);

}  // namespace tessera
