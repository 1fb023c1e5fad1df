#include "engine/placer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "policy/device_choice.h"

namespace tessera {

void FailureSummary::count(Predicate predicate, int nodes, const NodeSpec& spec, const PodSpec& pod) {
  nodes_by_predicate[static_cast<size_t>(predicate)] += nodes;
  if (predicate != Predicate::kGpuMemoryLimit) return;
  auto mebibytes = [](int64_t bytes) { return static_cast<int32_t>((bytes + kMiB - 1) / kMiB); };
  gpu_memory_request_mib = mebibytes(pod.gpu.memory_bytes);
  gpu_memory_limit_mib = mebibytes(pod.gpu.memory_limit_bytes);
  const auto overcommit = static_cast<int16_t>(spec.gpu_memory_overcommit_milli);
  overcommit_low_milli = overcommit_low_milli > 0 ? std::min(overcommit_low_milli, overcommit) : overcommit;
  overcommit_high_milli = std::max(overcommit_high_milli, overcommit);
}

namespace {

// With no failures to count, a node with fewer GPUs free than the pod's nominal need (which
// check_node would refuse) is passed over without asking: in a full cluster, most of them.
int64_t gpu_floor_of(const PodSpec& pod, const FailureSummary* why) { return why ? 0 : pod.gpu.nominal_milli(); }

std::string gibibytes(int32_t mebibytes) { return fmt::format("{:.4g}Gi", mebibytes / 1024.0); }

std::string memory_limit_phrase(const FailureSummary& summary, int nodes) {
  const std::string overcommit =
      summary.overcommit_low_milli == summary.overcommit_high_milli
          ? fmt::format("{:g}", summary.overcommit_low_milli / 1000.0)
          : fmt::format("{:g} to {:g}", summary.overcommit_low_milli / 1000.0, summary.overcommit_high_milli / 1000.0);
  return fmt::format(
      "GPU memory limits: {} node{} {} room for the {} request but not for the {} limit at overcommit {}", nodes,
      nodes == 1 ? "" : "s", nodes == 1 ? "has" : "have", gibibytes(summary.gpu_memory_request_mib),
      gibibytes(summary.gpu_memory_limit_mib), overcommit);
}

}  // namespace

std::string FailureSummary::describe() const {
  std::vector<std::pair<int, int>> counts;  // (nodes, predicate)
  for (int predicate = 1; predicate < kPredicateCount; ++predicate) {
    if (nodes_by_predicate[static_cast<size_t>(predicate)] > 0) {
      counts.emplace_back(nodes_by_predicate[static_cast<size_t>(predicate)], predicate);
    }
  }
  std::sort(counts.begin(), counts.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::string text;
  for (auto [nodes, predicate] : counts) {
    if (!text.empty()) text += "; ";
    if (static_cast<Predicate>(predicate) == Predicate::kGpuMemoryLimit && gpu_memory_limit_mib > 0) {
      text += memory_limit_phrase(*this, nodes);
      continue;
    }
    text +=
        fmt::format("{} node{}: {}", nodes, nodes == 1 ? "" : "s", predicate_phrase(static_cast<Predicate>(predicate)));
  }
  return text.empty() ? "no nodes" : text;
}

std::string TopologyShortfall::describe() const {
  auto gpus = [](int64_t milli) {
    return milli % kMilliPerGpu == 0 ? fmt::format("{}", milli / kMilliPerGpu)
                                     : fmt::format("{:.2f}", static_cast<double>(milli) / kMilliPerGpu);
  };
  if (!unresolved.empty()) return fmt::format("its topology constraint cannot be met: {}", unresolved);
  std::string text = fmt::format("needs {} GPUs within one {}", gpus(need_milli), level);
  if (domains_with_room > 0) {
    return text + fmt::format("; {} {}{} with that much free could not hold it", domains_with_room, level,
                              domains_with_room == 1 ? "" : "s");
  }
  if (domain.empty()) return text + fmt::format("; no node is in a {}", level);
  return text + fmt::format("; the most free in a {} is {} ({} {})", level, gpus(most_free_milli), level, domain);
}

Binding make_binding(const NodeView& node, const PodSpec& pod, const PlacementChoice& choice) {
  Binding binding;
  binding.node = node.index;
  switch (pod.gpu.kind) {
    case GpuRequest::Kind::kNone:
      break;
    case GpuRequest::Kind::kWhole:
      binding.devices = pick_whole_devices(node.spec, node.state, pod);
      binding.milli_per_device = kMilliPerGpu;
      break;
    case GpuRequest::Kind::kPortion:
    case GpuRequest::Kind::kMemory:
      binding = Binding::on_device(node.index, choice.device, pod.gpu,
                                   node.spec.gpus[static_cast<size_t>(choice.device)].memory_bytes);
      break;
  }
  return binding;
}

void Placer::break_ties_in_random_order(uint64_t seed, int node_count) {
  order_.resize(static_cast<size_t>(node_count));
  std::iota(order_.begin(), order_.end(), 0);
  std::shuffle(order_.begin(), order_.end(), std::mt19937_64(seed));
}

NodeIndex Placer::contender(const NodeGroups::Group& group) const {
  if (order_.empty() || policy_.ranks_by_node_order()) return group.representative;
  return *std::min_element(group.members.begin(), group.members.end(), [&](NodeIndex a, NodeIndex b) {
    return order_[static_cast<size_t>(a)] < order_[static_cast<size_t>(b)];
  });
}

bool Placer::takes_the_lead(double score, float preference, NodeIndex node, int weight, const Lead& best) {
  const NodeIndex best_node = best.node;
  if (best.outranked_by(score, preference)) {
    tied_weight_ = weight;
    return true;
  }
  if (score < best.score || preference < best.preference) return false;
  if (policy_.ranks_by_node_order()) return node < best_node;
  if (!order_.empty()) return order_[static_cast<size_t>(node)] < order_[static_cast<size_t>(best_node)];
  if (!random_) return node < best_node;
  tied_weight_ += weight;
  return std::uniform_int_distribution<int64_t>(1, tied_weight_)(*random_) <= weight;
}

std::optional<Binding> Placer::find_node_by_node(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                                 const PlacementPass& pass) {
  std::optional<PlacementChoice> best;
  Lead lead;
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    NodeView view = cluster.view(node);
    Predicate predicate =
        pass.admits(cluster.reservation(node)) ? check_node(view.spec, view.state, pod) : Predicate::kReserved;
    if (predicate != Predicate::kFits) {
      if (why) why->count(predicate, 1, view.spec, pod);
      continue;
    }
    PlacementChoice choice = policy_.score(view, pod);
    choice.score += cluster_term(cluster, node, pod, choice);
    if (takes_the_lead(choice.score, choice.preference, node, 1, lead)) {
      best = choice;
      lead = {choice.score, choice.preference, node};
    }
  }
  if (!best) return std::nullopt;
  return make_binding(cluster.view(lead.node), pod, *best);
}

double Placer::cluster_term(const ClusterState& cluster, NodeIndex node, const PodSpec& pod,
                            const PlacementChoice& choice) {
  return cluster_term_ ? policy_.cluster_term(cluster.view(node), pod, cluster.gpu_supply(), choice) : 0;
}

double Placer::cluster_term(const ClusterState& cluster, NodeIndex node, const PodSpec& pod, const Verdict& verdict) {
  int device = verdict.scored_device;
  // Another node of the group, or the node left it and came back with its devices in another order.
  if (device >= 0 && (node != verdict.scored_node || cluster.device_code(node, device) != verdict.device_code))
    device = device_of(cluster, node, verdict.device_code);
  return cluster_term(cluster, node, pod, PlacementChoice{verdict.score, device, verdict.preference, verdict.parts});
}

int Placer::device_of(const ClusterState& cluster, NodeIndex node, int32_t device_code) {
  if (device_code < 0) return -1;
  for (int device = 0; device < cluster.node_spec(node).gpu_count(); ++device) {
    if (cluster.device_code(node, device) == device_code) return device;
  }
  return -1;
}

void Placer::serve(const ClusterState& cluster) {
  // Bounded so that long replays, or many shapes on a cluster of many groups, cannot grow them
  // without limit; entries are cheap to recompute.
  constexpr size_t kMaxCachedVerdicts = size_t{1} << 22;
  constexpr size_t kMaxShapes = size_t{1} << 20;  // shape ids take the low 20 bits of a past verdict's key
  if (cluster_ != &cluster || slot_verdicts_ > kMaxCachedVerdicts || past_verdicts_.size() > kMaxCachedVerdicts ||
      shapes_.size() >= kMaxShapes) {
    cluster_ = &cluster;
    verdicts_by_slot_.clear();
    slot_verdicts_ = 0;
    past_verdicts_.clear();
    no_room_.clear();
    shapes_ = PodShapes();
  }
}

void Placer::prepare_verdicts(const ClusterState& cluster, uint64_t shape) {
  if (shape >= verdicts_by_slot_.size()) verdicts_by_slot_.resize(shape + 1);
  std::vector<SlotVerdict>& slots = verdicts_by_slot_[shape];
  const size_t needed = cluster.groups().slot_count();
  if (slots.size() >= needed) return;
  slot_verdicts_ += needed - slots.size();
  slots.resize(needed);
}

bool Placer::still_no_room(const ClusterState& cluster, const PodSpec& pod, uint64_t shape, const PlacementPass& pass) {
  auto known = no_room_.find(shape);
  if (known == no_room_.end()) return false;
  const NoRoom& no_room = known->second;
  if (!no_room.any_pass && (no_room.holder != pass.holder || no_room.ends_by != pass.ends_by)) return false;
  // Past this many nodes to check one by one, a search over the node groups costs about as much.
  constexpr size_t kMaxNodesToCheck = 32;
  const auto gained = cluster.room_gained_since(no_room.mark);
  if (!gained || gained->size() > kMaxNodesToCheck) return false;
  bool passed_over = false;  // a node the pass may not use: what holds now holds for this pass only
  for (NodeIndex node : *gained) {
    if (!pass.admits(cluster.reservation(node))) {
      passed_over = true;
    } else if (check_node(cluster.node_spec(node), cluster.node_state(node), pod) == Predicate::kFits) {
      return false;
    }
  }
  known->second = {pass.holder, pass.ends_by, no_room.any_pass && !passed_over, cluster.room_mark()};
  return true;
}

const Placer::Verdict& Placer::verdict(const ClusterState& cluster, const NodeGroups::Group& group, const PodSpec& pod,
                                       uint64_t shape) {
  SlotVerdict& entry = verdicts_by_slot_[shape][static_cast<size_t>(group.slot)];
  Verdict& verdict = entry.verdict;
  if (entry.uid == group.uid) return verdict;
  // The slot's group is new, or the shape has not asked about it yet. The verdict there before is
  // of a group that emptied, whose state may come back (under its uid, in another slot).
  if (entry.uid != 0 && verdict.predicate == Predicate::kFits)
    past_verdicts_.insert_or_assign(entry.uid << 20 | shape, verdict);
  entry.uid = group.uid;
  auto past = past_verdicts_.find(group.uid << 20 | shape);
  verdict = past != past_verdicts_.end() ? past->second : judge(cluster, group.representative, pod);
  return verdict;
}

Placer::Verdict Placer::judge(const ClusterState& cluster, NodeIndex node, const PodSpec& pod) {
  Verdict verdict;
  NodeView view = cluster.view(node);
  verdict.predicate = check_node(view.spec, view.state, pod);
  if (verdict.predicate == Predicate::kFits) {
    PlacementChoice choice = policy_.score(view, pod);
    verdict.score = choice.score;
    verdict.device_code = choice.device >= 0 ? cluster.device_code(node, choice.device) : -1;
    verdict.scored_node = node;
    verdict.scored_device = static_cast<int16_t>(choice.device);
    verdict.preference = choice.preference;
    verdict.parts = choice.parts;
  }
  return verdict;
}

Binding Placer::binding_for(const ClusterState& cluster, NodeIndex node, const PodSpec& pod,
                            const Verdict& verdict) const {
  return make_binding(cluster.view(node), pod,
                      PlacementChoice{verdict.score, device_of(cluster, node, verdict.device_code)});
}

std::optional<Binding> Placer::find(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                    const PlacementPass& pass) {
  serve(cluster);
  const Search search(policy_, cluster.gpu_supply());
  cluster_term_ = policy_.has_cluster_term(pod);
  if (!cluster.distinguishes_selector_of(pod)) return find_node_by_node(cluster, pod, why, pass);
  const bool reserved_nodes = cluster.has_reservations();
  const uint64_t shape = shapes_.intern(pod);
  if (!why && still_no_room(cluster, pod, shape, pass)) return std::nullopt;
  prepare_verdicts(cluster, shape);
  const int64_t gpu_floor = gpu_floor_of(pod, why);
  const Verdict* best = nullptr;
  Lead lead;
  cluster.groups().for_each([&](const NodeGroups::Group& group) {
    const NodeIndex representative = group.representative;
    if (cluster.gpu_free_milli(representative) < gpu_floor) return;
    // The members of a group share their holder and so their due time; the verdict below
    // depends only on their state, so it is cached whoever asks.
    if (reserved_nodes && !pass.admits(cluster.reservation(representative))) {
      if (why) why->nodes_by_predicate[static_cast<size_t>(Predicate::kReserved)] += group.size;
      return;
    }
    const Verdict& found = verdict(cluster, group, pod, shape);
    if (found.predicate != Predicate::kFits) {
      if (why) why->count(found.predicate, group.size, cluster.node_spec(representative), pod);
      return;
    }
    const double score = found.score + (cluster_term_ ? cluster_term(cluster, representative, pod, found) : 0);
    if (best && score < lead.score) return;
    const NodeIndex node = contender(group);
    if (takes_the_lead(score, found.preference, node, group.size, lead)) {
      best = &found;
      lead = {score, found.preference, node};
    }
  });
  if (!best) {
    no_room_[shape] = {pass.holder, pass.ends_by, !reserved_nodes, cluster.room_mark()};
    return std::nullopt;
  }
  return binding_for(cluster, lead.node, pod, *best);
}

std::optional<Binding> Placer::find_among(const ClusterState& cluster, const PodSpec& pod,
                                          std::span<const NodeIndex> nodes, FailureSummary* why,
                                          const PlacementPass& pass) {
  serve(cluster);
  const Search search(policy_, cluster.gpu_supply());
  cluster_term_ = policy_.has_cluster_term(pod);
  // Node by node where the groups cannot be trusted for this pod's selector.
  const bool grouped = cluster.distinguishes_selector_of(pod);
  const uint64_t shape = grouped ? shapes_.intern(pod) : 0;
  if (grouped) prepare_verdicts(cluster, shape);
  const int64_t gpu_floor = gpu_floor_of(pod, why);
  std::optional<Verdict> best;
  Lead lead;
  for (NodeIndex node : nodes) {
    if (cluster.gpu_free_milli(node) < gpu_floor) continue;
    if (!pass.admits(cluster.reservation(node))) {
      if (why) ++why->nodes_by_predicate[static_cast<size_t>(Predicate::kReserved)];
      continue;
    }
    Verdict found = grouped ? verdict(cluster, cluster.groups().group_of(node), pod, shape) : judge(cluster, node, pod);
    if (found.predicate != Predicate::kFits) {
      if (why) why->count(found.predicate, 1, cluster.node_spec(node), pod);
      continue;
    }
    if (cluster_term_) found.score += cluster_term(cluster, node, pod, found);
    // Ties go to the earliest listed node, not at random: a domain's nodes are few.
    if (lead.outranked_by(found.score, found.preference)) {
      best = found;
      lead = {found.score, found.preference, node};
    }
  }
  if (!best) return std::nullopt;
  return binding_for(cluster, lead.node, pod, *best);
}

template <typename Find>
bool Placer::place_each(Statement& statement, std::span<const PodId> pods, FailureSummary* why, Find&& find) {
  Statement::Checkpoint start = statement.checkpoint();
  for (size_t i = 0; i < pods.size(); ++i) {
    FailureSummary pod_failures;
    std::optional<Binding> binding = find(statement.cluster().pod(pods[i]), &pod_failures);
    if (!binding) {
      if (why) {
        *why = pod_failures;
        why->failed_pod_index = static_cast<int>(i);
      }
      statement.rollback(start);
      return false;
    }
    statement.allocate(pods[i], std::move(*binding));
  }
  return true;
}

bool Placer::place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why,
                        const PlacementPass& pass) {
  return place_each(statement, pods, why, [&](const PodSpec& pod, FailureSummary* failures) {
    return find(statement.cluster(), pod, failures, pass);
  });
}

bool Placer::place_gang_among(Statement& statement, std::span<const PodId> pods, std::span<const NodeIndex> nodes,
                              FailureSummary* why, const PlacementPass& pass) {
  return place_each(statement, pods, why, [&](const PodSpec& pod, FailureSummary* failures) {
    return find_among(statement.cluster(), pod, nodes, failures, pass);
  });
}

}  // namespace tessera
