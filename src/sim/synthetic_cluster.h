// Synthetic multi-tenant GPU clusters for the cycle benchmarks (`tessera bench cycle`, `tessera
// bench reclaim`): nodes, a department → project queue tree, running and pending workloads, all
// drawn from one seed so that a figure can be reproduced exactly (with one standard library: its
// random distributions are its own). Running pods are bound up front
// by a plain first-fit, without a scheduling cycle, so that building a 50,000-pod world takes a
// fraction of a second and every cycle starts from the same state.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/binding.h"
#include "core/cluster.h"
#include "core/queue.h"
#include "core/result.h"
#include "core/workload.h"
#include "engine/cluster_state.h"
#include "engine/placer.h"
#include "policy/fair_share.h"
#include "policy/placement_policy.h"
#include "policy/workload_mix.h"
#include "scheduler/cycle.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"

namespace tessera {

// A training cluster as the figures of docs/design.md §9 (cycle speed) describe it.
//
// Nodes: 8 × H100 80 GiB, 128 cores, 1 TiB (about 70%) or 8 × A100 80 GiB, 96 cores, 768 GiB.
// Queues: round(sqrt(queues / 2)) departments sharing `queues` projects; the projects' deserved
// GPUs are uneven (log-normal) and sum to the cluster's GPUs, weights are 1–3, one project in ten
// has a GPU limit. Deserved CPU and memory follow the GPU share.
// Workloads: mostly single 1-GPU pods; some 2-, 4- and 8-GPU pods, half- and quarter-GPU pods,
// CPU-only pods, elastic workloads (4 × 1 GPU, 2 required) and gangs of 2, 4 or 8 pods × 8 H100s;
// about one in ten is an interactive workload, non-preemptible while its project holds no more
// than its deserved GPUs. Priorities 50, 100, 200 (training) and 300 (interactive).
// Pending: the backlog of a queue the scheduler has been serving — no training job in it outranks
// the preemptible work its queue runs, and notebooks wait only where their project's
// non-preemptible quota is used up — plus 3% of workloads that arrived since the last cycle, of
// any kind and priority: those are what preempt serves.
// Projects differ in appetite: a quarter are starved (they run little of their deserved quota and
// queue much), three in ten are greedy (they run up to three times their quota): that imbalance
// is what makes the cycle reclaim.
struct SyntheticSpec {
  int nodes = 1000;  // of 8 GPUs each
  int64_t pending_pods = 100000;
  // Running pods bound before the cycle, by first-fit in the order drawn; fewer when the cluster
  // is full first (SyntheticWorld::running_pods says how many).
  int64_t running_pods = 50000;
  int queues = 200;
  uint64_t seed = 1;
  // Topology levels (docs/topology.md), 0 to 4, the widest first of zone (2,560 nodes), block
  // (256), rack (16) and host: nodes are labelled in order, and every multi-pod gang must run
  // within one block (with 2 levels or more) and prefers one rack (3 or more). The same seed
  // draws the same world whatever the levels.
  int topology_levels = 0;
  // The nodes' CPU as a share of the default's (128 cores an H100 node, 96 an A100 one), in
  // whole cores; a pod asks at most the CPU of the smallest node its GPU models allow. At 0.7 or
  // less the pods, filling the GPUs, ask more CPU than the cluster has: CPU runs out first.
  double node_cpu_share = 1;
};

// What to reclaim for (`tessera bench reclaim`): a cluster whose every GPU runs a preemptible
// 1- or 2-GPU pod of the research projects, all of them above their fair share and past their
// minimum runtime; project "prod-urgent", which deserves at least the job and holds nothing,
// submits one gang of `gang_pods` × `gpus_per_pod` GPUs that can only start by reclaim.
struct ReclaimSpec {
  int nodes = 1000;  // of 8 GPUs each
  int gang_pods = 8;
  int gpus_per_pod = 8;
  uint64_t seed = 1;
};

struct SyntheticWorkload {
  WorkloadSpec spec;
  QueueIndex queue = 0;  // leaf queue index in SyntheticWorld::queues
  double submitted_at = 0;
  bool running = false;
  double started_at = 0;          // when running
  std::vector<Binding> bindings;  // when running: one per pod, in spec.pods order
};

struct SyntheticWorld {
  std::shared_ptr<const ClusterSpec> cluster;
  std::vector<QueueSpec> queues;             // departments first, then their projects
  ResourceNames resources;                   // gpu, cpu, memory
  std::vector<SyntheticWorkload> workloads;  // running ones first, in the order drawn
  WorkloadMix mix;                           // every pod's type, for the fragmentation-aware policies
  double now = 0;                            // the cycle's clock, seconds

  int departments = 0;
  int running_workloads = 0;
  int pending_workloads = 0;
  int64_t running_pods = 0;
  int64_t pending_pods = 0;
  int64_t running_gpu_milli = 0;
  int64_t pending_gpu_milli = 0;  // nominal requests
};

SyntheticWorld make_synthetic_world(const SyntheticSpec& spec);

// The reclaim case; the gang is the last workload. Fails when the gang cannot fit the cluster
// even empty.
Result<SyntheticWorld> make_reclaim_world(const ReclaimSpec& spec);

// A world loaded into the structures a cycle works on, ready for run_cycle. Members hold
// references to one another (the placer to the policy, the meter to the cluster spec), so it
// lives behind pointers and is moved, never copied.
struct LoadedWorld {
  std::shared_ptr<const ClusterSpec> spec;
  std::unique_ptr<ClusterState> cluster;
  std::unique_ptr<WorkloadSet> workloads;
  std::unique_ptr<QueueTree> queues;
  std::unique_ptr<ResourceMeter> meter;
  PlacementPolicyPtr policy;
  std::unique_ptr<Placer> placer;
  double now = 0;

  CycleInputs inputs() const { return CycleInputs{*cluster, *placer, *workloads, *queues, *meter, now}; }
};

// Adds every workload (ids follow SyntheticWorld::workloads), binds the running ones where the
// world says and sets their start times. Fails on an unknown policy or an invalid queue tree.
Result<LoadedWorld> load_world(const SyntheticWorld& world, std::string_view policy);

}  // namespace tessera
