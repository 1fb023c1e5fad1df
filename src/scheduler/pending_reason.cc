#include "scheduler/pending_reason.h"

#include <fmt/format.h>

namespace tessera {

std::string_view pending_code_name(PendingCode code) {
  switch (code) {
    case PendingCode::kQueueLimit:
      return "QueueLimit";
    case PendingCode::kNonPreemptibleQuota:
      return "NonPreemptibleQuota";
    case PendingCode::kUnschedulable:
      return "Unschedulable";
    case PendingCode::kEvicted:
      return "Evicted";
  }
  return "Unknown";
}

std::string format_resource_amount(std::string_view resource, double amount) {
  if (resource == kCpuResource) return fmt::format("{:.4g} CPU", amount / 1000.0);
  if (resource == kMemoryResource) return fmt::format("{:.4g} GiB memory", amount / double(int64_t{1} << 30));
  return fmt::format("{:.4g} {}", amount, resource);
}

namespace {

// "reclaim could free rack r7 by evicting 3 workloads of queue 'x', but 'x' is at its fair share"
std::string describe_room(const TopologyRoomFinding& found, std::string_view action, const QueueTree& tree) {
  if (found.domain.empty()) {
    return fmt::format("no {} could be freed: too little preemptible work past its minimum runtime in any {}",
                       found.level, found.level);
  }
  std::string text = fmt::format("{} could free {} {} by evicting ", action, found.level, found.domain);
  std::vector<std::string> blocks;
  for (size_t i = 0; i < found.victims.size(); ++i) {
    const TopologyRoomFinding::Victims& victims = found.victims[i];
    const std::string& name = tree.spec(victims.queue).name;
    if (i > 0) text += i + 1 == found.victims.size() ? " and " : ", ";
    text += i == 0
                ? fmt::format("{} workload{} of queue '{}'", victims.workloads, victims.workloads == 1 ? "" : "s", name)
                : fmt::format("{} of queue '{}'", victims.workloads, name);
    if (victims.may_lose >= 0 && victims.may_lose < 1e-3) {
      blocks.push_back(fmt::format("'{}' is at its fair share", name));
    } else if (victims.may_lose >= 0 && victims.may_lose + 1e-6 < victims.gpus) {
      blocks.push_back(fmt::format("'{}' may lose only {:.4g} of those {:.4g} GPUs above its fair share", name,
                                   victims.may_lose, victims.gpus));
    }
    if (victims.not_lower > 0) {
      blocks.push_back(victims.not_lower == victims.workloads && victims.workloads == 1
                           ? std::string("it is not of lower priority")
                           : fmt::format("{} of them {} not of lower priority", victims.not_lower,
                                         victims.not_lower == 1 ? "is" : "are"));
    }
  }
  if (blocks.empty()) return text + ", but its search within its limits found no such set";
  text += ", but ";
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0) text += i + 1 == blocks.size() ? " and " : ", ";
    text += blocks[i];
  }
  return text;
}

}  // namespace

std::vector<RoomAttempt> room_attempts(const PendingReason& reason, const QueueTree& tree) {
  std::vector<RoomAttempt> attempts;
  if (reason.code != PendingCode::kUnschedulable) return attempts;
  if (reason.consolidation_tried) attempts.push_back({"consolidate", "moving running work would not make room"});
  if (reason.reclaim_blocked) {
    const auto& excess = *reason.reclaim_blocked;
    const auto amount = [&](double value) {
      return format_resource_amount(tree.resources().name(excess.resource), value);
    };
    attempts.push_back(
        {"reclaim", excess.held + 1e-6 >= excess.fair_share
                        ? fmt::format("no reclaim: queue '{}' holds {}, at or above its fair share of {}",
                                      tree.spec(excess.queue).name, amount(excess.held), amount(excess.fair_share))
                        : fmt::format("no reclaim: queue '{}' holds {} of its fair share of {}, and this workload's "
                                      "{} would leave it further above that share than it is below it now",
                                      tree.spec(excess.queue).name, amount(excess.held), amount(excess.fair_share),
                                      amount(excess.requested))});
  } else if (reason.reclaim_room) {
    attempts.push_back({"reclaim", describe_room(*reason.reclaim_room, "reclaim", tree)});
  } else if (reason.reclaim_tried) {
    attempts.push_back(
        {"reclaim", "reclaim found no victims that free enough room without pushing their queues below fair share"});
  }
  if (reason.preemption_room) {
    // No domain could be freed: said once, whichever action found it.
    const bool said = reason.reclaim_room && reason.reclaim_room->domain.empty() &&
                      reason.preemption_room->domain.empty() && !reason.reclaim_blocked;
    if (!said) attempts.push_back({"preempt", describe_room(*reason.preemption_room, "preemption", tree)});
  } else if (reason.preemption_tried) {
    attempts.push_back({"preempt", "no lower-priority preemptible work in its queue frees enough room"});
  }
  return attempts;
}

std::string describe(const PendingReason& reason, const QueueTree& tree) {
  auto amount = [&](ResourceId resource, double value) {
    return format_resource_amount(tree.resources().name(resource), value);
  };
  switch (reason.code) {
    case PendingCode::kQueueLimit: {
      const QuotaBlock& block = *reason.quota;
      return fmt::format("queue '{}' is at its limit: it holds {} of a limit of {}, and this workload needs {}",
                         tree.spec(block.queue).name, amount(block.resource, block.held),
                         amount(block.resource, block.bound), amount(block.resource, block.requested));
    }
    case PendingCode::kNonPreemptibleQuota: {
      const QuotaBlock& block = *reason.quota;
      return fmt::format(
          "non-preemptible workloads may use only deserved quota: queue '{}' has {} of its {} deserved in "
          "non-preemptible use, and this workload needs {}",
          tree.spec(block.queue).name, amount(block.resource, block.held), amount(block.resource, block.bound),
          amount(block.resource, block.requested));
    }
    case PendingCode::kEvicted:
      return fmt::format("evicted by {} to make room for '{}'; it waits in its queue for room again", reason.evicted_by,
                         reason.evicted_for);
    case PendingCode::kUnschedulable:
      break;
  }
  std::string text = reason.nodes.topology && reason.nodes.topology->failed() ? reason.nodes.topology->describe()
                     : reason.gang_size > 1
                         ? fmt::format("pod {} of a gang of {} fits on no node ({})", reason.nodes.failed_pod_index + 1,
                                       reason.gang_size, reason.nodes.describe())
                         : fmt::format("fits on no node ({})", reason.nodes.describe());
  if (reason.reserved_nodes > 0) {
    text += fmt::format("; {} node{} reserved for it drain{} (held for {:.0f} s)", reason.reserved_nodes,
                        reason.reserved_nodes == 1 ? "" : "s", reason.reserved_nodes == 1 ? "s" : "",
                        reason.reserved_seconds);
  }
  // Reclaim's findings first; moving work says little beside them.
  const std::vector<RoomAttempt> attempts = room_attempts(reason, tree);
  for (std::string_view action : {"reclaim", "preempt", "consolidate"}) {
    if (action == "consolidate" && reason.reclaim_tried) continue;
    for (const RoomAttempt& attempt : attempts) {
      if (attempt.action == action) text += "; " + attempt.outcome;
    }
  }
  return text;
}

}  // namespace tessera
