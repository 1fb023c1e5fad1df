// Randomized property tests: thousands of random clusters and pods through every policy.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/feasibility.h"
#include "policy/policy_registry.h"

namespace tessera {
namespace {

struct RandomWorld {
  std::shared_ptr<ClusterSpec> cluster = std::make_shared<ClusterSpec>();
  std::vector<PodSpec> pods;
  std::vector<std::pair<PodSpec, Binding>> running;  // bound before the first search
};

RandomWorld random_world(std::mt19937_64& random) {
  RandomWorld world;
  auto pick = [&random](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  GpuModelId models[] = {*world.cluster->models.intern("A100"), *world.cluster->models.intern("H100")};
  const int nodes = pick(1, 12);
  for (int i = 0; i < nodes; ++i) {
    NodeSpec node;
    node.name = fmt::format("n{}", i);
    node.allocatable = {pick(1, 16) * 4000, int64_t{pick(1, 16)} * 16 * kGiB};
    const int gpus = pick(0, 8);
    GpuModelId model = models[pick(0, 1)];
    for (int g = 0; g < gpus; ++g) node.gpus.push_back(GpuDevice{model, pick(0, 1) ? 80 * kGiB : 40 * kGiB});
    if (pick(0, 5) == 0) node.taints.push_back(Taint{"dedicated", "x", TaintEffect::kNoSchedule});
    if (pick(0, 9) == 0) node.schedulable = false;
    node.labels["rack"] = pick(0, 1) ? "r1" : "r2";
    node.gpu_memory_overcommit_milli = 1000 + 500 * pick(0, 2);  // GPU-memory limits up to 1, 1.5 or 2 devices
    world.cluster->nodes.push_back(node);
  }
  const int pods = pick(1, 80);
  for (int i = 0; i < pods; ++i) {
    PodSpec pod;
    pod.name = fmt::format("p{}", i);
    pod.request = {pick(0, 16) * 1000, int64_t{pick(0, 32)} * kGiB};
    switch (pick(0, 4)) {
      case 0:
        break;
      case 1:
        pod.gpu = GpuRequest::whole(pick(1, 8));
        break;
      case 2:
      case 3:
        pod.gpu = GpuRequest::portion(pick(1, 999));
        break;
      case 4: {
        const int64_t request = int64_t{pick(1, 60)} * kGiB;
        pod.gpu = GpuRequest::memory(request, request + int64_t{pick(0, 40)} * kGiB);
        break;
      }
    }
    if (pick(0, 4) == 0) pod.allowed_models.add(models[pick(0, 1)]);
    if (pick(0, 3) == 0)
      pod.tolerations.push_back(Toleration{"dedicated", Toleration::Operator::kExists, "", std::nullopt});
    if (pick(0, 6) == 0) pod.node_selector["rack"] = "r1";
    world.pods.push_back(pod);
  }
  return world;
}

// The placer groups identical nodes and caches verdicts; it must choose exactly what scoring
// every feasible node one by one chooses (best score with the policy's cluster-wide term, then
// the highest preference, lowest index on ties of both).
std::optional<NodeIndex> brute_force_choice(const ClusterState& cluster, PlacementPolicy& policy, const PodSpec& pod) {
  std::optional<NodeIndex> best;
  double best_score = 0;
  float best_preference = 0;
  policy.search_begins(cluster.gpu_supply());
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    if (check_node(cluster.node_spec(node), cluster.node_state(node), pod) != Predicate::kFits) continue;
    const PlacementChoice choice = policy.score(cluster.view(node), pod);
    double score = choice.score;
    if (policy.has_cluster_term(pod))
      score += policy.cluster_term(cluster.view(node), pod, cluster.gpu_supply(), choice);
    if (!best || score > best_score || (score == best_score && choice.preference > best_preference)) {
      best = node;
      best_score = score;
      best_preference = choice.preference;
    }
  }
  policy.search_ends();
  return best;
}

// Places the world's pods in random gangs of 1 to 4 with the named policy, rolling some back and
// evicting some gangs; before each gang, the placer's choice must be the brute-force choice, and
// the cluster must keep its invariants. Returns the gangs placed.
int place_and_check(const RandomWorld& world, const std::string& policy_name, std::mt19937_64& random,
                    int world_index) {
  auto policy = make_policy(policy_name, WorkloadMix::from_pods(world.pods));
  EXPECT_TRUE(policy.ok());
  if (!policy.ok()) return 0;
  auto reference = make_policy(policy_name, WorkloadMix::from_pods(world.pods));
  ClusterState cluster(world.cluster);
  for (const auto& [pod, binding] : world.running) cluster.bind(cluster.add_pod(pod), binding);
  Placer placer(**policy);
  std::vector<std::vector<PodId>> gangs;
  std::vector<int> min_members;
  int placements = 0;
  for (size_t i = 0; i < world.pods.size();) {
    const size_t size = std::min<size_t>(world.pods.size() - i, std::uniform_int_distribution<size_t>(1, 4)(random));
    std::vector<PodId> gang;
    for (size_t k = 0; k < size; ++k) gang.push_back(cluster.add_pod(world.pods[i + k]));
    i += size;
    // Before placing, the grouped and cached choice must equal the brute-force choice.
    auto expected = brute_force_choice(cluster, **reference, cluster.pod(gang[0]));
    auto found = placer.find(cluster, cluster.pod(gang[0]));
    EXPECT_EQ(found.has_value(), expected.has_value()) << policy_name << " world " << world_index;
    if (found.has_value() != expected.has_value()) return placements;
    if (found) {
      EXPECT_EQ(found->node, *expected) << policy_name << " world " << world_index << " pod " << i;
      if (found->node != *expected) return placements;
    }

    Statement statement(cluster);
    if (placer.place_gang(statement, gang)) {
      if (std::bernoulli_distribution(0.2)(random)) {
        statement.rollback(0);
      } else {
        statement.commit();
        ++placements;
      }
    }
    gangs.push_back(gang);
    min_members.push_back(static_cast<int>(gang.size()));
    // Now and then a whole gang leaves, inside a statement that commits.
    if (!gangs.empty() && std::bernoulli_distribution(0.15)(random)) {
      const auto& victim = gangs[std::uniform_int_distribution<size_t>(0, gangs.size() - 1)(random)];
      Statement eviction(cluster);
      for (PodId id : victim) {
        if (cluster.binding(id)) eviction.evict(id);
      }
      eviction.commit();
    }
    auto violations = check_invariants(cluster);
    EXPECT_TRUE(violations.empty()) << policy_name << " world " << world_index << ": " << violations.front();
    if (!violations.empty()) return placements;
    for (size_t g = 0; g < gangs.size(); ++g) {
      auto partial = check_gang(cluster, gangs[g], min_members[g]);
      EXPECT_TRUE(partial.empty()) << partial.front();
      if (!partial.empty()) return placements;
    }
  }
  return placements;
}

TEST(EngineProperties, RandomGangsKeepInvariantsAndMatchBruteForce) {
  std::mt19937_64 random(20231121);
  int placements = 0;
  for (int world_index = 0; world_index < 3000; ++world_index) {
    RandomWorld world = random_world(random);
    const std::string& policy_name = policy_names()[static_cast<size_t>(world_index) % policy_names().size()];
    placements += place_and_check(world, policy_name, random, world_index);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(placements, 1000);  // the test exercised real placements
}

// Many nodes alike and mostly GPU fractions: groups of several nodes whose devices are used in
// different orders, so a verdict scored on one member serves another, whose chosen device is
// another index (the policy's cluster-wide term for a fraction reads that device). With
// `mixed_devices`, nodes mix GPU models and memory sizes, where which devices of a kind are busy
// must not change what a whole-GPU pod takes, and pods ask for GPU memory and name models.
RandomWorld alike_world(std::mt19937_64& random, bool mixed_devices) {
  RandomWorld world;
  auto pick = [&random](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  const GpuModelId models[] = {*world.cluster->models.intern("A100"), *world.cluster->models.intern("H100")};
  const int kinds = pick(1, 2);
  for (int kind = 0; kind < kinds; ++kind) {
    NodeSpec node;
    node.allocatable = {64000, 512 * kGiB};
    const int devices = pick(2, 4);
    if (mixed_devices) {
      for (int device = 0; device < devices; ++device) {
        const GpuModelId model = models[pick(0, 1) ? 0 : 1];
        node.gpus.push_back(GpuDevice{model, pick(0, 1) ? 80 * kGiB : 40 * kGiB});
      }
      node.gpu_memory_overcommit_milli = 1000 + 500 * pick(0, 2);
    } else {
      node.gpus.assign(static_cast<size_t>(devices), GpuDevice{models[0], 80 * kGiB});
    }
    const int copies = pick(2, 6);
    for (int i = 0; i < copies; ++i) {
      node.name = fmt::format("n{}-{}", kind, i);
      world.cluster->nodes.push_back(node);
    }
  }
  const int shares[] = {100, 250, 300, 500, 700};
  // Fractions already running on devices chosen at random, so that nodes alike in what they hold
  // hold it on devices in different orders.
  for (NodeIndex node = 0; node < static_cast<NodeIndex>(world.cluster->nodes.size()); ++node) {
    const NodeSpec& spec = world.cluster->nodes[static_cast<size_t>(node)];
    const int device = pick(0, spec.gpu_count() - 1);
    if (pick(0, 1) == 0) continue;
    PodSpec pod;
    pod.name = fmt::format("running-{}", node);
    pod.request = {1000, kGiB};
    pod.gpu = GpuRequest::portion(shares[pick(0, 4)]);
    world.running.emplace_back(
        pod, Binding::on_device(node, device, pod.gpu, spec.gpus[static_cast<size_t>(device)].memory_bytes));
  }
  const int pods = pick(10, 60);
  for (int i = 0; i < pods; ++i) {
    PodSpec pod;
    pod.name = fmt::format("p{}", i);
    pod.request = {pick(1, 2) * 1000, int64_t{pick(1, 8)} * kGiB};
    if (!mixed_devices) {
      pod.gpu = pick(0, 4) == 0 ? GpuRequest::whole(pick(1, 2)) : GpuRequest::portion(shares[pick(0, 4)]);
    } else {
      const int kind = pick(0, 5);
      if (kind == 0) {
        pod.gpu = GpuRequest::whole(pick(1, 2));
      } else if (kind == 1) {
        const int64_t request = int64_t{pick(4, 40)} * kGiB;
        pod.gpu = GpuRequest::memory(request, request + int64_t{pick(0, 20)} * kGiB);
      } else {
        pod.gpu = GpuRequest::portion(shares[pick(0, 4)]);
      }
      if (pick(0, 3) == 0) pod.allowed_models.add(models[pick(0, 1) ? 0 : 1]);
    }
    world.pods.push_back(pod);
  }
  return world;
}

TEST(EngineProperties, VerdictsServeOtherMembersOfTheirGroupAsBruteForce) {
  std::mt19937_64 random(20261127);
  int placements = 0;
  for (int world_index = 0; world_index < 600; ++world_index) {
    const RandomWorld world = alike_world(random, false);
    placements += place_and_check(world, world_index % 2 == 0 ? "tessera" : "fgd", random, world_index);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(placements, 3000);
}

TEST(EngineProperties, NodesOfMixedDevicesServeTheirGroupAsBruteForce) {
  std::mt19937_64 random(778);
  int placements = 0;
  for (int world_index = 0; world_index < 2000; ++world_index) {
    const RandomWorld world = alike_world(random, true);
    const std::string& policy_name = policy_names()[static_cast<size_t>(world_index) % policy_names().size()];
    placements += place_and_check(world, policy_name, random, world_index);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(placements, 3000);
}

}  // namespace
}  // namespace tessera
