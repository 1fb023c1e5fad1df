#include "policy/queue_validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

namespace tessera {

namespace {

// The queues on a cycle of parents, each cycle once, as lists of indices in parent order. A
// walk up stops at a top-level queue or at one already left out (that is reported otherwise).
std::vector<std::vector<size_t>> parent_cycles(const std::vector<QueueSpec>& specs, const std::vector<bool>& excluded,
                                               const std::map<std::string, size_t>& index) {
  enum class Mark : uint8_t { kNew, kOnWalk, kDone };
  std::vector<Mark> marks(specs.size(), Mark::kNew);
  std::vector<std::vector<size_t>> cycles;
  for (size_t start = 0; start < specs.size(); ++start) {
    std::vector<size_t> walk;
    size_t queue = start;
    while (!excluded[queue] && marks[queue] == Mark::kNew) {
      marks[queue] = Mark::kOnWalk;
      walk.push_back(queue);
      if (specs[queue].parent.empty()) break;
      queue = index.at(specs[queue].parent);
    }
    if (!excluded[queue] && marks[queue] == Mark::kOnWalk && !specs[queue].parent.empty()) {
      cycles.emplace_back(std::find(walk.begin(), walk.end(), queue), walk.end());
    }
    for (size_t visited : walk) marks[visited] = Mark::kDone;
  }
  return cycles;
}

}  // namespace

UsableQueues usable_queues(std::vector<QueueSpec> specs, const ResourceNames& resources) {
  UsableQueues result;
  std::vector<bool> excluded(specs.size(), false);
  std::map<std::string, size_t> index;
  const auto exclude = [&](size_t queue, std::string reason, std::string message) {
    excluded[queue] = true;
    result.problems.push_back({specs[queue].name, std::move(reason), std::move(message), true});
  };
  for (size_t queue = 0; queue < specs.size(); ++queue) {
    const QueueSpec& spec = specs[queue];
    if (spec.name.empty()) {
      exclude(queue, "InvalidName", fmt::format("queue #{}: name is empty", queue));
    } else if (!index.emplace(spec.name, queue).second) {
      exclude(queue, "DuplicateName", fmt::format("queue '{}': the name is used by another queue", spec.name));
    } else if (auto error = queue_quota_error(spec, resources)) {
      exclude(queue, "InvalidQuota", error->message);
    }
  }
  for (size_t queue = 0; queue < specs.size(); ++queue) {
    const QueueSpec& spec = specs[queue];
    if (!excluded[queue] && !spec.parent.empty() && !index.contains(spec.parent)) {
      exclude(queue, "ParentMissing",
              fmt::format("queue '{}': parent queue '{}' does not exist", spec.name, spec.parent));
    }
  }
  for (const std::vector<size_t>& cycle : parent_cycles(specs, excluded, index)) {
    std::vector<std::string_view> names;
    for (size_t queue : cycle) names.push_back(specs[queue].name);
    names.push_back(specs[cycle.front()].name);
    const std::string path = fmt::format("{}", fmt::join(names, " -> "));
    for (size_t queue : cycle) {
      exclude(queue, "CyclicParent", fmt::format("queue '{}': its parents form a cycle ({})", specs[queue].name, path));
    }
  }
  // Leaving a queue out leaves out what hangs below it: repeat until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t queue = 0; queue < specs.size(); ++queue) {
      const QueueSpec& spec = specs[queue];
      if (excluded[queue] || spec.parent.empty() || !excluded[index.at(spec.parent)]) continue;
      exclude(queue, "ParentExcluded",
              fmt::format("queue '{}': parent queue '{}' is not usable", spec.name, spec.parent));
      changed = true;
    }
  }
  for (size_t queue = 0; queue < specs.size(); ++queue) {
    if (!excluded[queue]) result.specs.push_back(std::move(specs[queue]));
  }
  return result;
}

std::vector<QueueProblem> quota_warnings(const QueueTree& tree) {
  std::vector<QueueProblem> warnings;
  for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
    const QueueIndex parent = tree.parent(queue);
    if (parent == QueueTree::kNoParent) continue;
    std::vector<std::string> exceeded;
    for (ResourceId resource = 0; resource < tree.resource_count(); ++resource) {
      const double own = tree.quota(queue, resource).deserved;
      const double parents = tree.quota(parent, resource).deserved;
      if (own > parents) {
        exceeded.push_back(fmt::format("{} {} > {}", tree.resources().name(resource), own, parents));
      }
    }
    if (exceeded.empty()) continue;
    warnings.push_back({tree.spec(queue).name, "DeservedExceedsParent",
                        fmt::format("queue '{}': deserved quota exceeds parent '{}''s ({}); at most the parent's "
                                    "can be guaranteed",
                                    tree.spec(queue).name, tree.spec(parent).name, fmt::join(exceeded, ", ")),
                        false});
  }
  return warnings;
}

}  // namespace tessera
