// `tessera top nodes`: each node's GPUs as a map of its devices (how much of each is in use,
// fractions included) and the queues holding them, from the Node objects and the device
// annotations the scheduler writes on the pods it binds (docs/kubernetes.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/user/output.h"

namespace tessera::cli {

struct NodeGpus {
  std::string name;
  std::string model;              // the nvidia.com/gpu.product label; "" when absent
  std::vector<int> device_milli;  // per device: thousandths in use
  std::map<std::string, int> queue_milli;  // GPU thousandths each queue holds here
  int unplaced_milli = 0;  // GPUs of pods whose devices are not known (other schedulers' pods)
  bool schedulable = true;
  // Of its free GPU capacity, what the cluster's pod types cannot use (node_fragmentation.h).
  double fragmented_milli = 0;

  int used_milli() const;
  int free_devices() const;  // devices with nothing on them
};

// Where a pod's GPUs count: its queue (the pod's queue label, its PodGroup's queue, else its
// namespace's label), by "namespace/name" of the pod. Pods left out count as "-".
using PodQueues = std::map<std::string, std::string>;

// The pods that hold room on a node: bound and not finished. Node order is kept.
std::vector<NodeGpus> node_gpus(const nlohmann::json& nodes, const nlohmann::json& pods, const PodQueues& queues);

// One character per device: '#' all in use, '.' free, '1'..'9' the tenths in use of a shared one.
std::string device_map(const std::vector<int>& device_milli);

// NODE, MODEL, GPUS (used/total), MAP, FREE (whole free devices), FRAG (fragmented GPUs),
// QUEUES; wide adds the per-device thousandths and whether it is schedulable.
Table node_table(const std::vector<NodeGpus>& nodes);

// The whole cluster's GPUs, in GPUs.
struct ClusterGpus {
  int gpus = 0;
  double used = 0;
  double fragmented = 0;
  double free() const { return gpus - used; }
};
ClusterGpus cluster_gpus(const std::vector<NodeGpus>& nodes);
// "Cluster: 12.5 of 32 GPUs in use; 19.5 free, of which 1.5 fragmented (7.7%; 4.7% of capacity)".
std::string cluster_line(const ClusterGpus& cluster);

// The nodes as `items`, and the cluster's figures as `cluster`.
nlohmann::json node_json(const std::vector<NodeGpus>& nodes);

}  // namespace tessera::cli
