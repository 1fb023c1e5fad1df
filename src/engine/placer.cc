#include "engine/placer.h"

#include <fmt/format.h>

#include <algorithm>

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

bool Placer::takes_the_lead(double score, NodeIndex node, int weight, std::optional<double> best_score,
                            NodeIndex best_node) {
  if (!best_score || score > *best_score) {
    tied_weight_ = weight;
    return true;
  }
  if (score < *best_score) return false;
  if (!random_ || policy_.ranks_by_node_order()) return node < best_node;
  tied_weight_ += weight;
  return std::uniform_int_distribution<int64_t>(1, tied_weight_)(*random_) <= weight;
}

std::optional<Binding> Placer::find_node_by_node(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                                 const PlacementPass& pass) {
  std::optional<PlacementChoice> best;
  NodeIndex best_node = -1;
  for (NodeIndex node = 0; node < cluster.node_count(); ++node) {
    NodeView view = cluster.view(node);
    Predicate predicate =
        pass.admits(cluster.reservation(node)) ? check_node(view.spec, view.state, pod) : Predicate::kReserved;
    if (predicate != Predicate::kFits) {
      if (why) why->count(predicate, 1, view.spec, pod);
      continue;
    }
    PlacementChoice choice = policy_.score(view, pod);
    if (takes_the_lead(choice.score, node, 1, best ? std::optional(best->score) : std::nullopt, best_node)) {
      best = choice;
      best_node = node;
    }
  }
  if (!best) return std::nullopt;
  return make_binding(cluster.view(best_node), pod, *best);
}

std::optional<Binding> Placer::find(const ClusterState& cluster, const PodSpec& pod, FailureSummary* why,
                                    const PlacementPass& pass) {
  // Bounded so long replays cannot grow it without limit; entries are cheap to recompute.
  constexpr size_t kMaxCachedVerdicts = size_t{1} << 22;
  constexpr size_t kMaxShapes = size_t{1} << 20;  // shape ids take the low 20 bits of a cache key
  if (cluster_ != &cluster || verdicts_.size() > kMaxCachedVerdicts || shapes_.size() >= kMaxShapes) {
    cluster_ = &cluster;
    verdicts_.clear();
    shapes_ = PodShapes();
  }
  if (!cluster.distinguishes_selector_of(pod)) return find_node_by_node(cluster, pod, why, pass);
  const bool reserved_nodes = cluster.has_reservations();
  const uint64_t shape = shapes_.intern(pod);
  const Verdict* best = nullptr;
  NodeIndex best_node = -1;
  cluster.groups().for_each([&](const NodeGroups::Group& group) {
    const NodeIndex representative = group.representative;
    // The members of a group share their holder and so their due time; the verdict below
    // depends only on their state, so it is cached whoever asks.
    if (reserved_nodes && !pass.admits(cluster.reservation(representative))) {
      if (why) why->nodes_by_predicate[static_cast<size_t>(Predicate::kReserved)] += group.size;
      return;
    }
    auto [it, inserted] = verdicts_.try_emplace(group.uid << 20 | shape);
    Verdict& verdict = it->second;
    if (inserted) {
      NodeView node = cluster.view(representative);
      verdict.predicate = check_node(node.spec, node.state, pod);
      if (verdict.predicate == Predicate::kFits) {
        PlacementChoice choice = policy_.score(node, pod);
        verdict.score = choice.score;
        verdict.device_code = choice.device >= 0 ? cluster.device_code(representative, choice.device) : -1;
      }
    }
    if (verdict.predicate != Predicate::kFits) {
      if (why) why->count(verdict.predicate, group.size, cluster.node_spec(representative), pod);
      return;
    }
    if (takes_the_lead(verdict.score, representative, group.size, best ? std::optional(best->score) : std::nullopt,
                       best_node)) {
      best = &verdict;
      best_node = representative;
    }
  });
  if (!best) return std::nullopt;
  PlacementChoice choice{best->score, -1};
  if (best->device_code >= 0) {
    for (int device = 0; device < cluster.node_spec(best_node).gpu_count(); ++device) {
      if (cluster.device_code(best_node, device) == best->device_code) {
        choice.device = device;
        break;
      }
    }
  }
  return make_binding(cluster.view(best_node), pod, choice);
}

bool Placer::place_gang(Statement& statement, std::span<const PodId> pods, FailureSummary* why,
                        const PlacementPass& pass) {
  Statement::Checkpoint start = statement.checkpoint();
  for (size_t i = 0; i < pods.size(); ++i) {
    FailureSummary pod_failures;
    std::optional<Binding> binding = find(statement.cluster(), statement.cluster().pod(pods[i]), &pod_failures, pass);
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

}  // namespace tessera
