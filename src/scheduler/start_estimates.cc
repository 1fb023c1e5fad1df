#include "scheduler/start_estimates.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>

#include "scheduler/work_limits.h"

namespace tessera {

std::string_view estimate_stop_name(EstimateStop stop) {
  switch (stop) {
    case EstimateStop::kAllEstimated:
      return "all estimated";
    case EstimateStop::kNoMoreEnds:
      return "no expected end left";
    case EstimateStop::kStepCap:
      return "step cap";
    case EstimateStop::kWallCap:
      return "time budget";
    case EstimateStop::kHorizon:
      return "horizon";
  }
  return "unknown";
}

double expected_runtime_of(const WorkloadSpec& spec, double declared) {
  if (spec.time_limit_seconds > 0) return spec.time_limit_seconds;
  return declared > 0 ? declared : std::numeric_limits<double>::infinity();
}

namespace {

// What one queue's work freed in a step: GPUs in all, and per workload.
struct Room {
  double gpus = 0;
  std::vector<std::pair<double, WorkloadId>> workloads;
  void add(WorkloadId workload, double held) {
    gpus += held;
    workloads.emplace_back(held, workload);
  }
};
using RoomByQueue = std::map<QueueIndex, Room>;

// A running workload's expected end; stale once the workload stopped or restarted.
struct ExpectedEnd {
  double at = 0;
  WorkloadId workload = -1;
  double started_at = 0;
  bool operator>(const ExpectedEnd& other) const { return at != other.at ? at > other.at : workload > other.workload; }
};

// The forward run: copies of everything a cycle changes, and the ends still to come.
class ForwardRun {
 public:
  ForwardRun(const EstimateInputs& inputs, const CycleOptions& cycle)
      : inputs_(inputs),
        cycle_(cycle),
        cluster_(inputs.cluster),
        placer_(inputs.policy),
        workloads_(inputs.workloads),
        carried_(inputs.carried ? *inputs.carried : CarriedState{}),
        gpu_(inputs.queues.resources().find(kGpuResource)),
        waiting_(inputs.workloads.size(), 0) {
    for (WorkloadId id : workloads_.active()) {
      if (workloads_.is_pending(id, cluster_)) {
        waiting_[static_cast<size_t>(id)] = 1;
        ++waiting_count_;
      } else if (workloads_.is_running(id, cluster_)) {
        expect_end(id);
      }
    }
  }

  // Per queue, whether it held more GPUs than its fair share after a cycle.
  struct Shares {
    std::vector<char> over;
    bool borrowing(QueueIndex queue) const { return queue < over.size() && over[queue]; }
  };
  int waiting() const { return waiting_count_; }
  bool has_ends() const { return !ends_.empty(); }
  double next_end() const { return ends_.top().at; }

  // Finishes the work expected to end within `resolution` of the next end; returns the time of
  // the step (the last of those ends) and the GPUs released per queue.
  double finish_next_ends(double resolution, RoomByQueue& released) {
    const double first = ends_.top().at;
    double step = first;
    while (!ends_.empty() && ends_.top().at <= first + resolution) {
      const ExpectedEnd end = ends_.top();
      ends_.pop();
      if (!still_running(end)) continue;
      step = std::max(step, end.at);
      const Workload& workload = workloads_[end.workload];
      released[workload.queue].add(end.workload, gpus_held(workload));
      workloads_.finish(end.workload, cluster_);
    }
    return step;
  }

  Result<CycleResult> cycle(double now) {
    return run_cycle({cluster_, placer_, workloads_, inputs_.queues, inputs_.meter, now, &carried_}, cycle_);
  }

  // Estimates for the workloads the cycle started that were waiting at the start of the run.
  void record(const CycleResult& result, double now, bool first, const RoomByQueue& released, const Shares& before,
              std::vector<StartEstimate>& estimates) {
    std::map<WorkloadId, RoomByQueue> evicted_for;
    for (const Eviction& eviction : result.evictions) {
      if (eviction.moved || eviction.beneficiary < 0) continue;
      evicted_for[eviction.beneficiary][workloads_[eviction.workload].queue].add(
          eviction.workload, static_cast<double>(eviction.gpu_milli) / 1000);
    }
    for (const Start& start : result.started) {
      const size_t index = static_cast<size_t>(start.workload);
      if (workloads_.is_running(start.workload, cluster_)) expect_end(start.workload);
      if (index >= waiting_.size() || !waiting_[index]) continue;
      waiting_[index] = 0;
      --waiting_count_;
      StartEstimate estimate{start.workload, now, start.action};
      const auto evicted = evicted_for.find(start.workload);
      const RoomByQueue* room = nullptr;
      if (evicted != evicted_for.end()) {
        estimate.cause = EstimateCause::kEvictions;
        room = &evicted->second;
      } else if (!first) {
        estimate.cause = EstimateCause::kWorkEnds;
        room = &released;
      }
      if (room != nullptr) {
        const Room* largest = nullptr;
        for (const auto& [queue, freed] : *room) {
          if (freed.gpus > estimate.cause_gpus) {
            estimate.cause_queue = queue;
            estimate.cause_gpus = freed.gpus;
            largest = &freed;
          }
        }
        if (largest != nullptr) name_cause_workloads(*largest, estimate);
        // Evicted work is judged by what its queue held as this cycle began; ended work by what
        // it held after the cycle before, while the work still ran.
        const Shares& judged = estimate.cause == EstimateCause::kEvictions ? shares_at_start(result) : before;
        estimate.cause_borrowed =
            estimate.cause_queue != QueueTree::kNoParent && judged.borrowing(estimate.cause_queue);
      }
      estimates.push_back(estimate);
    }
    // Work evicted in the forward run stops; its stale ends are skipped when popped.
  }

  Shares shares_after(const CycleResult& result) const {
    return shares_of(result, [&](QueueIndex queue) -> const ResourceVector* {
      return queue < result.allocated_after.size() ? &result.allocated_after[queue] : nullptr;
    });
  }
  Shares shares_at_start(const CycleResult& result) const {
    return shares_of(result, [&](QueueIndex queue) -> const ResourceVector* {
      return queue < result.loads.size() ? &result.loads[queue].allocated : nullptr;
    });
  }

  template <typename Held>
  Shares shares_of(const CycleResult& result, Held held) const {
    Shares shares;
    if (!gpu_) return shares;
    shares.over.assign(inputs_.queues.size(), 0);
    for (QueueIndex queue = 0; queue < inputs_.queues.size(); ++queue) {
      const ResourceVector* allocated = held(queue);
      if (allocated == nullptr || queue >= result.shares.fair_share.size()) continue;
      shares.over[queue] =
          resource_at(*allocated, *gpu_) > resource_at(result.shares.fair_share[queue], *gpu_) + 1e-9 ? 1 : 0;
    }
    return shares;
  }

  // The names of the workloads that freed the most of `room`, most first (ties by name).
  void name_cause_workloads(const Room& room, StartEstimate& estimate) const {
    std::vector<std::pair<double, const std::string*>> named;
    for (const auto& [gpus, workload] : room.workloads) named.emplace_back(gpus, &workloads_[workload].spec.name);
    const size_t kept = std::min<size_t>(2, named.size());
    std::partial_sort(
        named.begin(), named.begin() + static_cast<std::ptrdiff_t>(kept), named.end(),
        [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : *a.second < *b.second; });
    for (size_t i = 0; i < kept; ++i) estimate.cause_workloads.push_back(*named[i].second);
    estimate.cause_workload_count = static_cast<int>(named.size());
  }

  std::vector<WorkloadId> unreached() const {
    std::vector<WorkloadId> left;
    for (size_t id = 0; id < waiting_.size(); ++id) {
      if (waiting_[id]) left.push_back(static_cast<WorkloadId>(id));
    }
    return left;
  }

 private:
  void expect_end(WorkloadId id) {
    const Workload& workload = workloads_[id];
    const size_t index = static_cast<size_t>(id);
    const double runtime = index < inputs_.expected_runtime.size() ? inputs_.expected_runtime[index] : -1;
    if (!(runtime >= 0) || !std::isfinite(runtime)) return;
    ends_.push({std::max(inputs_.now, workload.started_at + runtime), id, workload.started_at});
  }

  bool still_running(const ExpectedEnd& end) const {
    const Workload& workload = workloads_[end.workload];
    return !workload.finished && workload.started_at == end.started_at && workloads_.is_running(end.workload, cluster_);
  }

  double gpus_held(const Workload& workload) const {
    double gpus = 0;
    for (PodId pod : workload.pods) {
      if (const auto& binding = cluster_.binding(pod)) gpus += static_cast<double>(binding->gpu_milli()) / 1000;
    }
    return gpus;
  }

  const EstimateInputs& inputs_;
  const CycleOptions& cycle_;
  ClusterState cluster_;
  Placer placer_;
  WorkloadSet workloads_;
  CarriedState carried_;
  std::optional<ResourceId> gpu_;
  std::vector<char> waiting_;  // per WorkloadId: pending at the start and not yet started
  int waiting_count_ = 0;
  std::priority_queue<ExpectedEnd, std::vector<ExpectedEnd>, std::greater<>> ends_;
};

const char* room_verb(Action action) {
  switch (action) {
    case Action::kReclaim:
      return "reclaiming";
    case Action::kPreempt:
      return "preempting";
    case Action::kConsolidate:
    case Action::kAllocate:
      break;
  }
  return "moving";
}

// " (ml/pretrain)", " (ml/a and ml/b)", " (ml/a and 3 more)"; "" without names.
std::string cause_workload_names(const StartEstimate& estimate) {
  const std::vector<std::string>& names = estimate.cause_workloads;
  if (names.empty()) return "";
  if (estimate.cause_workload_count <= 1) return fmt::format(" ({})", names[0]);
  if (estimate.cause_workload_count == 2 && names.size() == 2) return fmt::format(" ({} and {})", names[0], names[1]);
  return fmt::format(" ({} and {} more)", names[0], estimate.cause_workload_count - 1);
}

}  // namespace

Result<StartEstimates> estimate_starts(const EstimateInputs& inputs, const CycleOptions& cycle,
                                       const EstimateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  StartEstimates out;
  ForwardRun run(inputs, cycle);
  RoomByQueue released;
  auto first = run.cycle(inputs.now);
  if (!first) return Error{fmt::format("the estimate's cycle at {}s failed: {}", inputs.now, first.error().message)};
  ++out.steps;
  auto shares = run.shares_after(*first);
  run.record(*first, inputs.now, true, released, shares, out.estimates);
  out.stop = EstimateStop::kAllEstimated;
  while (run.waiting() > 0) {
    if (!run.has_ends()) {
      out.stop = EstimateStop::kNoMoreEnds;
      break;
    }
    if (run.next_end() > inputs.now + options.horizon_seconds) {
      out.stop = EstimateStop::kHorizon;
      break;
    }
    if (out.steps >= options.max_steps) {
      out.stop = EstimateStop::kStepCap;
      break;
    }
    if (elapsed() >= options.max_wall_seconds) {
      out.stop = EstimateStop::kWallCap;
      break;
    }
    released.clear();
    const double now = run.finish_next_ends(options.resolution_seconds, released);
    auto result = run.cycle(now);
    if (!result) return Error{fmt::format("the estimate's cycle at {}s failed: {}", now, result.error().message)};
    ++out.steps;
    run.record(*result, now, false, released, shares, out.estimates);
    shares = run.shares_after(*result);
  }
  out.unreached = run.unreached();
  out.seconds = elapsed();
  return out;
}

std::string describe_wait(double seconds) {
  return seconds < 1 ? std::string("in the next cycle") : "~" + readable_seconds(seconds);
}

std::string describe_cause(const StartEstimate& estimate, const QueueTree& tree) {
  if (estimate.cause == EstimateCause::kNextCycle) return "in the next cycle";
  if (estimate.cause_queue == QueueTree::kNoParent) return "when running work ends";
  const std::string gpus = fmt::format("{:g} GPU{}", estimate.cause_gpus, estimate.cause_gpus == 1 ? "" : "s");
  const std::string& queue = tree.spec(estimate.cause_queue).name;
  const char* borrowed = estimate.cause_borrowed ? "borrowed " : "";
  const std::string which = cause_workload_names(estimate);
  if (estimate.cause == EstimateCause::kEvictions) {
    return fmt::format("by {} {} of queue {}'s {}work{}", room_verb(estimate.action), gpus, queue, borrowed, which);
  }
  return fmt::format("when {} of queue {}'s {}work end{}", gpus, queue, borrowed, which);
}

std::string describe(const StartEstimate& estimate, const QueueTree& tree, double now) {
  const std::string cause = describe_cause(estimate, tree);
  const std::string wait = describe_wait(estimate.start - now);
  return cause == wait ? cause : cause + ", " + wait;
}

}  // namespace tessera
