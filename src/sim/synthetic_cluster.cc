#include "sim/synthetic_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "policy/device_choice.h"
#include "policy/feasibility.h"
#include "policy/policy_registry.h"

namespace tessera {

namespace {

constexpr int kGpusPerNode = 8;
constexpr double kMinute = 60;
constexpr double kHour = 3600;
constexpr double kDay = 24 * kHour;
// The cycle's clock: late enough that every time drawn before it is positive.
constexpr double kNow = 30 * kDay;
constexpr double kA100Fraction = 0.3;

// The pod sizes of a training cluster: requests come in per-GPU slices of a node (a 1-GPU pod
// asks for an eighth of the CPU and memory, or somewhat less), so there are few of them and nodes
// in the same state group together as they do in production.
enum class PodShape : uint8_t {
  kCpuOnly,
  kQuarterGpu,
  kHalfGpu,
  kOneGpuSmall,
  kOneGpuLarge,
  kTwoGpus,
  kFourGpus,
  kEightGpus,
  kEightH100s,  // distributed training: H100 only
};
constexpr size_t kPodShapeCount = 9;

struct ShapeRequest {
  int64_t cpu_cores;
  int64_t memory_gib;
  int whole_gpus;     // 0: none or a portion
  int portion_milli;  // 0: none or whole GPUs
  bool h100_only;
};

constexpr std::array<ShapeRequest, kPodShapeCount> kShapes = {{
    {8, 32, 0, 0, false},    // CPU only: data preparation, evaluation
    {2, 16, 0, 250, false},  // a quarter GPU: small inference, notebooks
    {4, 32, 0, 500, false},  // half a GPU
    {8, 64, 1, 0, false},    // one GPU
    {12, 96, 1, 0, false},   // one GPU, a full eighth of the node
    {24, 192, 2, 0, false},
    {48, 384, 4, 0, false},
    {96, 768, 8, 0, false},
    {96, 768, 8, 0, true},
}};

// What a workload is: its pods' shape, how many, how many of them form the gang.
struct WorkloadDraw {
  double weight;  // relative frequency among workloads
  PodShape shape;
  int pods;
  int min_member;
  bool interactive;
};

// Mostly single 1-GPU jobs, as in every published GPU-cluster trace; the large gangs are rare but
// hold a large part of the GPUs. About 1.35 GPUs per pod on average, so 50,000 running pods fill
// some 84% of a 10,000-node cluster.
constexpr std::array<WorkloadDraw, 15> kKinds = {{
    {26, PodShape::kOneGpuSmall, 1, 1, false},
    {26, PodShape::kOneGpuLarge, 1, 1, false},
    {7, PodShape::kTwoGpus, 1, 1, false},
    {3, PodShape::kFourGpus, 1, 1, false},
    {0.75, PodShape::kEightGpus, 1, 1, false},
    {0.75, PodShape::kEightH100s, 1, 1, false},
    {12, PodShape::kHalfGpu, 1, 1, false},
    {4, PodShape::kQuarterGpu, 1, 1, false},
    {3, PodShape::kCpuOnly, 1, 1, false},
    {1.5, PodShape::kOneGpuSmall, 4, 2, false},  // elastic: two required, two extras
    {0.6, PodShape::kEightH100s, 2, 2, false},   // gangs of 16, 32 and 64 GPUs
    {0.3, PodShape::kEightH100s, 4, 4, false},
    {0.1, PodShape::kEightH100s, 8, 8, false},
    {5, PodShape::kOneGpuSmall, 1, 1, true},  // notebooks
    {4, PodShape::kHalfGpu, 1, 1, true},
}};
constexpr size_t kSinglePodKind = 0;

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  double uniform(double low, double high) { return std::uniform_real_distribution<double>(low, high)(engine_); }
  bool chance(double probability) { return uniform(0, 1) < probability; }
  int integer(int low, int high) { return std::uniform_int_distribution<int>(low, high)(engine_); }
  double normal(double mean, double sigma) { return std::normal_distribution<double>(mean, sigma)(engine_); }
  size_t pick(std::discrete_distribution<size_t>& distribution) { return distribution(engine_); }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// The two kinds of node: their GPU models, and their CPU (SyntheticSpec::node_cpu_share of the
// default's 128 and 96 cores, in whole cores).
struct NodeKinds {
  GpuModelId h100 = 0;
  GpuModelId a100 = 0;
  int64_t h100_cpu_milli = 128000;
  int64_t a100_cpu_milli = 96000;

  explicit NodeKinds(double cpu_share = 1)
      : h100_cpu_milli(std::max<int64_t>(1, std::llround(128 * cpu_share)) * 1000),
        a100_cpu_milli(std::max<int64_t>(1, std::llround(96 * cpu_share)) * 1000) {}
};

std::shared_ptr<ClusterSpec> make_cluster(int nodes, double a100_fraction, Random& random, NodeKinds& kinds) {
  auto cluster = std::make_shared<ClusterSpec>();
  kinds.h100 = *cluster->models.intern("H100");
  kinds.a100 = *cluster->models.intern("A100");
  cluster->nodes.reserve(static_cast<size_t>(nodes));
  int h100_count = 0;
  int a100_count = 0;
  for (int i = 0; i < nodes; ++i) {
    const bool a100 = random.chance(a100_fraction);
    NodeSpec node;
    node.name = a100 ? fmt::format("a100-{:05}", a100_count++) : fmt::format("h100-{:05}", h100_count++);
    node.allocatable =
        a100 ? Resources{kinds.a100_cpu_milli, 768 * kGiB} : Resources{kinds.h100_cpu_milli, 1024 * kGiB};
    node.gpus.assign(kGpusPerNode, GpuDevice{a100 ? kinds.a100 : kinds.h100, 80 * kGiB});
    node.labels = {{"tessera.dev/pool", a100 ? "a100" : "h100"}};
    cluster->nodes.push_back(std::move(node));
  }
  return cluster;
}

PodSpec shape_pod(PodShape shape, const NodeKinds& kinds) {
  const ShapeRequest& request = kShapes[static_cast<size_t>(shape)];
  PodSpec pod;
  // Nodes with less CPU than the default's: a pod asks at most the CPU of the smallest node its
  // GPU models allow (a whole-node pod, the whole node), so that every shape still fits somewhere.
  const int64_t most_cpu =
      request.h100_only ? kinds.h100_cpu_milli : std::min(kinds.h100_cpu_milli, kinds.a100_cpu_milli);
  pod.request = {std::min(request.cpu_cores * 1000, most_cpu), request.memory_gib * kGiB};
  if (request.whole_gpus > 0) pod.gpu = GpuRequest::whole(request.whole_gpus);
  if (request.portion_milli > 0) pod.gpu = GpuRequest::portion(request.portion_milli);
  if (request.h100_only) pod.allowed_models.add(kinds.h100);
  return pod;
}

double pod_gpus(const PodSpec& pod) { return static_cast<double>(pod.gpu.nominal_milli()) / kMilliPerGpu; }

// The quotas of one queue: GPUs as given; CPU and memory deserved in proportion to the GPUs, so
// that a queue's deserved quota is the same slice of every resource.
std::vector<QueueQuota> quotas(double deserved_gpus, double weight, std::optional<double> gpu_limit,
                               const ClusterSpec& cluster) {
  const double gpu_capacity = static_cast<double>(cluster.gpu_capacity_milli()) / kMilliPerGpu;
  Resources capacity;
  for (const NodeSpec& node : cluster.nodes) capacity += node.allocatable;
  const double slice = gpu_capacity > 0 ? deserved_gpus / gpu_capacity : 0;
  return {QueueQuota{deserved_gpus, weight, gpu_limit},
          QueueQuota{slice * static_cast<double>(capacity.cpu_milli), weight, std::nullopt},
          QueueQuota{slice * static_cast<double>(capacity.memory_bytes), weight, std::nullopt}};
}

// Splits `total` whole units in proportion to `weights` (largest remainder; ties to the lower
// index), so the parts are integers that sum to the total exactly.
std::vector<int64_t> apportion(int64_t total, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> parts(weights.size());
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = static_cast<double>(total) * weights[i] / sum;
    parts[i] = static_cast<int64_t>(std::floor(exact));
    given += parts[i];
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < total; ++i, ++given) ++parts[remainders[i % remainders.size()].second];
  return parts;
}

// First-fit over the nodes in index order, without a scheduling cycle: the way a long-running
// cluster ends up packed, at a fraction of the cost. Nodes only fill up here, so a node that
// cannot take a pod of some shape never will; one cursor per shape skips them for good.
class FirstFitPacker {
 public:
  explicit FirstFitPacker(const ClusterSpec& cluster) : cluster_(cluster) {
    states_.reserve(cluster.nodes.size());
    for (const NodeSpec& node : cluster.nodes) states_.push_back(NodeState::empty(node));
    cursor_.fill(0);
  }

  // Binds every pod of the list or none of them.
  std::optional<std::vector<Binding>> place(const std::vector<PodSpec>& pods, PodShape shape) {
    std::vector<Binding> bindings;
    for (const PodSpec& pod : pods) {
      std::optional<Binding> binding = place_one(pod, shape);
      if (!binding) {
        release(pods, bindings, shape);
        return std::nullopt;
      }
      bindings.push_back(std::move(*binding));
    }
    return bindings;
  }

 private:
  std::optional<Binding> place_one(const PodSpec& pod, PodShape shape) {
    NodeIndex& cursor = cursor_[static_cast<size_t>(shape)];
    const auto node_count = static_cast<NodeIndex>(cluster_.nodes.size());
    for (; cursor < node_count; ++cursor) {
      const NodeSpec& node = cluster_.nodes[static_cast<size_t>(cursor)];
      NodeState& state = states_[static_cast<size_t>(cursor)];
      if (check_node(node, state, pod) != Predicate::kFits) continue;
      Binding binding;
      binding.node = cursor;
      if (pod.gpu.kind == GpuRequest::Kind::kWhole) {
        binding.devices = pick_whole_devices(node, state, pod);
        binding.milli_per_device = kMilliPerGpu;
      } else if (pod.gpu.is_fractional()) {
        const int device = tightest_device(node, state, pod);
        binding = Binding::on_device(cursor, device, pod.gpu, node.gpus[static_cast<size_t>(device)].memory_bytes);
      }
      state.apply(pod, binding);
      return binding;
    }
    return std::nullopt;
  }

  // A gang that did not fit gives its pods back; the nodes they held may take that shape again.
  void release(const std::vector<PodSpec>& pods, const std::vector<Binding>& bindings, PodShape shape) {
    NodeIndex& cursor = cursor_[static_cast<size_t>(shape)];
    for (size_t i = 0; i < bindings.size(); ++i) {
      states_[static_cast<size_t>(bindings[i].node)].release(pods[i], bindings[i]);
      cursor = std::min(cursor, bindings[i].node);
    }
  }

  const ClusterSpec& cluster_;
  std::vector<NodeState> states_;
  std::array<NodeIndex, kPodShapeCount> cursor_{};
};

// Counts pods per shape for the workload mix the fragmentation-aware policies measure against.
class MixCounter {
 public:
  void add(const PodSpec& pod, int count = 1) {
    for (size_t i = 0; i < types_.size(); ++i) {
      if (types_[i].request == pod.request && types_[i].gpu == pod.gpu &&
          types_[i].allowed_models == pod.allowed_models) {
        counts_[i] += count;
        return;
      }
    }
    types_.push_back(PodType{pod.request, pod.gpu, pod.allowed_models, 0});
    counts_.push_back(count);
  }
  WorkloadMix mix() const {
    std::vector<PodType> types = types_;
    const double total = static_cast<double>(std::accumulate(counts_.begin(), counts_.end(), int64_t{0}));
    for (size_t i = 0; i < types.size(); ++i) types[i].popularity = static_cast<double>(counts_[i]) / total;
    return WorkloadMix(std::move(types));
  }

 private:
  std::vector<PodType> types_;
  std::vector<int64_t> counts_;
};

struct Leaf {
  QueueIndex index = 0;
  double deserved_gpus = 0;
  std::optional<double> gpu_limit;
  double running_appetite = 1;  // relative to its deserved quota
  double pending_appetite = 1;
};

// Training priorities 50 (low), 100 (normal), 200 (high). The backlog is what earlier cycles left
// behind: high-priority jobs start soon after they arrive (by preemption if need be), so few wait,
// while low-priority ones pile up.
int running_priority(Random& random) {
  const double draw = random.uniform(0, 1);
  return draw < 0.15 ? 50 : draw < 0.85 ? 100 : 200;
}
int pending_priority(Random& random) {
  const double draw = random.uniform(0, 1);
  return draw < 0.3 ? 50 : draw < 0.98 ? 100 : 200;
}

WorkloadSpec make_workload(const WorkloadDraw& kind, const std::string& queue, int64_t number, int priority,
                           const NodeKinds& kinds) {
  WorkloadSpec spec;
  spec.name = fmt::format("w{}", number);
  spec.queue = queue;
  spec.kind = kind.interactive ? WorkloadKind::kInteractive : WorkloadKind::kTrain;
  spec.priority = priority;
  spec.preemptible = !kind.interactive;
  spec.min_member = kind.min_member;
  PodSpec pod = shape_pod(kind.shape, kinds);
  pod.priority = priority;
  pod.preemptible = spec.preemptible;
  spec.pods.reserve(static_cast<size_t>(kind.pods));
  for (int i = 0; i < kind.pods; ++i) {
    spec.pods.push_back(pod);
    spec.pods.back().name = fmt::format("w{}-{}", number, i);
  }
  return spec;
}

void set_preemptible(WorkloadSpec& spec, bool preemptible) {
  spec.preemptible = preemptible;
  for (PodSpec& pod : spec.pods) pod.preemptible = preemptible;
}

double workload_gpus(const WorkloadSpec& spec) {
  double gpus = 0;
  for (const PodSpec& pod : spec.pods) gpus += pod_gpus(pod);
  return gpus;
}

}  // namespace

// The synthetic topology: its levels, widest first, and the nodes in each domain of each.
struct SyntheticLevel {
  const char* label;
  int nodes_per_domain;
};
constexpr SyntheticLevel kSyntheticLevels[] = {
    {"tessera.dev/zone", 2560}, {"tessera.dev/block", 256}, {"tessera.dev/rack", 16}, {"kubernetes.io/hostname", 1}};

void add_topology(ClusterSpec& cluster, int levels) {
  if (levels <= 0) return;
  Topology topology{"network", {}};
  for (int level = 0; level < levels; ++level) {
    const SyntheticLevel& entry = kSyntheticLevels[static_cast<size_t>(level)];
    topology.levels.emplace_back(entry.label);
    for (size_t node = 0; node < cluster.nodes.size(); ++node) {
      cluster.nodes[node].labels[entry.label] =
          entry.nodes_per_domain == 1 ? cluster.nodes[node].name
                                      : fmt::format("{}", node / static_cast<size_t>(entry.nodes_per_domain));
    }
  }
  cluster.topologies.push_back(std::move(topology));
}

void constrain_gangs(std::vector<SyntheticWorkload>& workloads, int levels) {
  if (levels < 2) return;
  const auto within_block = std::make_shared<const WorkloadTopology>(
      WorkloadTopology{{"network", kSyntheticLevels[1].label, levels >= 3 ? kSyntheticLevels[2].label : ""}, {}});
  for (SyntheticWorkload& workload : workloads) {
    if (workload.spec.min_member >= 2) workload.spec.topology = within_block;
  }
}

SyntheticWorld make_synthetic_world(const SyntheticSpec& spec) {
  Random random(spec.seed);
  NodeKinds kinds(spec.node_cpu_share);
  SyntheticWorld world;
  world.now = kNow;
  world.resources = ResourceNames::standard();
  auto labelled = make_cluster(std::max(spec.nodes, 1), kA100Fraction, random, kinds);
  add_topology(*labelled, std::clamp(spec.topology_levels, 0, 4));
  world.cluster = std::move(labelled);
  const ClusterSpec& cluster = *world.cluster;
  const int64_t gpu_capacity = cluster.gpu_capacity_milli() / kMilliPerGpu;

  // The queue tree: departments first, then their projects, round robin.
  const int leaf_count = std::max(spec.queues, 1);
  const int departments = std::clamp(static_cast<int>(std::lround(std::sqrt(leaf_count / 2.0))), 1, leaf_count);
  world.departments = departments;
  std::vector<double> raw(static_cast<size_t>(leaf_count));
  for (double& weight : raw) weight = std::exp(random.normal(0, 0.8));
  const std::vector<int64_t> deserved = apportion(gpu_capacity, raw);
  std::vector<Leaf> leaves(static_cast<size_t>(leaf_count));
  std::vector<double> department_gpus(static_cast<size_t>(departments), 0);
  for (int i = 0; i < leaf_count; ++i) {
    Leaf& leaf = leaves[static_cast<size_t>(i)];
    leaf.index = static_cast<QueueIndex>(departments + i);
    leaf.deserved_gpus = static_cast<double>(deserved[static_cast<size_t>(i)]);
    if (random.chance(0.1)) {
      leaf.gpu_limit = std::round(std::max(leaf.deserved_gpus * random.uniform(1.5, 3), leaf.deserved_gpus + 8));
    }
    const double kind = random.uniform(0, 1);
    if (kind < 0.25) {  // starved: runs little of its quota, queues a lot
      leaf.running_appetite = random.uniform(0, 0.4);
      leaf.pending_appetite = random.uniform(1.5, 3);
    } else if (kind < 0.7) {
      leaf.running_appetite = random.uniform(0.7, 1.2);
      leaf.pending_appetite = random.uniform(0.5, 1.5);
    } else {  // greedy: borrows far beyond its quota
      leaf.running_appetite = random.uniform(1.5, 3);
      leaf.pending_appetite = random.uniform(0.5, 2);
    }
    department_gpus[static_cast<size_t>(i % departments)] += leaf.deserved_gpus;
  }
  for (int d = 0; d < departments; ++d) {
    QueueSpec queue;
    queue.name = fmt::format("dept-{:02}", d);
    queue.quota = quotas(department_gpus[static_cast<size_t>(d)], random.integer(1, 3), std::nullopt, cluster);
    queue.preempt_min_runtime_seconds = 5 * kMinute;
    queue.reclaim_min_runtime_seconds = 10 * kMinute;
    world.queues.push_back(std::move(queue));
  }
  for (int i = 0; i < leaf_count; ++i) {
    const Leaf& leaf = leaves[static_cast<size_t>(i)];
    QueueSpec queue;
    queue.name = fmt::format("dept-{:02}-proj-{:03}", i % departments, i);
    queue.parent = world.queues[static_cast<size_t>(i % departments)].name;
    queue.quota = quotas(leaf.deserved_gpus, random.integer(1, 3), leaf.gpu_limit, cluster);
    if (random.chance(0.1)) queue.reclaim_min_runtime_seconds = 30 * kMinute;
    world.queues.push_back(std::move(queue));
  }

  std::vector<double> running_weights;
  std::vector<double> pending_weights;
  for (const Leaf& leaf : leaves) {
    running_weights.push_back((leaf.deserved_gpus + 1) * leaf.running_appetite);
    pending_weights.push_back((leaf.deserved_gpus + 1) * leaf.pending_appetite);
  }
  std::discrete_distribution<size_t> running_queue(running_weights.begin(), running_weights.end());
  std::discrete_distribution<size_t> pending_queue(pending_weights.begin(), pending_weights.end());
  // Notebooks wait less than batch jobs (a user is at the keyboard), so fewer of them queue.
  std::vector<double> running_kind_weights;
  std::vector<double> pending_kind_weights;
  for (const WorkloadDraw& kind : kKinds) {
    running_kind_weights.push_back(kind.weight);
    pending_kind_weights.push_back(kind.interactive ? kind.weight / 3 : kind.weight);
  }
  std::discrete_distribution<size_t> running_kind(running_kind_weights.begin(), running_kind_weights.end());
  std::discrete_distribution<size_t> pending_kind(pending_kind_weights.begin(), pending_kind_weights.end());

  MixCounter mix;
  int64_t number = 0;
  auto draw_kind = [&](std::discrete_distribution<size_t>& kinds, int64_t pods_left) -> const WorkloadDraw& {
    const WorkloadDraw& kind = kKinds[random.pick(kinds)];
    return kind.pods <= pods_left ? kind : kKinds[kSinglePodKind];
  };

  // Running workloads, bound by first-fit in the order drawn, until the pods asked for run or the
  // cluster has been full for a long run of draws.
  FirstFitPacker packer(cluster);
  std::vector<double> held_gpus(leaves.size(), 0);
  std::vector<double> non_preemptible_gpus(leaves.size(), 0);
  std::vector<int> lowest_running_priority(leaves.size(), std::numeric_limits<int>::max());
  constexpr int kGiveUpAfterFailures = 5000;
  for (int failures = 0; world.running_pods < spec.running_pods && failures < kGiveUpAfterFailures;) {
    const WorkloadDraw& kind = draw_kind(running_kind, spec.running_pods - world.running_pods);
    const size_t leaf_position = random.pick(running_queue);
    const Leaf& leaf = leaves[leaf_position];
    const int priority = kind.interactive ? 300 : running_priority(random);
    WorkloadSpec workload = make_workload(kind, world.queues[leaf.index].name, number, priority, kinds);
    const double gpus = workload_gpus(workload);
    if (leaf.gpu_limit && held_gpus[leaf_position] + gpus > *leaf.gpu_limit) {
      ++failures;
      continue;
    }
    // Non-preemptible work only within the deserved quota (docs/design.md §2); past it a notebook runs
    // preemptible, as an admin's policy would make it.
    if (!workload.preemptible) {
      if (non_preemptible_gpus[leaf_position] + gpus > leaf.deserved_gpus) {
        set_preemptible(workload, true);
      } else {
        non_preemptible_gpus[leaf_position] += gpus;
      }
    }
    std::optional<std::vector<Binding>> bindings = packer.place(workload.pods, kind.shape);
    // Started long enough ago that minimum runtimes are over, but for one in twenty.
    const double started_at =
        random.chance(0.05) ? kNow - random.uniform(0, 5 * kMinute) : kNow - random.uniform(2 * kHour, 72 * kHour);
    if (!bindings) {
      if (!workload.preemptible) non_preemptible_gpus[leaf_position] -= gpus;
      ++failures;
      continue;
    }
    failures = 0;
    ++number;
    held_gpus[leaf_position] += gpus;
    if (workload.preemptible) {
      lowest_running_priority[leaf_position] = std::min(lowest_running_priority[leaf_position], priority);
    }
    mix.add(workload.pods.front(), kind.pods);
    SyntheticWorkload& running = world.workloads.emplace_back();
    running.queue = leaf.index;
    running.running = true;
    running.started_at = started_at;
    running.submitted_at = started_at - random.uniform(0, 2 * kHour);
    running.spec = std::move(workload);
    running.spec.arrival_seconds = running.submitted_at;
    running.bindings = std::move(*bindings);
    ++world.running_workloads;
    world.running_pods += kind.pods;
    for (const Binding& binding : running.bindings) world.running_gpu_milli += binding.gpu_milli();
  }

  // Pending workloads. Most are the backlog earlier cycles left, submitted over the last day, and
  // consistent with them: a waiting training job has no higher priority than the preemptible
  // work its queue runs, and a notebook waits only where its queue's non-preemptible quota is
  // used up (otherwise preemption would already have started them). The rest arrived since the
  // last cycle, with the full mix of kinds and priorities: they are what preempt has to serve.
  constexpr double kNewArrivals = 0.03;
  while (world.pending_pods < spec.pending_pods) {
    const bool arrived = random.chance(kNewArrivals);
    const WorkloadDraw* kind =
        &draw_kind(arrived ? running_kind : pending_kind, spec.pending_pods - world.pending_pods);
    const size_t leaf_position = random.pick(pending_queue);
    const Leaf& leaf = leaves[leaf_position];
    if (!arrived && kind->interactive &&
        non_preemptible_gpus[leaf_position] + pod_gpus(shape_pod(kind->shape, kinds)) <= leaf.deserved_gpus) {
      kind = &kKinds[kSinglePodKind];
    }
    int priority = 300;
    if (!kind->interactive) {
      priority = arrived ? running_priority(random)
                         : std::min(pending_priority(random), lowest_running_priority[leaf_position]);
    }
    SyntheticWorkload& pending = world.workloads.emplace_back();
    pending.queue = leaf.index;
    pending.submitted_at = arrived ? kNow - random.uniform(0, kMinute) : kNow - random.uniform(kMinute, kDay);
    pending.spec = make_workload(*kind, world.queues[leaf.index].name, number++, priority, kinds);
    pending.spec.arrival_seconds = pending.submitted_at;
    mix.add(pending.spec.pods.front(), kind->pods);
    ++world.pending_workloads;
    world.pending_pods += kind->pods;
    for (const PodSpec& pod : pending.spec.pods) world.pending_gpu_milli += pod.gpu.nominal_milli();
  }
  world.mix = mix.mix();
  constrain_gangs(world.workloads, spec.topology_levels);
  return world;
}

Result<SyntheticWorld> make_reclaim_world(const ReclaimSpec& spec) {
  if (spec.nodes < 1) return Error{fmt::format("--nodes must be at least 1 (got {})", spec.nodes)};
  if (spec.gang_pods < 1) return Error{fmt::format("--gang-pods must be at least 1 (got {})", spec.gang_pods)};
  if (spec.gpus_per_pod < 1 || spec.gpus_per_pod > kGpusPerNode) {
    return Error{fmt::format("--gpus-per-pod must be between 1 and {} (got {})", kGpusPerNode, spec.gpus_per_pod)};
  }
  const int64_t pods_per_node = kGpusPerNode / spec.gpus_per_pod;
  if (int64_t{spec.gang_pods} > pods_per_node * spec.nodes) {
    return Error{fmt::format("a gang of {} pods × {} GPUs does not fit {} nodes of {} GPUs", spec.gang_pods,
                             spec.gpus_per_pod, spec.nodes, kGpusPerNode)};
  }
  Random random(spec.seed);
  NodeKinds kinds;
  SyntheticWorld world;
  world.now = kNow;
  world.resources = ResourceNames::standard();
  world.cluster = make_cluster(spec.nodes, 0, random, kinds);
  const ClusterSpec& cluster = *world.cluster;
  const int64_t capacity = int64_t{spec.nodes} * kGpusPerNode;
  const int64_t need = int64_t{spec.gang_pods} * spec.gpus_per_pod;

  // Research's projects share its fair share equally (equal quotas and weights, all hungry), so
  // each may lose only what it holds beyond (capacity - need) / projects. When that is a whole
  // number of nodes, every project's excess is whole nodes too and the gang's room can be freed
  // exactly; otherwise one project holds everything.
  int projects = 1;
  for (int k = 4; k > 1; --k) {
    const int64_t per_project = (capacity - need) / kGpusPerNode / k;
    if (need % kGpusPerNode == 0 && (capacity - need) % (int64_t{kGpusPerNode} * k) == 0 && per_project >= 1) {
      projects = k;
      break;
    }
  }
  const double prod_deserved = static_cast<double>(std::max(need, capacity / 4));
  const double research_deserved = static_cast<double>(capacity) - prod_deserved;
  auto department = [&](std::string name, double deserved) {
    QueueSpec queue;
    queue.name = std::move(name);
    queue.quota = quotas(deserved, 1, std::nullopt, cluster);
    queue.preempt_min_runtime_seconds = 5 * kMinute;
    queue.reclaim_min_runtime_seconds = 10 * kMinute;
    world.queues.push_back(std::move(queue));
  };
  auto project = [&](std::string name, std::string parent, double deserved) {
    QueueSpec queue;
    queue.name = std::move(name);
    queue.parent = std::move(parent);
    queue.quota = quotas(deserved, 1, std::nullopt, cluster);
    world.queues.push_back(std::move(queue));
    return world.queues.size() - 1;
  };
  department("prod", prod_deserved);
  department("research", research_deserved);
  world.departments = 2;
  const QueueIndex urgent = project("prod-urgent", "prod", prod_deserved);
  std::vector<QueueIndex> research;
  for (int k = 0; k < projects; ++k) {
    research.push_back(
        project(fmt::format("research-{}", static_cast<char>('a' + k)), "research", research_deserved / projects));
  }

  // Which project fills each node: (capacity - need) / projects of GPUs each, plus the need's
  // nodes dealt round robin; spread over the node indices at random.
  const int64_t need_nodes = (need + kGpusPerNode - 1) / kGpusPerNode;
  const int64_t base_nodes = (spec.nodes - need_nodes) / projects;
  std::vector<size_t> owner;
  for (int k = 0; k < projects; ++k) owner.insert(owner.end(), static_cast<size_t>(base_nodes), static_cast<size_t>(k));
  for (size_t k = 0; owner.size() < static_cast<size_t>(spec.nodes); ++k) owner.push_back(k % research.size());
  std::shuffle(owner.begin(), owner.end(), random.engine());

  // Every GPU busy: 1-GPU pods and, one in five, 2-GPU pods, each a workload of its own.
  MixCounter mix;
  int64_t number = 0;
  const WorkloadDraw one_gpu{1, PodShape::kOneGpuSmall, 1, 1, false};
  const WorkloadDraw two_gpus{1, PodShape::kTwoGpus, 1, 1, false};
  for (NodeIndex node = 0; node < spec.nodes; ++node) {
    int16_t device = 0;
    while (device < kGpusPerNode) {
      const bool two = device + 2 <= kGpusPerNode && random.chance(0.2);
      const WorkloadDraw& kind = two ? two_gpus : one_gpu;
      const QueueIndex queue = research[owner[static_cast<size_t>(node)]];
      SyntheticWorkload& running = world.workloads.emplace_back();
      running.queue = queue;
      running.running = true;
      running.started_at = kNow - random.uniform(1 * kHour, 48 * kHour);
      running.submitted_at = running.started_at - random.uniform(0, kHour);
      running.spec = make_workload(kind, world.queues[queue].name, number++, random.chance(0.3) ? 50 : 100, kinds);
      running.spec.arrival_seconds = running.submitted_at;
      Binding binding;
      binding.node = node;
      binding.milli_per_device = kMilliPerGpu;
      for (int i = 0; i < (two ? 2 : 1); ++i) binding.devices.push_back(device++);
      world.running_gpu_milli += binding.gpu_milli();
      running.bindings = {std::move(binding)};
      mix.add(running.spec.pods.front());
      ++world.running_workloads;
      ++world.running_pods;
    }
  }

  // The job: one gang, submitted a minute ago.
  SyntheticWorkload& gang = world.workloads.emplace_back();
  gang.queue = urgent;
  gang.submitted_at = kNow - kMinute;
  gang.spec.name = "urgent-train";
  gang.spec.queue = world.queues[urgent].name;
  gang.spec.priority = 100;
  gang.spec.min_member = spec.gang_pods;
  gang.spec.arrival_seconds = gang.submitted_at;
  for (int i = 0; i < spec.gang_pods; ++i) {
    PodSpec pod;
    pod.name = fmt::format("urgent-train-{}", i);
    pod.request = {int64_t{12000} * spec.gpus_per_pod, int64_t{96} * spec.gpus_per_pod * kGiB};
    pod.gpu = GpuRequest::whole(spec.gpus_per_pod);
    pod.priority = 100;
    gang.spec.pods.push_back(std::move(pod));
  }
  mix.add(gang.spec.pods.front(), spec.gang_pods);
  world.pending_workloads = 1;
  world.pending_pods = spec.gang_pods;
  world.pending_gpu_milli = need * kMilliPerGpu;
  world.mix = mix.mix();
  return world;
}

Result<LoadedWorld> load_world(const SyntheticWorld& world, std::string_view policy_name) {
  Result<QueueTree> tree = QueueTree::build(world.queues, world.resources);
  if (!tree) return tree.error();
  Result<PlacementPolicyPtr> policy = make_policy(policy_name, world.mix);
  if (!policy) return policy.error();
  LoadedWorld loaded;
  loaded.spec = world.cluster;
  loaded.cluster = std::make_unique<ClusterState>(world.cluster);
  loaded.workloads = std::make_unique<WorkloadSet>();
  loaded.queues = std::make_unique<QueueTree>(std::move(tree).value());
  loaded.meter = std::make_unique<ResourceMeter>(*loaded.spec, loaded.queues->resources());
  loaded.policy = std::move(policy).value();
  loaded.placer = std::make_unique<Placer>(*loaded.policy);
  loaded.now = world.now;
  for (const SyntheticWorkload& workload : world.workloads) {
    const WorkloadId id = loaded.workloads->add(workload.spec, workload.queue, *loaded.cluster, workload.submitted_at);
    if (!workload.running) continue;
    Workload& added = (*loaded.workloads)[id];
    added.started_at = workload.started_at;
    for (size_t i = 0; i < workload.bindings.size(); ++i) loaded.cluster->bind(added.pods[i], workload.bindings[i]);
  }
  return loaded;
}

}  // namespace tessera
