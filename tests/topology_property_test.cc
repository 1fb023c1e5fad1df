// Randomized worlds with topologies through many cycles (docs/topology.md): whatever the racks,
// the gangs, their constraints and the domain rule, a required level is never violated, a gang
// is never partly placed, and the victims of room made for a required gang lie in its domain.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/invariants.h"
#include "scheduler_world.h"

namespace tessera {
namespace {

using testing::gpu_queue;
using testing::SchedulerWorld;
using testing::uniform_cluster;

int pick(std::mt19937_64& random, int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); }

// Blocks of racks of nodes, with some nodes left outside any rack (no label).
std::shared_ptr<ClusterSpec> random_racks(std::mt19937_64& random, int gpus_per_node) {
  const int nodes_per_rack = pick(random, 1, 4);
  const int racks_per_block = pick(random, 1, 3);
  const int blocks = pick(random, 1, 3);
  auto cluster = uniform_cluster(nodes_per_rack * racks_per_block * blocks, gpus_per_node, 64000);
  for (size_t node = 0; node < cluster->nodes.size(); ++node) {
    if (pick(random, 0, 15) == 0) continue;
    // Rack names repeat across blocks: domains are told apart by their whole path.
    cluster->nodes[node].labels["block"] =
        fmt::format("b{}", node / static_cast<size_t>(nodes_per_rack * racks_per_block));
    cluster->nodes[node].labels["rack"] =
        fmt::format("r{}", node / static_cast<size_t>(nodes_per_rack) % racks_per_block);
  }
  cluster->topologies.push_back({"net", {"block", "rack"}});
  return cluster;
}

WorkloadSpec random_workload(std::mt19937_64& random, const std::string& name, int gpus_per_node) {
  WorkloadSpec spec;
  spec.name = name;
  const int pods = pick(random, 1, 4);
  const int gpus = std::min(gpus_per_node, 1 << pick(random, 0, 3));
  spec.min_member = pick(random, 1, pods);
  spec.priority = pick(random, 0, 3);
  spec.preemptible = pick(random, 0, 4) != 0;
  for (int i = 0; i < pods; ++i) {
    PodSpec pod = testing::pod(fmt::format("{}-p{}", name, i), 1000, GpuRequest::whole(gpus));
    pod.priority = spec.priority;
    pod.preemptible = spec.preemptible;
    spec.pods.push_back(pod);
  }
  const std::string levels[] = {"", "block", "rack"};
  WorkloadTopology terms;
  terms.constraint = {"net", levels[pick(random, 0, 2)], ""};
  if (terms.constraint.required_level != "rack") terms.constraint.preferred_level = levels[pick(random, 0, 2)];
  if (terms.constraint.required_level == "rack" && terms.constraint.preferred_level == "block")
    terms.constraint.preferred_level.clear();
  if (terms.constraint.empty()) terms.constraint.topology.clear();
  if (spec.min_member >= 2 && pick(random, 0, 3) == 0) {
    // Two subgroups splitting the gang, each within a rack.
    terms.constraint.topology = "net";
    const int half = spec.min_member / 2;
    terms.subgroups = {{"a", half, {"net", "rack", ""}}, {"b", spec.min_member - half, {"net", "rack", ""}}};
    for (int i = 0; i < spec.min_member; ++i) spec.pods[static_cast<size_t>(i)].subgroup = i < half ? 0 : 1;
  }
  if (!terms.constraint.empty() || !terms.subgroups.empty())
    spec.topology = std::make_shared<const WorkloadTopology>(std::move(terms));
  return spec;
}

// The domains a running gang holds at its required levels: with a required level of its own, the
// domain of it; otherwise the domain each subgroup with a required level holds (its first pod's).
std::vector<std::pair<int, int32_t>> required_domains(SchedulerWorld& world, const Workload& gang) {
  const TopologyDomains& domains = world.cluster().topology();
  auto domain_of = [&](int level, PodId pod) {
    return std::pair{level, domains.domain_of(0, level, world.cluster().binding(pod)->node)};
  };
  const WorkloadSpec& spec = gang.spec;
  if (!spec.topology_constraint().required_level.empty())
    return {domain_of(domains.find_level(0, spec.topology_constraint().required_level), gang.pods.front())};
  std::vector<std::pair<int, int32_t>> held;
  for (size_t subgroup = 0; subgroup < spec.subgroups().size(); ++subgroup) {
    const std::string& level = spec.subgroups()[subgroup].constraint.required_level;
    if (level.empty()) continue;
    for (PodId pod : gang.pods) {
      if (world.cluster().pod(pod).subgroup != static_cast<int16_t>(subgroup) || !world.cluster().binding(pod))
        continue;
      held.push_back(domain_of(domains.find_level(0, level), pod));
      break;
    }
  }
  return held;
}

TEST(TopologyProperties, RequiredLevelsHoldGangsStayWholeAndVictimsLieInTheGangsDomain) {
  std::mt19937_64 random(20261126);
  const DomainRule rules[] = {DomainRule::kFragmentation, DomainRule::kFullest, DomainRule::kBestFit};
  int started = 0, required_started = 0, evictions_for_required = 0, evictions_for_subgroups = 0;
  for (int world_index = 0; world_index < 2000; ++world_index) {
    const int gpus_per_node = 1 << pick(random, 1, 3);
    auto cluster = random_racks(random, gpus_per_node);
    const double capacity = static_cast<double>(cluster->nodes.size()) * gpus_per_node;
    SchedulerWorld world(cluster,
                         {gpu_queue("a", "", std::floor(capacity / 2)), gpu_queue("b", "", std::floor(capacity / 4)),
                          gpu_queue("c", "", 0)},
                         pick(random, 0, 1) ? "best-fit" : "tessera");
    CycleOptions options;
    options.topology.rule = rules[pick(random, 0, 2)];
    options.reservations.min_wait_seconds = 30;
    options.reservations.min_gpus = 0;
    double now = 0;
    const char* queues[] = {"a", "b", "c"};
    for (int cycle = 0; cycle < 8; ++cycle) {
      for (int a = pick(random, 0, 6); a > 0; --a) {
        WorkloadSpec spec = random_workload(random, fmt::format("w{}-{}", cycle, a), gpus_per_node);
        spec.queue = queues[pick(random, 0, 2)];
        const QueueIndex queue = *world.tree().find(spec.queue);
        world.workloads().add(std::move(spec), queue, world.cluster(), now);
      }
      for (WorkloadId id : std::vector<WorkloadId>(world.workloads().active())) {
        if (world.running(id) && pick(random, 0, 5) == 0) world.workloads().finish(id, world.cluster());
      }
      CycleResult result = world.cycle(now, options);
      const std::string where = fmt::format("world {} at t={}", world_index, now);
      testing::assert_sound(world, where);
      if (::testing::Test::HasFatalFailure()) return;
      // Every victim of room made for a gang with a required level had a pod in the domain the
      // gang now runs in.
      std::map<PodId, NodeIndex> evicted_from;
      for (const Operation& operation : result.operations) {
        if (operation.kind == Operation::Kind::kEvict) evicted_from.emplace(operation.pod, operation.binding.node);
      }
      const TopologyDomains& domains = world.cluster().topology();
      for (const Eviction& eviction : result.evictions) {
        if (eviction.beneficiary < 0 || !world.running(eviction.beneficiary)) continue;
        if (eviction.moved) {
          // A move may be the second of a chain, outside the domain; it is never partial.
          ASSERT_TRUE(world.running(eviction.workload))
              << where << ": moved workload " << world.workloads()[eviction.workload].spec.name << " stopped";
          continue;
        }
        const Workload& beneficiary = world.workloads()[eviction.beneficiary];
        const std::vector<std::pair<int, int32_t>> held = required_domains(world, beneficiary);
        if (held.empty()) continue;
        // Inside a domain the gang holds at a required level: its own, or a subgroup's.
        bool inside = false;
        for (PodId pod : eviction.pods) {
          auto from = evicted_from.find(pod);
          if (from == evicted_from.end()) continue;
          for (const auto& [level, domain] : held)
            inside = inside || domains.domain_of(0, level, from->second) == domain;
        }
        ASSERT_TRUE(inside) << where << ": " << world.workloads()[eviction.workload].spec.name
                            << " was evicted outside the domains of " << beneficiary.spec.name;
        ++evictions_for_required;
        evictions_for_subgroups += beneficiary.spec.topology_constraint().required_level.empty();
      }
      for (const Start& start : result.started) {
        ++started;
        required_started += !world.workloads()[start.workload].spec.topology_constraint().required_level.empty();
      }
      now += 15;
    }
  }
  // The worlds exercise required gangs and the room made for them, not only allocate.
  EXPECT_GT(started, 5000);
  EXPECT_GT(required_started, 2000);
  EXPECT_GT(evictions_for_required, 100);
  EXPECT_GT(evictions_for_subgroups, 0) << "no room was made for a gang whose subgroups alone carry required levels";
}

}  // namespace
}  // namespace tessera
