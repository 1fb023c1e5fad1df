#include "sim/cycle_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/cluster_state.h"
#include "engine/invariants.h"
#include "engine/placer.h"
#include "policy/fair_share.h"
#include "policy/policy_registry.h"
#include "scheduler/cycle.h"
#include "scheduler/limit_ledger.h"
#include "scheduler/pending_reason.h"
#include "scheduler/resource_meter.h"
#include "scheduler/workload_set.h"
#include "sim/estimate_accuracy.h"
#include "sim/pod_type_label.h"
#include "sim/statistics.h"
#include "sim/topology_cost.h"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// GPUs: an allocation within this of a bound counts as at the bound (fractions are milli-GPU).
constexpr double kGpuSlack = 1e-6;
// Simulated seconds: times this close are the same instant (cycle times are start + k * interval).
constexpr double kTimeSlack = 1e-9;
constexpr double kSecondsPerHour = 3600;
// Without a horizon a replay stops at the latest planned end plus this much, or plus the planned
// span when that is longer: work that is still not done by then is caught in a loop of evictions.
constexpr double kMinOverrunSeconds = 86400;
constexpr size_t kMaxPendingExamples = 20;
constexpr std::string_view kNotYetCycled = "NotYetCycled";
constexpr size_t kMaxLimitExamples = 12;

double gpus(int64_t milli) { return static_cast<double>(milli) / kMilliPerGpu; }

// What the replay knows of a workload beyond the WorkloadSet.
struct Tracked {
  size_t spec = 0;  // index in Scenario::workloads
  double arrival = 0;
  double gang_gpus = 0;  // what its gang asks: the measure of evictions made for it
  bool running = false;
  double progress = 0;      // run time accrued before the current run (restarts keep the checkpointed part)
  double run_started = 0;   // when the current run began
  double slowdown = 1;      // the current run's run-time factor for its spread (TopologyCost)
  int common_level = -2;    // at its first start: the narrowest level holding its gang (-2: not started)
  int gang_nodes = 0;       // at its first start: the nodes its gang took
  uint32_t generation = 0;  // bumped whenever it stops or restarts, so a stale completion is ignored
  double first_start = -1;
  double completed = -1;
  double stopped = -1;  // ended by a limit
};

struct Completion {
  double time;
  WorkloadId workload;
  uint32_t generation;
  bool operator>(const Completion& other) const {
    return time != other.time ? time > other.time : workload > other.workload;
  }
};

struct Sample {
  TimelinePoint cluster;
  std::vector<QueuePoint> queues;  // by queue index
};

// Samples of the replay's state on a regular grid from `start`. The end of a replay is not known in
// advance (evictions and waits push it out), so when the grid fills up every other sample is
// dropped and the step doubled; `resample` reads the requested number of points off it. When the
// replay ends where it was expected to, the grids coincide and no sample moves.
class SampleGrid {
 public:
  SampleGrid(double start, double step, int samples)
      : start_(start), step_(step), capacity_(2 * static_cast<size_t>(std::max(samples, 2))) {}

  // Records current() at every grid time not yet recorded that lies before `time` (inclusive: up to
  // and including it). A sample at the time of an event shows the state after the event.
  template <typename Current>
  void record(double time, bool inclusive, const Current& current) {
    std::optional<Sample> sample;
    while (inclusive ? next_time() <= time + kTimeSlack : next_time() < time - kTimeSlack) {
      if (!sample) sample = current();
      points_.push_back(*sample);
      if (points_.size() > capacity_) thin();
    }
  }

  std::vector<Sample> resample(double end, int samples) const {
    std::vector<Sample> out;
    if (points_.empty()) return out;
    const int count = end > start_ ? std::max(samples, 2) : 1;
    for (int j = 0; j < count; ++j) {
      const double time = count == 1 ? start_ : start_ + (end - start_) * j / (count - 1);
      const auto index = static_cast<size_t>(std::max(0.0, std::floor((time - start_) / step_ + 1e-9)));
      Sample sample = points_[std::min(index, points_.size() - 1)];
      sample.cluster.time_seconds = time;
      for (QueuePoint& point : sample.queues) point.time_seconds = time;
      out.push_back(std::move(sample));
    }
    return out;
  }

 private:
  double next_time() const { return start_ + static_cast<double>(points_.size()) * step_; }

  void thin() {
    size_t kept = 0;
    for (size_t i = 0; i < points_.size(); i += 2) points_[kept++] = std::move(points_[i]);
    points_.resize(kept);
    step_ *= 2;
  }

  double start_;
  double step_;
  size_t capacity_;
  std::vector<Sample> points_;
};

struct Episode {
  bool open = false;
  double start = 0;
  int64_t start_cycle = 0;  // the first cycle that counts towards its length
};

// Per queue: the running sums that become its time averages and starvation figures.
struct QueueAccount {
  double allocated_integral = 0;  // GPU-seconds
  double fair_share_integral = 0;
  double gap_integral = 0;    // |allocated - fair share| over the time fair share > 0
  double below_integral = 0;  // the part of it while allocated < fair share
  Episode episode;
  int64_t episodes = 0;
  std::vector<double> resolved_seconds;
  std::vector<double> resolved_cycles;
  // Leaves only:
  int64_t evictions = 0;
  double lost_gpu_hours = 0;
};

struct PendingGang {
  QueueIndex leaf;
  double gpus;
};

struct GroupKey {
  WorkloadId beneficiary;
  Action action;
  bool operator<(const GroupKey& other) const {
    return beneficiary != other.beneficiary ? beneficiary < other.beneficiary : action < other.action;
  }
};

struct GroupTotal {
  int64_t gpu_milli = 0;  // taken: evicted and not re-placed
  int64_t moved_milli = 0;
  int64_t victims = 0;
};

class CycleReplay {
 public:
  CycleReplay(const Scenario& scenario, const QueueTree& tree, std::vector<QueueIndex> leaf_of, PlacementPolicy& policy,
              const TimelineOptions& options)
      : scenario_(scenario),
        tree_(tree),
        leaf_of_(std::move(leaf_of)),
        options_(options),
        interval_(options.cycle_interval_seconds),
        gpu_(*tree.resources().find(kGpuResource)),
        cycle_options_(options.cycle),
        cluster_(scenario.cluster),
        placer_(policy),
        policy_(policy),
        meter_(*scenario.cluster, tree.resources()),
        accounts_(tree.size()),
        allocated_(tree.size(), 0),
        fair_share_(tree.size(), 0),
        in_quota_(tree.size(), 0),
        demand_(tree.size(), 0),
        deserved_(tree.size(), 0),
        pending_(tree.size(), 0),
        first_event_(tree.size(), kInfinity),
        preempt_min_(tree.size(), 0),
        reclaim_min_(tree.size(), 0),
        waits_(tree.size()),
        jcts_(tree.size()) {
    for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
      deserved_[queue] = tree.quota(queue, gpu_).deserved;
      preempt_min_[queue] = preempt_min_runtime(tree, queue);
      reclaim_min_[queue] = reclaim_min_runtime(tree, queue);
    }
    for (int a = 0; a < kActionCount; ++a) churn_[a].action = std::string(action_name(static_cast<Action>(a)));
    limits_on_ = options.work_limits;
    if (options.start_estimates) accuracy_.emplace(options.estimates);
    const TopologyDomains& domains = cluster_.topology();
    cost_topology_ = scenario.topology_cost.topology.empty() ? (domains.topology_count() > 0 ? 0 : -1)
                                                             : domains.find_topology(scenario.topology_cost.topology);
  }

  Result<TimelinePolicyResult> run(std::string_view policy_name) {
    const auto wall_start = Clock::now();
    const std::vector<WorkloadSpec>& specs = scenario_.workloads;
    start_ = specs.empty() ? 0 : specs.front().arrival_seconds;
    const double horizon_end = options_.horizon_seconds > 0 ? start_ + options_.horizon_seconds : kInfinity;
    while (arrivals_ < specs.size() && specs[arrivals_].arrival_seconds <= horizon_end + kTimeSlack) ++arrivals_;
    planned_end_ = start_;
    for (size_t i = 0; i < arrivals_; ++i) {
      planned_end_ = std::max(planned_end_, specs[i].arrival_seconds + std::max(0.0, specs[i].duration_seconds));
    }
    planned_end_ = std::min(planned_end_, horizon_end);
    const double limit_end =
        options_.horizon_seconds > 0 ? horizon_end : planned_end_ + std::max(planned_end_ - start_, kMinOverrunSeconds);
    const double expected_span = planned_end_ - start_;
    grid_.emplace(start_, expected_span > 0 ? expected_span / std::max(1, options_.samples - 1) : interval_,
                  options_.samples);
    last_time_ = start_;

    double end = start_;
    std::string end_reason = "finished";
    if (arrivals_ > 0) {
      int64_t cycle = 0;
      while (true) {
        const double now = start_ + static_cast<double>(cycle) * interval_;
        if (now > limit_end + kTimeSlack) {
          if (process_events_until(limit_end)) {
            end = limit_end;
            end_reason = options_.horizon_seconds > 0 ? "horizon" : "limit";
          } else {
            end = finished_at_;
          }
          break;
        }
        if (!process_events_until(now)) {
          end = finished_at_;
          break;
        }
        advance(now);
        apply_limits(now);
        auto changed = run_one_cycle(cycle, now, policy_name);
        if (!changed) return changed.error();
        if (!*changed) {
          const std::optional<double> wake = next_wake(now);
          if (!wake) {  // nothing can change any more: no arrival, completion or expiring protection ahead
            end = std::min(std::max(now, planned_end_), limit_end);
            end_reason = "stable";
            break;
          }
          if (options_.skip_idle_cycles && cycle_options_.fair_share.usage_penalty <= 0) {
            cycle = std::max(cycle + 1, static_cast<int64_t>(std::ceil((*wake - start_) / interval_ - 1e-9)));
            continue;
          }
        }
        ++cycle;
      }
    }
    return finish(policy_name, end, end_reason, wall_start);
  }

 private:
  // ---------------------------------------------------------------------------------------------
  // Between cycles: arrivals and completions

  // Processes every arrival and completion up to `time`, in time order. False once nothing remains
  // (every workload arrived and finished); finished_at_ is then the last completion.
  bool process_events_until(double time) {
    while (true) {
      const double arrival = next_arrival_ < arrivals_ ? scenario_.workloads[next_arrival_].arrival_seconds : kInfinity;
      drop_stale_completions();
      const double completion = completions_.empty() ? kInfinity : completions_.top().time;
      const double at = std::min(arrival, completion);
      if (at > time + kTimeSlack || !std::isfinite(at)) return true;
      advance(at);
      while (!completions_.empty() && completions_.top().time <= at + kTimeSlack) {
        const Completion done = completions_.top();
        completions_.pop();
        if (is_current(done)) complete(done.workload, done.time);
      }
      while (next_arrival_ < arrivals_ && scenario_.workloads[next_arrival_].arrival_seconds <= at + kTimeSlack) {
        arrive(next_arrival_++);
      }
      if (next_arrival_ == arrivals_ && workloads_.active().empty()) {
        finished_at_ = at;
        return false;
      }
    }
  }

  bool is_current(const Completion& completion) const {
    const Tracked& tracked = tracked_[static_cast<size_t>(completion.workload)];
    return tracked.running && tracked.generation == completion.generation;
  }

  void drop_stale_completions() {
    while (!completions_.empty() && !is_current(completions_.top())) completions_.pop();
  }

  void arrive(size_t spec_index) {
    const WorkloadSpec& spec = scenario_.workloads[spec_index];
    const QueueIndex leaf = leaf_of_[spec_index];
    const WorkloadId id = workloads_.add(spec, leaf, cluster_, spec.arrival_seconds);
    Tracked tracked;
    tracked.spec = spec_index;
    tracked.arrival = spec.arrival_seconds;
    for (PodId pod : workloads_[id].gang()) tracked.gang_gpus += resource_at(meter_.pending(cluster_.pod(pod)), gpu_);
    if (tracked_.size() <= static_cast<size_t>(id)) tracked_.resize(static_cast<size_t>(id) + 1);
    tracked_[static_cast<size_t>(id)] = tracked;
    ++pending_[leaf];
    pending_pods_ += static_cast<int64_t>(spec.pods.size());
    mark_event(leaf, spec.arrival_seconds);
  }

  void complete(WorkloadId id, double time) {
    Tracked& tracked = tracked_[static_cast<size_t>(id)];
    const Workload& workload = workloads_[id];
    close_run(id, time);
    allocated_[workload.queue] = std::max(0.0, allocated_[workload.queue] - held_gpus(id));
    workloads_.finish(id, cluster_);
    tracked.running = false;
    ++tracked.generation;
    tracked.completed = time;
    jcts_[workload.queue].push_back(time - tracked.arrival);
    mark_event(workload.queue, time);
  }

  double held_gpus(WorkloadId id) const {
    double held = 0;
    for (PodId pod : workloads_[id].pods) {
      if (const auto& binding = cluster_.binding(pod))
        held += resource_at(meter_.bound(cluster_.pod(pod), *binding), gpu_);
    }
    return held;
  }

  // A starvation episode starts at the arrival or completion that caused it, not at the cycle that
  // first sees it.
  void mark_event(QueueIndex leaf, double time) {
    for (QueueIndex queue = leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) {
      first_event_[queue] = std::min(first_event_[queue], time);
    }
  }

  void start_run(WorkloadId id, double now) {
    Tracked& tracked = tracked_[static_cast<size_t>(id)];
    tracked.running = true;
    tracked.run_started = now;
    ++tracked.generation;
    // A gang spread over the topology runs slower (docs/topology.md).
    std::vector<NodeIndex> nodes;
    for (PodId pod : workloads_[id].gang()) nodes.push_back(cluster_.binding(pod)->node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    const int common = narrowest_common_level(cluster_.topology(), cost_topology_, nodes);
    tracked.slowdown = run_time_factor(scenario_.topology_cost, common);
    if (tracked.first_start < 0) {
      tracked.first_start = now;
      tracked.common_level = common;
      tracked.gang_nodes = static_cast<int>(nodes.size());
      waits_[workloads_[id].queue].push_back(now - tracked.arrival);
      if (accuracy_) accuracy_->started(id, now);
    }
    // A run ends when the work is done or its time limit expires, whichever comes first.
    const WorkloadSpec& spec = scenario_.workloads[tracked.spec];
    double run_for = spec.duration_seconds >= 0
                         ? std::max(0.0, spec.duration_seconds - tracked.progress) * tracked.slowdown
                         : kInfinity;
    if (spec.time_limit_seconds > 0) run_for = std::min(run_for, spec.time_limit_seconds);
    if (std::isfinite(run_for)) completions_.push({now + run_for, id, tracked.generation});
  }

  // Per workload, what the estimator may expect of its current or next run: the rest of its
  // duration (the scenario's stand-in for an expected-runtime annotation), within its time limit.
  std::vector<double> expected_runtimes() const {
    std::vector<double> expected(workloads_.size(), kInfinity);
    for (WorkloadId id : workloads_.active()) {
      const Tracked& tracked = tracked_[static_cast<size_t>(id)];
      const WorkloadSpec& spec = scenario_.workloads[tracked.spec];
      const double slowdown = tracked.running ? tracked.slowdown : 1;
      const double rest =
          spec.duration_seconds >= 0 ? std::max(0.0, spec.duration_seconds - tracked.progress) * slowdown : -1;
      double& runtime = expected[static_cast<size_t>(id)];
      runtime = expected_runtime_of(spec, rest);
      if (spec.time_limit_seconds > 0 && rest >= 0) runtime = std::min(rest, spec.time_limit_seconds);
    }
    return expected;
  }

  // ---------------------------------------------------------------------------------------------
  // Time and idle-GPU limits (docs/design.md §6)

  // The run time of a workload's current run at `now`; its utilisation profile counts from there.
  double current_run(WorkloadId id, double now) const { return now - tracked_[static_cast<size_t>(id)].run_started; }

  double idle_threshold(WorkloadId id) const {
    const WorkLimits* limits = limits_.limits(workloads_[id].spec.name);
    return limits != nullptr ? limits->idle_threshold_pct : kDefaultIdleThresholdPct;
  }

  // Adds the current run, up to `now`, to the GPU-hours held and idle; `held` GPUs, or what its
  // pods hold now when negative. Call before its pods are unbound.
  void close_run(WorkloadId id, double now, double held = -1) {
    const Tracked& tracked = tracked_[static_cast<size_t>(id)];
    if (!tracked.running) return;
    const double gpus_held = held >= 0 ? held : held_gpus(id);
    const double run = std::max(0.0, current_run(id, now));
    const UtilisationProfile& profile = scenario_.workloads[tracked.spec].utilisation;
    const double idle = profile.busy_pct >= idle_threshold(id) ? run - profile.busy_seconds(run) : run;
    limit_summary_.gpu_hours += gpus_held * run / kSecondsPerHour;
    limit_summary_.idle_gpu_hours += gpus_held * idle / kSecondsPerHour;
  }

  // Whether the workload's GPUs would have been busy again later in the run the idle limit ended.
  bool busy_later(WorkloadId id, double now) const {
    const Tracked& tracked = tracked_[static_cast<size_t>(id)];
    const WorkloadSpec& spec = scenario_.workloads[tracked.spec];
    if (spec.utilisation.busy_pct < idle_threshold(id)) return false;
    const double run = current_run(id, now);
    const double run_end = spec.duration_seconds >= 0 ? spec.duration_seconds - tracked.progress : kInfinity;
    const double horizon = std::isfinite(run_end) ? run_end : run + kMinOverrunSeconds;
    return spec.utilisation.busy_seconds(horizon) > spec.utilisation.busy_seconds(run) + kTimeSlack;
  }

  // The limits step before each cycle: the ledger judges every running workload and the replay
  // carries out its verdicts. A requeued workload keeps all its progress: its notice let it save.
  void apply_limits(double now) {
    if (!limits_on_) return;
    const UtilisationReader read = [&](WorkloadId id, double window) -> std::optional<double> {
      return scenario_.workloads[tracked_[static_cast<size_t>(id)].spec].utilisation.mean_pct(current_run(id, now),
                                                                                              window);
    };
    for (const LimitOutcome& outcome : limits_.review(workloads_, cluster_, tree_, now, read)) {
      const LimitVerdict& verdict = outcome.verdict;
      if (limit_summary_.examples.size() < kMaxLimitExamples) {
        limit_summary_.examples.push_back(fmt::format("{} {}: {}", short_time(now - start_),
                                                      workloads_[outcome.workload].spec.name, outcome.message));
      }
      if (verdict.step == LimitStep::kNotice) ++limit_summary_.notices;
      if (verdict.step == LimitStep::kWithdraw) ++limit_summary_.withdrawn;
      if (verdict.step != LimitStep::kExpire) continue;
      if (verdict.rule == LimitRule::kIdle) {
        ++limit_summary_.by_idle_limit;
        if (busy_later(outcome.workload, now)) ++limit_summary_.false_positives;
      }
      switch (verdict.action) {
        case ExpiryAction::kStop:
          ++limit_summary_.stopped;
          stop(outcome.workload, now);
          break;
        case ExpiryAction::kRequeue:
          ++limit_summary_.requeued;
          requeue(outcome.workload, now);
          break;
        case ExpiryAction::kPreemptible:
          ++limit_summary_.made_preemptible;
          workloads_[outcome.workload].spec.preemptible = true;
          break;
      }
    }
  }

  void stop(WorkloadId id, double now) {
    Tracked& tracked = tracked_[static_cast<size_t>(id)];
    const QueueIndex queue = workloads_[id].queue;
    close_run(id, now);
    allocated_[queue] = std::max(0.0, allocated_[queue] - held_gpus(id));
    workloads_.finish(id, cluster_);
    tracked.running = false;
    ++tracked.generation;
    tracked.stopped = now;
    mark_event(queue, now);
  }

  void requeue(WorkloadId id, double now) {
    Tracked& tracked = tracked_[static_cast<size_t>(id)];
    Workload& workload = workloads_[id];
    close_run(id, now);
    allocated_[workload.queue] = std::max(0.0, allocated_[workload.queue] - held_gpus(id));
    for (PodId pod : workload.pods) {
      if (cluster_.binding(pod)) cluster_.unbind(pod);
    }
    workload.held_until = limits_.held_until(workload.spec.name).value_or(now);
    tracked.progress += now - tracked.run_started;
    tracked.running = false;
    ++tracked.generation;
    mark_event(workload.queue, now);
  }

  static std::string short_time(double seconds) {
    const auto whole = static_cast<int64_t>(std::llround(seconds));
    return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
  }

  // ---------------------------------------------------------------------------------------------
  // Time averages and samples

  // Every queue's allocation: leaves as held, inner queues the sum of their leaves.
  template <typename T>
  std::vector<T> rolled_up(const std::vector<T>& leaves) const {
    std::vector<T> totals(tree_.size(), T{});
    for (QueueIndex queue : tree_.leaves()) totals[queue] = leaves[queue];
    const std::vector<QueueIndex>& order = tree_.top_down();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (tree_.parent(*it) != QueueTree::kNoParent) totals[tree_.parent(*it)] += totals[*it];
    }
    return totals;
  }

  // Brings the averages and the sample grid up to `time` with the state as it has been since the
  // last call.
  void advance(double time) {
    if (time <= last_time_) return;
    grid_->record(time, false, [this] { return snapshot(); });
    const double dt = time - last_time_;
    const std::vector<double> allocated = rolled_up(allocated_);
    for (QueueIndex queue = 0; queue < tree_.size(); ++queue) {
      QueueAccount& account = accounts_[queue];
      account.allocated_integral += allocated[queue] * dt;
      account.fair_share_integral += fair_share_[queue] * dt;
      if (fair_share_[queue] > 0) {
        account.gap_integral += std::fabs(allocated[queue] - fair_share_[queue]) * dt;
        account.below_integral += std::max(0.0, fair_share_[queue] - allocated[queue]) * dt;
      }
    }
    gpu_pct_integral_ += gpu_allocated_pct() * dt;
    for (const Reservation& reservation : carried_.reservations)
      reserved_node_seconds_ += static_cast<double>(reservation.nodes.size()) * dt;
    last_time_ = time;
  }

  double gpu_allocated_pct() const {
    const ClusterTotals& totals = cluster_.totals();
    return totals.gpu_capacity_milli > 0 ? 100.0 * static_cast<double>(totals.gpu_allocated_milli) /
                                               static_cast<double>(totals.gpu_capacity_milli)
                                         : 0.0;
  }

  Sample snapshot() const {
    const ClusterTotals& totals = cluster_.totals();
    auto pct = [](int64_t used, int64_t capacity) {
      return capacity > 0 ? 100.0 * static_cast<double>(used) / static_cast<double>(capacity) : 0.0;
    };
    int64_t running_pods = 0;
    for (NodeIndex node = 0; node < cluster_.node_count(); ++node) running_pods += cluster_.node_state(node).pod_count;
    Sample sample;
    sample.cluster = TimelinePoint{0,
                                   gpu_allocated_pct(),
                                   pct(totals.allocated.cpu_milli, totals.capacity.cpu_milli),
                                   pct(totals.allocated.memory_bytes, totals.capacity.memory_bytes),
                                   running_pods,
                                   pending_pods_};
    const std::vector<double> allocated = rolled_up(allocated_);
    const std::vector<int64_t> pending = rolled_up(pending_);
    sample.queues.reserve(tree_.size());
    for (QueueIndex queue = 0; queue < tree_.size(); ++queue) {
      sample.queues.push_back(
          {0, allocated[queue], fair_share_[queue], deserved_[queue], demand_[queue], pending[queue]});
    }
    return sample;
  }

  // ---------------------------------------------------------------------------------------------
  // One cycle

  // Whether the cycle changed anything (a start, an eviction, an extra placed).
  Result<bool> run_one_cycle(int64_t cycle, double now, std::string_view policy_name) {
    const std::vector<double> allocated_before = rolled_up(allocated_);
    const std::vector<PendingGang> pending_before = pending_gangs();

    const auto wall_start = Clock::now();
    CycleInputs inputs{cluster_, placer_, workloads_, tree_, meter_, now};
    const size_t reservations_before = carried_.reservations.size();
    inputs.carried = &carried_;
    auto result = run_cycle(inputs, cycle_options_);
    cycle_wall_seconds_.push_back(std::chrono::duration<double>(Clock::now() - wall_start).count());
    if (!result) return Error{fmt::format("the scheduling cycle at {}s failed: {}", now, result.error().message)};
    ++cycles_run_;

    std::vector<std::string> violations;
    touched_.assign(tracked_.size(), false);
    account_evictions(*result, now, violations);
    for (const Start& start : result->started) {
      ++churn_[static_cast<int>(start.action)].starts;
      touched_[static_cast<size_t>(start.workload)] = true;
    }
    reconcile(now, violations);
    if (accuracy_) {
      const std::vector<double> expected = expected_runtimes();
      auto estimated = accuracy_->estimate_arrivals(
          {cluster_, policy_, workloads_, tree_, meter_, now, &carried_, expected}, cycle_options_);
      if (!estimated) return estimated.error();
    }

    for (QueueIndex queue = 0; queue < tree_.size(); ++queue) {
      fair_share_[queue] =
          queue < result->shares.fair_share.size() ? resource_at(result->shares.fair_share[queue], gpu_) : 0;
      in_quota_[queue] = queue < result->shares.in_quota.size() ? resource_at(result->shares.in_quota[queue], gpu_) : 0;
      demand_[queue] = queue < result->shares.demand.size() ? resource_at(result->shares.demand[queue], gpu_) : 0;
    }
    for (QueueIndex leaf : tree_.leaves()) {
      allocated_[leaf] = leaf < result->allocated_after.size() ? resource_at(result->allocated_after[leaf], gpu_) : 0;
    }
    count_pending();
    track_starvation(cycle, now, allocated_before, pending_before);

    if (options_.check_invariants) {
      check_cycle(*result, violations);
      if (!violations.empty()) {
        return Error{
            fmt::format("invariant violated with {} after the cycle at {}s: {}", policy_name, now, violations.front())};
      }
    }
    last_pending_ = std::move(result->pending);  // the reasons reported at the end
    reservations_made_ += result->reservations_made;
    // A new reservation changes what the next cycle may place where.
    const bool reserved = result->reservations_made > 0 || result->reservations.size() != reservations_before;
    return !result->operations.empty() || reserved;
  }

  void account_evictions(const CycleResult& result, double now, std::vector<std::string>& violations) {
    std::map<GroupKey, GroupTotal> groups;
    for (const Eviction& eviction : result.evictions) {
      Tracked& tracked = tracked_[static_cast<size_t>(eviction.workload)];
      const Workload& workload = workloads_[eviction.workload];
      ActionChurn& churn = churn_[static_cast<int>(eviction.action)];
      ++churn.evictions;
      churn.evicted_gpus += gpus(eviction.gpu_milli);
      GroupTotal& group = groups[{eviction.beneficiary, eviction.action}];
      (eviction.moved ? group.moved_milli : group.gpu_milli) += eviction.gpu_milli;
      ++group.victims;
      if (!workload.spec.preemptible) {
        violations.push_back(fmt::format("non-preemptible workload '{}' was evicted by {}", workload.spec.name,
                                         action_name(eviction.action)));
      }
      for (PodId pod : eviction.pods) {
        if (!cluster_.pod(pod).preemptible && !limits_.made_preemptible(workload.spec.name)) {
          violations.push_back(fmt::format("non-preemptible pod '{}' of workload '{}' was evicted by {}",
                                           cluster_.pod(pod).name, workload.spec.name, action_name(eviction.action)));
        }
      }
      if (!eviction.whole_workload) {
        ++churn.extras;  // extras carry no progress of their own
        continue;
      }
      ++churn.whole_workloads;
      if (eviction.moved) ++churn.moved;
      close_run(eviction.workload, now, gpus(eviction.gpu_milli));
      const double run = tracked.progress + (tracked.running ? (now - tracked.run_started) / tracked.slowdown : 0);
      const double kept = checkpointed_progress(run, scenario_.workloads[tracked.spec].checkpoint_interval_seconds);
      const double lost_hours = std::max(0.0, run - kept) * gpus(eviction.gpu_milli) / kSecondsPerHour;
      churn.lost_gpu_hours += lost_hours;
      accounts_[workload.queue].lost_gpu_hours += lost_hours;
      ++accounts_[workload.queue].evictions;
      tracked.progress = kept;
      tracked.running = false;
      ++tracked.generation;
      touched_[static_cast<size_t>(eviction.workload)] = true;  // a move runs again: reconcile restarts it
    }
    for (const auto& [key, total] : groups) {
      ActionChurn& churn = churn_[static_cast<int>(key.action)];
      ++churn.groups;
      ++groups_;
      const double evicted = gpus(total.gpu_milli);
      const double needed = key.beneficiary >= 0 ? tracked_[static_cast<size_t>(key.beneficiary)].gang_gpus : 0;
      if (!(needed > 0)) {
        if (evicted > 0) ++groups_without_gpu_need_;
        continue;
      }
      const double ratio = evicted / needed;
      churn.max_evicted_to_needed = std::max(churn.max_evicted_to_needed, ratio);
      churn.max_moved_to_needed = std::max(churn.max_moved_to_needed, gpus(total.moved_milli) / needed);
      if (ratio > worst_group_.ratio) {
        const Workload& beneficiary = workloads_[key.beneficiary];
        worst_group_ = {now,
                        std::string(action_name(key.action)),
                        beneficiary.spec.name,
                        tree_.spec(beneficiary.queue).name,
                        total.victims,
                        evicted,
                        needed,
                        ratio};
      }
    }
  }

  // The engine's state is the truth: a workload runs when its whole gang is bound. Workloads the
  // cycle started, and those it evicted that run again (moved by consolidation), (re)start now.
  // One that started or stopped with no record of it breaks the cycle's contract; it is followed
  // anyway, and reported when invariants are checked.
  void reconcile(double now, std::vector<std::string>& violations) {
    for (WorkloadId id : workloads_.active()) {
      Tracked& tracked = tracked_[static_cast<size_t>(id)];
      const bool running = workloads_.is_running(id, cluster_);
      if (running == tracked.running) continue;
      if (!touched_[static_cast<size_t>(id)] || !running) {
        violations.push_back(fmt::format("workload '{}' {} without a start or eviction record",
                                         workloads_[id].spec.name, running ? "runs" : "stopped"));
      }
      if (running) {
        start_run(id, now);
      } else {
        close_run(id, now);
        tracked.progress += (now - tracked.run_started) / tracked.slowdown;
        tracked.running = false;
        ++tracked.generation;
      }
    }
  }

  TopologySummary topology_summary() const {
    TopologySummary summary;
    if (cost_topology_ < 0) return summary;
    const TopologyDomains& domains = cluster_.topology();
    for (int level = 0; level < domains.level_count(cost_topology_); ++level)
      summary.levels.push_back(domains.label(cost_topology_, level));
    summary.within.assign(summary.levels.size(), 0);
    std::vector<double> required_waits;
    for (const Tracked& tracked : tracked_) {
      if (tracked.first_start >= 0 && tracked.gang_nodes > 1) {
        ++summary.multi_node_gangs;
        for (int level = 0; level <= tracked.common_level; ++level) ++summary.within[static_cast<size_t>(level)];
      }
      if (scenario_.workloads[tracked.spec].topology_constraint().required_level.empty()) continue;
      ++summary.required_gangs;
      if (tracked.first_start < 0) continue;
      ++summary.required_started;
      required_waits.push_back(tracked.first_start - tracked.arrival);
    }
    summary.required_wait_seconds = quantiles(std::move(required_waits));
    return summary;
  }

  void count_pending() {
    std::fill(pending_.begin(), pending_.end(), 0);
    pending_pods_ = 0;
    for (WorkloadId id : workloads_.active()) {
      const Tracked& tracked = tracked_[static_cast<size_t>(id)];
      if (tracked.running) continue;
      const Workload& workload = workloads_[id];
      ++pending_[workload.queue];
      pending_pods_ += static_cast<int64_t>(workload.pods.size());
    }
  }

  // The pending workloads that ask for GPUs: their leaf queue and the GPUs their gang needs.
  std::vector<PendingGang> pending_gangs() const {
    std::vector<PendingGang> gangs;
    for (WorkloadId id : workloads_.active()) {
      const Tracked& tracked = tracked_[static_cast<size_t>(id)];
      if (!tracked.running && tracked.gang_gpus > 0) gangs.push_back({workloads_[id].queue, tracked.gang_gpus});
    }
    return gangs;
  }

  // Per queue: whether it is owed GPUs — some pending gang of its subtree would fit within the
  // deserved quota (in_quota: min(deserved, demand)) of every queue from the gang's leaf up to it.
  // A queue a few GPUs short of its quota whose pending gangs are all larger than the gap is not
  // starved: no scheduler could give it the quota without going over.
  std::vector<bool> owed_room(const std::vector<PendingGang>& gangs, const std::vector<double>& allocated) const {
    std::vector<bool> owed(tree_.size(), false);
    for (const PendingGang& gang : gangs) {
      for (QueueIndex queue = gang.leaf; queue != QueueTree::kNoParent; queue = tree_.parent(queue)) {
        if (allocated[queue] + gang.gpus > in_quota_[queue] + kGpuSlack) break;
        owed[queue] = true;
      }
    }
    return owed;
  }

  // A queue is starved while it is owed GPUs (owed_room). Seen before the cycle, an episode
  // starts; after the cycle that leaves it owed nothing, it ends.
  void track_starvation(int64_t cycle, double now, const std::vector<double>& allocated_before,
                        const std::vector<PendingGang>& pending_before) {
    const std::vector<bool> starved_before = owed_room(pending_before, allocated_before);
    const std::vector<bool> starved_after = owed_room(pending_gangs(), rolled_up(allocated_));
    for (QueueIndex queue = 0; queue < tree_.size(); ++queue) {
      QueueAccount& account = accounts_[queue];
      Episode& episode = account.episode;
      if (!episode.open && starved_before[queue]) {
        episode = {true, std::min(first_event_[queue], now), cycle};
        ++account.episodes;
      }
      if (episode.open && episode.start_cycle <= cycle && !starved_after[queue]) {
        account.resolved_seconds.push_back(now - episode.start);
        account.resolved_cycles.push_back(static_cast<double>(cycle - episode.start_cycle + 1));
        episode.open = false;
      } else if (!episode.open && starved_after[queue]) {  // starved by this cycle's own decisions
        episode = {true, now, cycle + 1};
        ++account.episodes;
      }
      first_event_[queue] = kInfinity;
    }
  }

  void check_cycle(const CycleResult& result, std::vector<std::string>& violations) const {
    for (std::string& violation : check_invariants(cluster_)) violations.push_back(std::move(violation));
    for (WorkloadId id : workloads_.active()) {
      const Workload& workload = workloads_[id];
      for (std::string& violation : check_gang(cluster_, workload.pods, workload.min_member())) {
        violations.push_back(fmt::format("workload '{}': {}", workload.spec.name, violation));
      }
      // Constraints hold only where the cycle honours them.
      if (!cycle_options_.topology.enabled) continue;
      for (std::string& violation : check_topology(cluster_, workload.spec, workload.pods)) {
        violations.push_back(std::move(violation));
      }
    }
    // Every queue's allocation, counted from the bound pods, against the cycle's figures and limits.
    std::vector<ResourceVector> held(tree_.size(), ResourceVector(tree_.resource_count(), 0));
    for (WorkloadId id : workloads_.active()) {
      const Workload& workload = workloads_[id];
      for (PodId pod : workload.pods) {
        if (const auto& binding = cluster_.binding(pod))
          meter_.add_bound(cluster_.pod(pod), *binding, held[workload.queue]);
      }
    }
    const std::vector<QueueIndex>& order = tree_.top_down();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const QueueIndex parent = tree_.parent(*it);
      if (parent == QueueTree::kNoParent) continue;
      for (ResourceId r = 0; r < tree_.resource_count(); ++r) held[parent][r] += held[*it][r];
    }
    for (QueueIndex queue = 0; queue < tree_.size(); ++queue) {
      const ResourceVector reported =
          queue < result.allocated_after.size() ? result.allocated_after[queue] : ResourceVector{};
      for (ResourceId r = 0; r < tree_.resource_count(); ++r) {
        const double counted = held[queue][r];
        const double tolerance = kGpuSlack * std::max(1.0, std::fabs(counted));
        if (std::fabs(resource_at(reported, r) - counted) > tolerance) {
          violations.push_back(fmt::format("queue '{}' holds {} {} by its bound pods, but the cycle reports {}",
                                           tree_.spec(queue).name, counted, tree_.resources().name(r),
                                           resource_at(reported, r)));
        }
        const std::optional<double>& limit = tree_.quota(queue, r).limit;
        if (limit && counted > *limit + kGpuSlack * std::max(1.0, std::fabs(*limit))) {
          violations.push_back(fmt::format("queue '{}' holds {} {}, above its limit {}", tree_.spec(queue).name,
                                           counted, tree_.resources().name(r), *limit));
        }
      }
    }
  }

  // The earliest time something may change after a cycle that changed nothing: an arrival, a
  // completion, or a running workload's minimum runtime expiring while work is pending (from then
  // on it may be a victim). nullopt: nothing ever will.
  std::optional<double> next_wake(double now) {
    double wake = next_arrival_ < arrivals_ ? scenario_.workloads[next_arrival_].arrival_seconds : kInfinity;
    drop_stale_completions();
    if (!completions_.empty()) wake = std::min(wake, completions_.top().time);
    // Work under time or idle limits changes with every cycle's clock (and a requeued workload
    // comes back when its delay ends).
    if (!limits_.empty()) wake = std::min(wake, now + interval_);
    const bool any_pending = std::any_of(pending_.begin(), pending_.end(), [](int64_t count) { return count > 0; });
    if (any_pending) {
      const ReservationOptions& reservations = cycle_options_.reservations;
      for (WorkloadId id : workloads_.active()) {
        if (!tracked_[static_cast<size_t>(id)].running) {
          // A pending workload may reserve nodes once it has waited long enough.
          const double eligible = workloads_[id].submitted_at + reservations.min_wait_seconds;
          if (reservations.enabled && eligible >= now - kTimeSlack)
            wake = std::min(wake, std::max(eligible, now + interval_));
          continue;
        }
        const Workload& workload = workloads_[id];
        for (double protection : {preempt_min_[workload.queue], reclaim_min_[workload.queue]}) {
          const double expiry = workload.started_at + protection;
          // Whether a runtime equal to the minimum already counts is the cycle's business: the
          // cycle at the expiry and the one after it both run.
          if (protection > 0 && expiry >= now - kTimeSlack) wake = std::min(wake, std::max(expiry, now + interval_));
        }
      }
    }
    if (!std::isfinite(wake)) return std::nullopt;
    return wake;
  }

  // ---------------------------------------------------------------------------------------------
  // The result

  Result<TimelinePolicyResult> finish(std::string_view policy_name, double end, std::string end_reason,
                                      Clock::time_point wall_start) {
    advance(end);
    for (WorkloadId id : workloads_.active()) {
      if (tracked_[static_cast<size_t>(id)].running) close_run(id, end);
    }
    grid_->record(end, true, [this] { return snapshot(); });
    const std::vector<Sample> samples = grid_->resample(end, options_.samples);
    const double span = end - start_;

    TimelinePolicyResult result;
    result.policy = std::string(policy_name);
    result.workloads = static_cast<int64_t>(tracked_.size());
    for (const Sample& sample : samples) result.series.push_back(sample.cluster);
    result.mean_gpu_allocated_pct = span > 0 ? gpu_pct_integral_ / span : gpu_allocated_pct();

    CycleReplayResult cycle;
    cycle.cycle_interval_seconds = interval_;
    cycle.end_seconds = end;
    cycle.end_reason = std::move(end_reason);
    cycle.cycles = arrivals_ > 0 ? static_cast<int64_t>(std::floor(span / interval_ + 1e-9)) + 1 : 0;
    cycle.cycles_run = cycles_run_;
    cycle.reservations_made = reservations_made_;
    cycle.reserved_node_hours = reserved_node_seconds_ / 3600;
    cycle.cycle_wall_seconds = quantiles(cycle_wall_seconds_);

    std::vector<double> waits, jcts;
    std::vector<int64_t> arrived(tree_.size(), 0), scheduled(tree_.size(), 0), completed(tree_.size(), 0);
    for (size_t id = 0; id < tracked_.size(); ++id) {
      const Tracked& tracked = tracked_[id];
      const QueueIndex leaf = workloads_[static_cast<WorkloadId>(id)].queue;
      ++arrived[leaf];
      TypeCount& count = result.by_type[pod_type_label(scenario_.workloads[tracked.spec].pods.front())];
      ++count.arrived;
      if (tracked.first_start >= 0) {
        ++result.scheduled;
        ++scheduled[leaf];
        waits.push_back(tracked.first_start - tracked.arrival);
      } else {
        ++result.never_scheduled;
        ++count.failed;
      }
      if (tracked.completed >= 0) {
        ++completed[leaf];
        ++cycle.completed;
        jcts.push_back(tracked.completed - tracked.arrival);
      }
    }
    result.pending_seconds = quantiles(std::move(waits));
    cycle.topology = topology_summary();
    cycle.jct_seconds = quantiles(std::move(jcts));

    for (QueueIndex queue : tree_.depth_first()) {
      cycle.queues.push_back(queue_result(queue, samples, span, end, arrived, scheduled, completed));
    }

    ChurnSummary& churn = cycle.churn;
    for (ActionChurn& action : churn_) {
      action.per_1000_scheduled = result.scheduled > 0 ? 1000.0 * static_cast<double>(action.whole_workloads) /
                                                             static_cast<double>(result.scheduled)
                                                       : 0;
      churn.evictions += action.evictions;
      churn.whole_workloads += action.whole_workloads;
      churn.lost_gpu_hours += action.lost_gpu_hours;
      churn.max_evicted_to_needed = std::max(churn.max_evicted_to_needed, action.max_evicted_to_needed);
      churn.max_moved_to_needed = std::max(churn.max_moved_to_needed, action.max_moved_to_needed);
      churn.by_action.push_back(action);
    }
    churn.per_1000_scheduled = result.scheduled > 0 ? 1000.0 * static_cast<double>(churn.whole_workloads) /
                                                          static_cast<double>(result.scheduled)
                                                    : 0;
    churn.per_hour = span > 0 ? static_cast<double>(churn.whole_workloads) / (span / kSecondsPerHour) : 0;
    churn.groups = groups_;
    churn.groups_without_gpu_need = groups_without_gpu_need_;
    churn.worst_group = worst_group_;

    pending_reasons(cycle, end);
    cycle.limits = limit_summary_;
    cycle.limits.enabled = limits_on_;
    std::vector<double> train_waits;
    for (const Tracked& tracked : tracked_) {
      if (tracked.first_start >= 0 && scenario_.workloads[tracked.spec].kind == WorkloadKind::kTrain)
        train_waits.push_back(tracked.first_start - tracked.arrival);
    }
    cycle.limits.train_wait_seconds = quantiles(std::move(train_waits));
    if (accuracy_) cycle.estimates = accuracy_->summary();
    result.cycle = std::move(cycle);
    result.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
    return result;
  }

  // The leaves of a queue's subtree (itself when it is one).
  std::vector<QueueIndex> leaves_under(QueueIndex queue) const {
    std::vector<QueueIndex> leaves;
    std::vector<QueueIndex> stack = {queue};
    while (!stack.empty()) {
      const QueueIndex q = stack.back();
      stack.pop_back();
      if (tree_.is_leaf(q)) leaves.push_back(q);
      stack.insert(stack.end(), tree_.children(q).begin(), tree_.children(q).end());
    }
    return leaves;
  }

  QueueResult queue_result(QueueIndex queue, const std::vector<Sample>& samples, double span, double end,
                           const std::vector<int64_t>& arrived, const std::vector<int64_t>& scheduled,
                           const std::vector<int64_t>& completed) const {
    const QueueAccount& account = accounts_[queue];
    QueueResult out;
    out.name = tree_.spec(queue).name;
    out.parent = tree_.spec(queue).parent;
    out.depth = tree_.depth(queue);
    out.leaf = tree_.is_leaf(queue);
    out.deserved_gpus = deserved_[queue];
    if (const std::optional<double>& limit = tree_.quota(queue, gpu_).limit) out.limit_gpus = *limit;
    out.series.reserve(samples.size());
    for (const Sample& sample : samples) out.series.push_back(sample.queues[queue]);
    out.mean_allocated_gpus = span > 0 ? account.allocated_integral / span : 0;
    out.mean_fair_share_gpus = span > 0 ? account.fair_share_integral / span : 0;
    out.fairness_gap_pct =
        account.fair_share_integral > 0 ? 100.0 * account.gap_integral / account.fair_share_integral : 0;
    out.gap_below_pct =
        account.fair_share_integral > 0 ? 100.0 * account.below_integral / account.fair_share_integral : 0;
    out.gap_above_pct = std::max(0.0, out.fairness_gap_pct - out.gap_below_pct);

    StarvationSummary& starvation = out.starvation;
    starvation.episodes = account.episodes;
    starvation.resolved = static_cast<int64_t>(account.resolved_seconds.size());
    starvation.median_seconds = median(account.resolved_seconds);
    starvation.median_cycles = median(account.resolved_cycles);
    for (double seconds : account.resolved_seconds) starvation.max_seconds = std::max(starvation.max_seconds, seconds);
    for (double cycles : account.resolved_cycles) starvation.max_cycles = std::max(starvation.max_cycles, cycles);
    if (account.episode.open) starvation.longest_open_seconds = std::max(0.0, end - account.episode.start);

    std::vector<double> waits, jcts;
    for (QueueIndex leaf : leaves_under(queue)) {
      out.workloads += arrived[leaf];
      out.scheduled += scheduled[leaf];
      out.completed += completed[leaf];
      out.evictions += accounts_[leaf].evictions;
      out.lost_gpu_hours += accounts_[leaf].lost_gpu_hours;
      waits.insert(waits.end(), waits_[leaf].begin(), waits_[leaf].end());
      jcts.insert(jcts.end(), jcts_[leaf].begin(), jcts_[leaf].end());
    }
    out.wait_seconds = quantiles(std::move(waits));
    out.jct_seconds = quantiles(std::move(jcts));
    return out;
  }

  void pending_reasons(CycleReplayResult& cycle, double end) const {
    std::unordered_map<WorkloadId, const PendingReason*> reasons;
    for (const PendingWorkload& pending : last_pending_) reasons[pending.workload] = &pending.reason;
    std::vector<WorkloadId> pending;  // longest pending first
    for (WorkloadId id : workloads_.active()) {
      if (!tracked_[static_cast<size_t>(id)].running) pending.push_back(id);
    }
    std::stable_sort(pending.begin(), pending.end(), [this](WorkloadId a, WorkloadId b) {
      return tracked_[static_cast<size_t>(a)].arrival < tracked_[static_cast<size_t>(b)].arrival;
    });
    for (WorkloadId id : pending) {
      const auto found = reasons.find(id);
      const PendingReason* reason = found != reasons.end() ? found->second : nullptr;
      const std::string code = reason ? std::string(pending_code_name(reason->code)) : std::string(kNotYetCycled);
      ++cycle.pending_by_code[code];
      if (cycle.pending_examples.size() >= kMaxPendingExamples) continue;
      const Workload& workload = workloads_[id];
      cycle.pending_examples.push_back({workload.spec.name, tree_.spec(workload.queue).name, code,
                                        reason ? describe(*reason, tree_) : "arrived after the last cycle",
                                        end - tracked_[static_cast<size_t>(id)].arrival});
    }
  }

  const Scenario& scenario_;
  const QueueTree& tree_;
  const std::vector<QueueIndex> leaf_of_;  // per scenario workload: its leaf queue
  const TimelineOptions& options_;
  const double interval_;
  const ResourceId gpu_;
  const CycleOptions& cycle_options_;
  CarriedState carried_;  // reservations and remembered use, handed from cycle to cycle
  LimitLedger limits_;    // time and idle-GPU limits, from cycle to cycle
  bool limits_on_ = false;
  LimitSummary limit_summary_;
  int64_t reservations_made_ = 0;
  double reserved_node_seconds_ = 0;

  ClusterState cluster_;
  // The topology measured (its run-time factors, the summary): the one with factors, else the
  // first declared; -1: none.
  int cost_topology_ = -1;
  Placer placer_;
  PlacementPolicy& policy_;  // the placer's, for the estimates' forward runs
  WorkloadSet workloads_;
  ResourceMeter meter_;
  std::optional<EstimateAccuracy> accuracy_;  // with options.start_estimates
  std::vector<Tracked> tracked_;  // by WorkloadId
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  size_t arrivals_ = 0;  // scenario workloads that arrive within the horizon
  size_t next_arrival_ = 0;
  double start_ = 0;
  double planned_end_ = 0;
  double finished_at_ = 0;
  double last_time_ = 0;
  std::optional<SampleGrid> grid_;

  // Per queue index. allocated_ and pending_ are kept for leaves (rolled_up gives
  // inner queues); the fair-share figures are the last cycle's.
  std::vector<QueueAccount> accounts_;
  std::vector<double> allocated_;
  std::vector<double> fair_share_;
  std::vector<double> in_quota_;
  std::vector<double> demand_;
  std::vector<double> deserved_;
  std::vector<int64_t> pending_;
  std::vector<double> first_event_;  // earliest arrival or completion under the queue since the last cycle
  std::vector<double> preempt_min_;
  std::vector<double> reclaim_min_;
  std::vector<std::vector<double>> waits_;  // leaves: arrival -> first start
  std::vector<std::vector<double>> jcts_;   // leaves: arrival -> completion
  int64_t pending_pods_ = 0;
  double gpu_pct_integral_ = 0;

  std::array<ActionChurn, kActionCount> churn_;
  int64_t groups_ = 0;
  int64_t groups_without_gpu_need_ = 0;
  EvictionGroup worst_group_;
  std::vector<PendingWorkload> last_pending_;  // as the last cycle run gave them
  std::vector<bool> touched_;                  // by WorkloadId: started, or evicted whole, in the current cycle
  int64_t cycles_run_ = 0;
  std::vector<double> cycle_wall_seconds_;
};

}  // namespace

double checkpointed_progress(double run_seconds, double checkpoint_interval_seconds) {
  if (!(checkpoint_interval_seconds > 0) || !(run_seconds > 0)) return 0;
  // A run that reaches a checkpoint to within rounding has saved it.
  const double kept = std::floor(run_seconds / checkpoint_interval_seconds + 1e-9) * checkpoint_interval_seconds;
  return std::min(kept, run_seconds);
}

Result<TimelinePolicyResult> run_cycle_replay(const Scenario& scenario, std::string_view policy_name,
                                              const TimelineOptions& options) {
  if (!(options.cycle_interval_seconds > 0) || !std::isfinite(options.cycle_interval_seconds)) {
    return Error{fmt::format("cycle interval {} is not a positive number of seconds", options.cycle_interval_seconds)};
  }
  auto tree = QueueTree::build(scenario.queues, scenario.resources);
  if (!tree) return tree.error();
  if (!tree->resources().find(kGpuResource)) return Error{"the scenario's resources do not include 'gpu'"};
  std::vector<QueueIndex> leaf_of;
  leaf_of.reserve(scenario.workloads.size());
  for (const WorkloadSpec& workload : scenario.workloads) {
    const std::optional<QueueIndex> queue = tree->find(workload.queue);
    if (!queue || !tree->is_leaf(*queue)) {
      return Error{fmt::format("workload '{}' names queue '{}', which is not a leaf queue of the scenario",
                               workload.name, workload.queue)};
    }
    leaf_of.push_back(*queue);
  }
  auto policy = make_policy(policy_name, WorkloadMix::from_pods(all_pods(scenario)));
  if (!policy) return policy.error();
  CycleReplay replay(scenario, *tree, std::move(leaf_of), **policy, options);
  return replay.run(policy_name);
}

}  // namespace tessera
