#include "adapter/kube_scheduler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include "adapter/annotations.h"
#include "adapter/api_actions.h"
#include "adapter/cycle_decisions.h"
#include "adapter/dashboard_rows.h"
#include "adapter/event_recorder.h"
#include "adapter/failure_log.h"
#include "adapter/gpu_memory_metrics.h"
#include "adapter/limit_enforcer.h"
#include "adapter/object_translation.h"
#include "adapter/owner_conditions.h"
#include "adapter/restart_ledger.h"
#include "adapter/status_reports.h"
#include "adapter/task_pool.h"
#include "adapter/world_snapshot.h"
#include "dashboard/access_review.h"
#include "dashboard/dashboard_publisher.h"
#include "engine/placer.h"
#include "kube/informer.h"
#include "policy/policy_registry.h"
#include "policy/workload_mix.h"
#include "wire/timestamp.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// How often a waiting pod's event and condition are rewritten when only their message changed.
constexpr double kStateRefreshSeconds = 30;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void log_line(const std::string& message) {
  std::fputs(fmt::format("{} {}\n", wire::format_time(unix_now()), message).c_str(), stderr);
}

// Resource versions are opaque to clients, but where both are integers the larger is newer.
bool newer_than(const json& a, const json& b) {
  const std::string ra = a.value("/metadata/resourceVersion"_json_pointer, std::string());
  const std::string rb = b.value("/metadata/resourceVersion"_json_pointer, std::string());
  try {
    return std::stoll(ra) > std::stoll(rb);
  } catch (const std::exception&) {
    return false;
  }
}

std::string action_label(Action action) { return std::string(action_name(action)); }

// The reason of the events and restarts an eviction by this action gives.
std::string eviction_reason(Action action) {
  return action == Action::kReclaim ? "Reclaimed" : (action == Action::kPreempt ? "Preempted" : "Consolidated");
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace

struct KubeScheduler::Impl {
  Impl(kube::ApiClient& api, SchedulerOptions opts)
      : client(api), options(std::move(opts)), api_pool(options.api_workers) {
    auto on_change = [this] {
      {
        std::lock_guard lock(change_mutex);
        dirty = true;
      }
      changed.notify_one();
    };
    auto watch = [&](std::string path, std::string field_selector = "", bool optional_kind = false) {
      kube::InformerOptions informer;
      informer.collection_path = std::move(path);
      informer.field_selector = std::move(field_selector);
      informer.watch_timeout_seconds = options.watch_timeout_seconds;
      informer.optional_kind = optional_kind;
      return std::make_unique<kube::Informer>(client, informer, on_change);
    };
    nodes = watch("/api/v1/nodes");
    tessera_pods = watch("/api/v1/pods", fmt::format("spec.schedulerName={}", kSchedulerName));
    // Every pod on a node uses its capacity, whoever scheduled it.
    bound_pods = watch("/api/v1/pods", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed");
    queues = watch(fmt::format("/apis/{}/queues", kApiVersion));
    pod_groups = watch(fmt::format("/apis/{}/podgroups", kApiVersion));
    // Optional: a cluster without the Topology CRD schedules without topologies.
    topologies = watch(fmt::format("/apis/{}/topologies", kApiVersion), "", true);
    namespaces = watch("/api/v1/namespaces");
    // The controllers whose pods are grouped without a PodGroup (workload_owners.h). A kind the
    // cluster does not serve (its CRD is not installed) or this scheduler may not list is left
    // empty, and looked for again now and then.
    jobs = watch("/apis/batch/v1/jobs", "", true);
    jobsets = watch("/apis/jobset.x-k8s.io/v1alpha2/jobsets", "", true);
    pytorchjobs = watch("/apis/kubeflow.org/v1/pytorchjobs", "", true);
    trainjobs = watch("/apis/trainer.kubeflow.org/v1alpha1/trainjobs", "", true);
    rayclusters = watch("/apis/ray.io/v1/rayclusters", "", true);
  }

  // Each informer with the name its metrics carry.
  std::vector<std::pair<const char*, kube::Informer*>> named_informers() const {
    return {{"nodes", nodes.get()},         {"pods", tessera_pods.get()},       {"bound-pods", bound_pods.get()},
            {"queues", queues.get()},       {"podgroups", pod_groups.get()},    {"namespaces", namespaces.get()},
            {"jobs", jobs.get()},           {"jobsets", jobsets.get()},         {"pytorchjobs", pytorchjobs.get()},
            {"trainjobs", trainjobs.get()}, {"rayclusters", rayclusters.get()}, {"topologies", topologies.get()}};
  }
  std::vector<kube::Informer*> informers() const {
    std::vector<kube::Informer*> list;
    for (const auto& [name, informer] : named_informers()) list.push_back(informer);
    return list;
  }
  std::vector<kube::Informer*> owner_informers() const {
    return {jobs.get(), jobsets.get(), pytorchjobs.get(), trainjobs.get(), rayclusters.get()};
  }
  bool synced() const {
    for (const kube::Informer* informer : informers()) {
      if (!informer->synced()) return false;
    }
    return true;
  }
  // Per informer, why its last request failed (empty where none did).
  std::vector<std::string> sync_errors() const {
    std::vector<std::string> errors;
    for (const kube::Informer* informer : informers()) {
      errors.push_back(informer->synced() ? "" : informer->last_error());
    }
    return errors;
  }

  void start_http() {
    if (options.listen.empty()) return;
    const size_t colon = options.listen.rfind(':');
    const std::string host = colon == std::string::npos ? "0.0.0.0" : options.listen.substr(0, colon);
    const int port = std::stoi(colon == std::string::npos ? options.listen : options.listen.substr(colon + 1));
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
      refresh_cache_metrics();
      response.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    http.Get("/healthz", [this](const httplib::Request&, httplib::Response& response) {
      // Alive unless the cycle thread has been stuck in one cycle for a long time.
      const double busy = cycle_started_at.load() > 0 ? unix_now() - cycle_started_at.load() : 0;
      const bool healthy = busy < 120;
      response.status = healthy ? 200 : 500;
      response.set_content(healthy ? "ok\n" : fmt::format("a cycle has run for {:.0f} s\n", busy), "text/plain");
    });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& response) {
      const bool ready = synced();
      response.status = ready ? 200 : 503;
      std::string body = ready ? "ok\n" : "informer caches are not synced\n";
      for (const std::string& error : ready ? std::vector<std::string>() : sync_errors()) {
        if (!error.empty()) body += error + "\n";
      }
      response.set_content(body, "text/plain");
    });
    if (options.dashboard) {
      if (options.dashboard_auth == dashboard::DashboardAuth::kKubernetes)
        access_reviewer = std::make_unique<dashboard::AccessReviewer>(client);
      dashboard::add_dashboard_routes(http, {[this] { return dashboard_state.current(); }, options.dashboard_auth,
                                             access_reviewer.get(), unix_now});
    }
    bound_port = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
    if (bound_port < 0) {
      log_line(fmt::format("cannot listen on {} for /metrics and health checks", options.listen));
      return;
    }
    http_thread = std::thread([this] { http.listen_after_bind(); });
  }

  void refresh_cache_metrics() {
    metrics.set_gauge("tessera_cache_synced", synced() ? 1 : 0);
    metrics.set_gauge("tessera_leader", leader && leader->is_leader() ? 1 : (options.leader_elect ? 0 : 1));
    std::vector<std::pair<std::map<std::string, std::string>, double>> relists;
    for (const auto& [name, informer] : named_informers()) {
      relists.push_back({{{"resource", name}}, static_cast<double>(informer->stats().relists_on_gone)});
    }
    metrics.set_gauge_family("tessera_informer_relists_total", std::move(relists));
    const EventStats written = events.stats();
    metrics.set_gauge_family("tessera_events_written_total",
                             {{{{"write", "create"}}, static_cast<double>(written.created)},
                              {{{"write", "update"}}, static_cast<double>(written.updated)},
                              {{{"write", "failed"}}, static_cast<double>(written.failed)}});
    metrics.set_gauge("tessera_api_connection_retries_total", static_cast<double>(client.connection_retries()));
  }

  ObservedObjects observe() const {
    ObservedObjects observed;
    observed.nodes = nodes->snapshot();
    observed.pods = bound_pods->snapshot();
    for (auto& [key, pod] : tessera_pods->snapshot()) {
      auto [it, inserted] = observed.pods.try_emplace(key, pod);
      if (!inserted && newer_than(*pod, *it->second)) it->second = pod;
    }
    observed.queues = queues->snapshot();
    observed.pod_groups = pod_groups->snapshot();
    observed.topologies = topologies->snapshot();
    observed.namespaces = namespaces->snapshot();
    observed.owners = {jobs->snapshot(), jobsets->snapshot(), pytorchjobs->snapshot(), trainjobs->snapshot(),
                       rayclusters->snapshot()};
    return observed;
  }

  // Drops what the caches now show, and binds the workloads whose victims are gone.
  void settle_memory(const ObservedObjects& observed, double now) {
    std::erase_if(memory.assumed, [&](const auto& entry) {
      auto pod = observed.pods.find(entry.first);
      if (pod == observed.pods.end()) return now - entry.second.bound_at > options.assumed_binding_timeout_seconds;
      return !pod->second->value("/spec/nodeName"_json_pointer, std::string()).empty();
    });
    std::vector<std::function<void()>> tasks;
    std::mutex results_mutex;
    for (auto it = memory.plans.begin(); it != memory.plans.end();) {
      RoomPlan& plan = it->second;
      bool victims_left = false;
      for (const std::string& victim : plan.victims) victims_left = victims_left || observed.pods.contains(victim);
      if (victims_left && now - plan.created_at < options.room_plan_timeout_seconds) {
        ++it;
        continue;
      }
      if (!victims_left) {
        for (const auto& [pod_key, placement] : plan.bindings) {
          auto pod = observed.pods.find(pod_key);
          if (pod == observed.pods.end()) continue;
          const auto [ns, name] = split_key(pod_key);
          PodBindingDecision binding{pod_key, ns, name, placement, false, {}};
          auto read = pod_from_object(*pod->second, GpuModelCatalog());
          if (read) {
            binding.fractional = read->spec.gpu.is_fractional();
            binding.gpu_memory = gpu_memory_terms(*read);
          }
          tasks.push_back([this, binding, now, &results_mutex,
                           uid = pod->second->value("/metadata/uid"_json_pointer, std::string())] {
            const CallResult result = bind_pod(client, binding);
            std::lock_guard lock(results_mutex);
            record_binding(binding, uid, result, now);
          });
        }
      } else {
        log_line(fmt::format("room for {} was not freed within {:.0f} s; it waits again", it->first,
                             options.room_plan_timeout_seconds));
      }
      it = memory.plans.erase(it);
    }
    api_pool.run_all(std::move(tasks));
  }

  // After a bind call (under the caller's lock when concurrent).
  void record_binding(const PodBindingDecision& binding, const std::string& uid, const CallResult& result, double now) {
    if (result.outcome == CallOutcome::kDone) {
      memory.assumed[binding.pod_key] = {binding.placement, now};
      ++cycle_timing.pods_bound;
      metrics.add_counter("tessera_pods_scheduled_total", {});
      std::string where = binding.placement.node;
      if (!binding.placement.devices.empty()) {
        where += fmt::format(" (GPU {})", fmt::join(binding.placement.devices, ","));
      }
      emit({binding.namespace_name, "Pod", "v1", binding.name, uid, "Normal", "Scheduled",
            fmt::format("Successfully assigned {} to {}", binding.pod_key, where)},
           now);
    } else {
      metrics.add_counter("tessera_bind_errors_total", {});
      log_line(fmt::format("binding {} to {} failed: {}", binding.pod_key, binding.placement.node, result.message));
    }
  }

  void emit(EventRecord event, double now) {
    if (options.events) events.occurred(std::move(event), now);
  }

  // Each queue left out or accepted with a warning: a log line and a Warning event on the Queue
  // when the problem is new (its status says it too, in write_status).
  void report_queue_problems(const std::vector<QueueProblem>& problems, const ObservedObjects& observed, double now) {
    std::set<std::string> current;
    for (const QueueProblem& problem : problems) {
      const std::string line =
          fmt::format("{}{}", problem.excluded ? "queue left out: " : "queue warning: ", problem.message);
      current.insert(line);
      if (!reported_queue_problems.contains(line)) log_line(line);
      auto object = observed.queues.find(problem.queue);
      if (options.events && object != observed.queues.end()) {
        events.state({"", "Queue", std::string(kApiVersion), problem.queue,
                      object->second->value("/metadata/uid"_json_pointer, std::string()), "Warning", problem.reason,
                      problem.message},
                     now);
      }
    }
    reported_queue_problems = std::move(current);
  }

  std::string uid_of(const ObservedObjects& observed, const std::string& pod_key) const {
    auto it = observed.pods.find(pod_key);
    return it == observed.pods.end() ? "" : it->second->value("/metadata/uid"_json_pointer, std::string());
  }

  // The remembered reservations in this snapshot's ids; those of workloads or nodes it no longer
  // has are left out (the cycle drops any whose workload is not pending). Every cycle runs this,
  // so the snapshot's names are only looked up in the few the memory holds.
  std::vector<Reservation> reservations_in(const Snapshot& snapshot) const {
    if (memory.reservations.empty()) return {};
    std::map<std::string_view, WorkloadId> workload_ids;
    std::map<std::string_view, NodeIndex> node_indices;
    for (const auto& [key, kept] : memory.reservations) {
      workload_ids.emplace(key, -1);
      for (const std::string& name : kept.nodes) node_indices.emplace(name, -1);
    }
    for (size_t id = 0; id < snapshot.workload_keys.size(); ++id) {
      if (auto it = workload_ids.find(snapshot.workload_keys[id]); it != workload_ids.end())
        it->second = static_cast<WorkloadId>(id);
    }
    for (size_t node = 0; node < snapshot.node_names.size(); ++node) {
      if (auto it = node_indices.find(snapshot.node_names[node]); it != node_indices.end())
        it->second = static_cast<NodeIndex>(node);
    }
    std::vector<Reservation> reservations;
    for (const auto& [key, kept] : memory.reservations) {
      const WorkloadId workload = workload_ids.at(key);
      if (workload < 0) continue;
      Reservation reservation{workload, {}, kept.since, kNeverDue};
      for (const std::string& name : kept.nodes) {
        if (const NodeIndex node = node_indices.at(name); node >= 0) reservation.nodes.push_back(node);
      }
      if (reservation.nodes.size() == kept.nodes.size()) reservations.push_back(std::move(reservation));
    }
    return reservations;
  }

  void keep_reservations(const Snapshot& snapshot, const std::vector<Reservation>& reservations) {
    memory.reservations.clear();
    for (const Reservation& reservation : reservations) {
      KeptReservation& kept = memory.reservations[snapshot.workload_keys[static_cast<size_t>(reservation.workload)]];
      kept.since = reservation.since;
      for (NodeIndex node : reservation.nodes) kept.nodes.push_back(snapshot.node_names[static_cast<size_t>(node)]);
    }
  }

  // What the last cycle left, in this snapshot's ids. Queues and resources are matched by name;
  // a queue or resource new since then starts with no remembered use. The first cycle with
  // time-based fairness on (after a start or a restart) rebuilds the remembered use from the
  // work that runs.
  CarriedState carried_in(const Snapshot& snapshot, double now) const {
    CarriedState carried;
    carried.reservations = reservations_in(snapshot);
    if (options.cycle.fair_share.usage_penalty <= 0) return carried;
    const QueueTree& tree = *snapshot.tree;
    if (!memory.usage_known) {
      carried.recent_usage = usage_of_running_work(snapshot.workloads, *snapshot.cluster, tree, *snapshot.meter, now,
                                                   options.cycle.fair_share.usage_half_life_seconds);
      carried.usage_at = now;
      return carried;
    }
    auto in_ids = [&tree](const SchedulerMemory::QueueAmounts& kept) {
      std::vector<ResourceVector> amounts(tree.size(), ResourceVector(tree.resource_count(), 0.0));
      for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
        auto of_queue = kept.find(tree.spec(queue).name);
        if (of_queue == kept.end()) continue;
        for (ResourceId resource = 0; resource < tree.resource_count(); ++resource) {
          auto amount = of_queue->second.find(tree.resources().name(resource));
          if (amount != of_queue->second.end()) amounts[queue][resource] = amount->second;
        }
      }
      return amounts;
    };
    carried.recent_usage = in_ids(memory.recent_usage);
    carried.held = in_ids(memory.held);
    carried.usage_at = memory.usage_at;
    return carried;
  }

  void keep_carried(const Snapshot& snapshot, const CarriedState& carried) {
    keep_reservations(snapshot, carried.reservations);
    if (options.cycle.fair_share.usage_penalty <= 0) return;
    const QueueTree& tree = *snapshot.tree;
    auto by_name = [&tree](const std::vector<ResourceVector>& amounts) {
      SchedulerMemory::QueueAmounts kept;
      for (QueueIndex queue = 0; queue < tree.size() && queue < amounts.size(); ++queue) {
        auto& of_queue = kept[tree.spec(queue).name];
        for (ResourceId resource = 0; resource < tree.resource_count(); ++resource) {
          of_queue[tree.resources().name(resource)] = resource_at(amounts[queue], resource);
        }
      }
      return kept;
    };
    memory.recent_usage = by_name(carried.recent_usage);
    memory.held = by_name(carried.held);
    memory.usage_at = carried.usage_at;
    memory.usage_known = true;
  }

  void run_cycle_once() {
    const double now = unix_now();
    cycle_started_at = now;
    cycle_timing = {};
    const auto cycle_start = Clock::now();
    const ObservedObjects observed = observe();
    settle_memory(observed, now);
    auto snapshot = build_snapshot(observed, memory, now, options.gpu_memory_overcommit);
    if (!snapshot) {
      log_line(fmt::format("cycle skipped: {}", snapshot.error().message));
      cycle_started_at = 0;
      return;
    }
    report_queue_problems(snapshot->queue_problems, observed, now);
    carry_out_limits(limits.review(*snapshot, now, metrics, log_line), observed, now);
    for (const std::string& problem : snapshot->topology_problems) {
      if (reported_topology_problems.insert(problem).second) log_line(problem + " (left out)");
    }
    cycle_timing.snapshot_seconds = seconds_since(cycle_start);

    const ClusterState& cluster = *snapshot->cluster;
    std::vector<std::optional<Binding>> before;
    std::vector<PodSpec> specs;
    before.reserve(static_cast<size_t>(cluster.pod_count()));
    for (PodId pod = 0; pod < cluster.pod_count(); ++pod) {
      before.push_back(cluster.binding(pod));
      specs.push_back(cluster.pod(pod));
    }
    const WorkloadMix mix = WorkloadMix::from_pods(specs);
    auto policy = make_policy(options.policy, mix);
    if (!policy) {
      log_line(fmt::format("cycle skipped: {}", policy.error().message));
      cycle_started_at = 0;
      return;
    }
    Placer placer(**policy);
    const auto engine_start = Clock::now();
    CarriedState carried = carried_in(*snapshot, now);
    auto result =
        run_cycle({*snapshot->cluster, placer, snapshot->workloads, *snapshot->tree, *snapshot->meter, now, &carried},
                  options.cycle);
    cycle_timing.engine_seconds = seconds_since(engine_start);
    if (!result) {
      log_line(fmt::format("cycle failed: {}", result.error().message));
      cycle_started_at = 0;
      return;
    }
    keep_carried(*snapshot, carried);
    Decisions decisions = decide(*snapshot, before, *result);
    const auto bind_start = Clock::now();
    const std::set<std::string> evicted = carry_out(decisions, observed, now);
    track_restarts(*snapshot, decisions, evicted, observed, now);
    cycle_timing.bind_seconds = seconds_since(bind_start);
    // After the bindings, which need not wait for them: only the PodGroup status carries estimates.
    if (options.start_estimates) estimate_starts_for(decisions, *snapshot, **policy, carried, now);
    cycle_timing.waiting = static_cast<int>(decisions.waiting.size());
    write_pod_groups(*snapshot, observed, now);
    write_status(*snapshot, *result, decisions, observed, now);
    report_waiting(decisions, observed, now);
    report_owner_conditions(*snapshot, decisions, observed, now);
    if (options.dashboard && !options.listen.empty())
      publish_dashboard(*snapshot, *result, decisions, evicted, mix, now);

    std::map<std::string, double> action_seconds{{"fair_share", result->fair_share_seconds}};
    for (int action = 0; action < kActionCount; ++action) {
      action_seconds[action_label(static_cast<Action>(action))] = result->actions[action].seconds;
    }
    metrics.observe_cycle(seconds_since(cycle_start), action_seconds);
    metrics.add_counter("tessera_cycles_total", {});
    record_queue_metrics(*snapshot, *result);
    std::map<std::string, double> pending_by_reason;
    for (const WaitingWorkload& waiting : decisions.waiting) pending_by_reason[waiting.reason] += 1;
    std::vector<std::pair<std::map<std::string, std::string>, double>> pending;
    for (const auto& [reason, count] : pending_by_reason) pending.push_back({{{"reason", reason}}, count});
    metrics.set_gauge_family("tessera_pending_workloads", std::move(pending));
    double reserved_nodes = 0;
    for (const Reservation& reservation : result->reservations)
      reserved_nodes += static_cast<double>(reservation.nodes.size());
    metrics.set_gauge("tessera_reserved_nodes", reserved_nodes);
    metrics.set_gauge_family("tessera_gpu_memory_bytes", gpu_memory_samples(gpu_memory_by_pool(*snapshot->cluster)));
    metrics.set_gauge("tessera_gpu_memory_limit_pending_workloads", gpu_memory_limit_pending(*result));
    {
      std::lock_guard lock(totals_mutex);
      totals.snapshot_seconds += cycle_timing.snapshot_seconds;
      totals.engine_seconds += cycle_timing.engine_seconds;
      totals.bind_seconds += cycle_timing.bind_seconds;
      totals.pods_bound += cycle_timing.pods_bound;
      totals.evictions += cycle_timing.evictions;
      totals.waiting = cycle_timing.waiting;
      ++cycle_count;
    }
    if (cycle_timing.pods_bound > 0 || cycle_timing.evictions > 0) {
      log_line(fmt::format(
          "cycle: {} pods bound, {} evicted, {} workloads waiting; snapshot {:.1f} ms, engine {:.1f} ms, "
          "API {:.1f} ms",
          cycle_timing.pods_bound, cycle_timing.evictions, cycle_timing.waiting, cycle_timing.snapshot_seconds * 1e3,
          cycle_timing.engine_seconds * 1e3, cycle_timing.bind_seconds * 1e3));
    }
    cycle_started_at = 0;
  }

  // The dashboard's picture (adapter/dashboard_rows.h) at most every kDashboardRefreshSeconds: at
  // 10,000 nodes it costs tens of milliseconds (docs/dashboard.md), and cycles follow each other
  // every 20 ms while the cluster changes. Evictions are kept from every cycle.
  void publish_dashboard(const Snapshot& snapshot, const CycleResult& result, const Decisions& decisions,
                         const std::set<std::string>& evicted, const WorkloadMix& mix, double now) {
    if (now - dashboard_published_at < kDashboardRefreshSeconds) {
      dashboard_state.add_evictions(dashboard_evictions(snapshot, result, evicted, now));
      return;
    }
    dashboard_state.publish(dashboard_rows(snapshot, result, decisions, evicted, mix, now));
    dashboard_published_at = now;
  }

  // Runs the cycle forward from the snapshot it just left (scheduler/start_estimates.h) and
  // gives each waiting workload its estimate. Running work is expected to end by its time limit
  // (every pod's activeDeadlineSeconds) or its max-runtime annotation.
  void estimate_starts_for(Decisions& decisions, const Snapshot& snapshot, PlacementPolicy& policy,
                           const CarriedState& carried, double now) {
    std::vector<double> expected;
    expected.reserve(snapshot.workloads.size());
    for (WorkloadId id = 0; id < static_cast<WorkloadId>(snapshot.workloads.size()); ++id) {
      const WorkloadSpec& spec = snapshot.workloads[id].spec;
      expected.push_back(expected_runtime_of(spec, spec.max_runtime_seconds.value_or(-1)));
    }
    auto estimates = estimate_starts({*snapshot.cluster, policy, snapshot.workloads, *snapshot.tree, *snapshot.meter,
                                      now, &carried, expected},
                                     options.cycle, options.estimates);
    if (!estimates) {
      log_line(fmt::format("start estimates skipped: {}", estimates.error().message));
      return;
    }
    attach_estimates(decisions, snapshot, *estimates);
    metrics.set_gauge("tessera_estimate_seconds", estimates->seconds);
    metrics.set_gauge("tessera_estimated_workloads", static_cast<double>(estimates->estimates.size()));
    metrics.set_gauge("tessera_unestimated_workloads", static_cast<double>(estimates->unreached.size()));
  }

  // The limits step's verdicts (limit_enforcer.h): an event on the PodGroup, or on each pod of a
  // workload without one; the pods of stopped workloads deleted, those of requeued ones evicted
  // (both end within their termination grace, so work can save its state).
  void carry_out_limits(const LimitActions& actions, const ObservedObjects& observed, double now) {
    for (const LimitNotice& notice : actions.notices) {
      const auto group = observed.pod_groups.find(notice.pod_group);
      if (group != observed.pod_groups.end()) {
        const auto [ns, name] = split_key(notice.pod_group);
        emit({ns, "PodGroup", std::string(kApiVersion), name,
              group->second->value("/metadata/uid"_json_pointer, std::string()), notice.type, notice.reason,
              notice.message},
             now);
        continue;
      }
      for (const std::string& pod : notice.pod_keys) {
        const auto [ns, name] = split_key(pod);
        emit({ns, "Pod", "v1", name, uid_of(observed, pod), notice.type, notice.reason, notice.message}, now);
      }
    }
    std::vector<std::function<void()>> tasks;
    for (const auto& [pods, evict] : {std::pair{&actions.delete_pods, false}, std::pair{&actions.evict_pods, true}}) {
      for (const std::string& pod : *pods) {
        tasks.push_back([this, pod, evict = evict] {
          const auto [ns, name] = split_key(pod);
          const CallResult result = evict
                                        ? evict_pod(client, VictimDecision{"", pod, ns, name, Action::kReclaim, false})
                                        : delete_pod(client, ns, name);
          if (result.outcome != CallOutcome::kDone && result.outcome != CallOutcome::kGone) {
            metrics.add_counter("tessera_api_errors_total", {{"operation", evict ? "limit-evict" : "limit-delete"}});
            log_line(
                fmt::format("{} {} for its limit failed: {}", evict ? "evicting" : "deleting", pod, result.message));
          }
        });
      }
    }
    api_pool.run_all(std::move(tasks));
  }

  // Returns the keys of the workloads some of whose pods were evicted.
  std::set<std::string> carry_out(const Decisions& decisions, const ObservedObjects& observed, double now) {
    std::set<std::string> evicted;
    std::mutex results_mutex;
    std::vector<std::function<void()>> tasks;
    for (const StartDecision& start : decisions.starts) {
      if (start.victims.empty()) {
        for (const PodBindingDecision& binding : start.bindings) {
          tasks.push_back([this, &binding, &results_mutex, now, uid = uid_of(observed, binding.pod_key)] {
            const CallResult result = bind_pod(client, binding);
            std::lock_guard lock(results_mutex);
            record_binding(binding, uid, result, now);
          });
        }
        continue;
      }
      if (auto refused = memory.evictions_refused_until.find(start.workload_key);
          refused != memory.evictions_refused_until.end()) {
        if (refused->second > now) continue;
        memory.evictions_refused_until.erase(refused);
      }
      // Victims first, one after another: the first refusal (a PodDisruptionBudget) ends the
      // attempt, so no more is evicted for a workload that cannot start now.
      tasks.push_back([this, &start, &results_mutex, &observed, &evicted, now] {
        RoomPlan plan{{}, {}, now};
        for (const PodBindingDecision& binding : start.bindings) plan.bindings[binding.pod_key] = binding.placement;
        bool refused = false, failed = false;
        for (const VictimDecision& victim : start.victims) {
          const CallResult result = evict_pod(client, victim);
          std::lock_guard lock(results_mutex);
          if (result.outcome == CallOutcome::kDone || result.outcome == CallOutcome::kGone) {
            plan.victims.insert(victim.pod_key);
            evicted.insert(victim.workload_key);
            ++cycle_timing.evictions;
            metrics.add_counter("tessera_evictions_total", {{"action", action_label(victim.action)}});
            emit({victim.namespace_name, "Pod", "v1", victim.name, uid_of(observed, victim.pod_key), "Normal",
                  eviction_reason(victim.action),
                  fmt::format("Evicted by tessera ({}) to make room for {}", action_label(victim.action),
                              start.workload_key)},
                 now);
            continue;
          }
          if (result.outcome != CallOutcome::kRefused) {
            // Not an answer about this pod (the request failed, the server erred): stop this
            // attempt and let the next cycle decide again, without a refusal's wait or event.
            failed = true;
            metrics.add_counter("tessera_api_errors_total", {{"operation", "evict"}});
            log_line(
                fmt::format("eviction of {} for {} failed: {}", victim.pod_key, start.workload_key, result.message));
            break;
          }
          refused = true;
          metrics.add_counter("tessera_eviction_refusals_total", {});
          log_line(
              fmt::format("eviction of {} for {} refused: {}", victim.pod_key, start.workload_key, result.message));
          if (!start.bindings.empty()) {
            const PodBindingDecision& first = start.bindings.front();
            emit({first.namespace_name, "Pod", "v1", first.name, uid_of(observed, first.pod_key), "Warning",
                  "EvictionRefused", fmt::format("eviction of {} refused: {}", victim.pod_key, result.message)},
                 now);
          }
          break;
        }
        std::lock_guard lock(results_mutex);
        if (refused) {
          memory.evictions_refused_until[start.workload_key] = now + options.eviction_retry_seconds;
        } else if (!failed) {
          memory.plans[start.workload_key] = std::move(plan);
        }
      });
    }
    api_pool.run_all(std::move(tasks));
    return evicted;
  }

  // Restarts and lost GPU-hours per gang (restart_ledger.h), kept in PodGroup status by
  // write_status; the object the user created hears that its gang was evicted.
  void track_restarts(const Snapshot& snapshot, const Decisions& decisions, const std::set<std::string>& evicted,
                      const ObservedObjects& observed, double now) {
    std::set<std::string> pod_groups, first_seen;
    for (const auto& [key, object] : observed.pod_groups) {
      if (restarts.read_back(key, *object)) first_seen.insert(key);
      pod_groups.insert(key);
    }
    for (const std::string& workload : evicted) {
      auto found = decisions.evicted.find(workload);
      if (found == decisions.evicted.end()) continue;  // elastic extras only: the gang runs on
      const EvictedWorkload& gang = found->second;
      const std::string reason = eviction_reason(gang.action);
      if (!gang.pod_group.empty()) {
        auto group = observed.pod_groups.find(gang.pod_group);
        const double checkpoint = group == observed.pod_groups.end() ? 0 : last_checkpoint(*group->second);
        const double lost = restarts.interrupted({gang.pod_group, reason, gang.gpus, gang.started_at,
                                                  std::max(gang.started_at, checkpoint), now,
                                                  pod_uids(snapshot, observed, gang.pod_group)});
        metrics.add_counter("tessera_lost_gpu_hours_total", {{"queue", gang.queue}, {"reason", reason}}, lost);
      }
      if (gang.owner) {
        const ObjectRef& owner = *gang.owner;
        emit({owner.namespace_name, owner.kind, owner.api_version, owner.name, owner.uid, "Warning", reason,
              fmt::format("tessera evicted its {} pods ({} GPUs) as one gang ({}); its controller makes them again "
                          "and they start again together",
                          gang.pods, gang.gpus, action_label(gang.action))},
             now);
      }
    }
    note_failed_pods(snapshot, observed, first_seen, now);
    for (WorkloadId id : snapshot.workloads.active()) {
      const std::string& pod_group = snapshot.workload_pod_groups[static_cast<size_t>(id)];
      if (pod_group.empty() || !snapshot.workloads.is_running(id, *snapshot.cluster)) continue;
      std::set<std::string> bound;
      for (PodId pod : snapshot.workloads[id].pods) {
        if (snapshot.cluster->binding(pod)) bound.insert(uid_of(observed, snapshot.pods[static_cast<size_t>(pod)].key));
      }
      if (auto reason = restarts.started(pod_group, snapshot.workloads[id].started_at, bound)) {
        metrics.add_counter("tessera_workload_restarts_total",
                            {{"queue", snapshot.tree->spec(snapshot.workloads[id].queue).name}, {"reason", *reason}});
      }
    }
    restarts.keep_only(pod_groups);
  }

  // The uids of the pods of a PodGroup, as the caches show them.
  std::set<std::string> pod_uids(const Snapshot& snapshot, const ObservedObjects& observed,
                                 const std::string& pod_group) const {
    std::set<std::string> uids;
    if (auto pods = snapshot.pod_group_pods.find(pod_group); pods != snapshot.pod_group_pods.end()) {
      for (const std::string& pod : pods->second) uids.insert(uid_of(observed, pod));
    }
    return uids;
  }

  // A gang one of whose pods failed on its own is interrupted (PodFailed): its controller's
  // failure policy makes the pods again, and Tessera counts the restart when they run. What is
  // lost is the GPUs its pods still bound hold x its run time (the failed pod's own are released).
  void note_failed_pods(const Snapshot& snapshot, const ObservedObjects& observed,
                        const std::set<std::string>& first_seen, double now) {
    std::map<std::string, WorkloadId> workload_of;  // PodGroup key -> its workload
    for (size_t id = 0; id < snapshot.workload_pod_groups.size(); ++id) {
      if (!snapshot.workload_pod_groups[id].empty())
        workload_of[snapshot.workload_pod_groups[id]] = static_cast<WorkloadId>(id);
    }
    for (const auto& [key, pods] : snapshot.pod_group_pods) {
      if (!observed.pod_groups.contains(key)) continue;
      std::vector<std::string> failed;
      for (const std::string& pod : pods) {
        if (snapshot.pod_phases.at(pod) == PodPhase::kFailed) failed.push_back(pod);
      }
      if (!restarts.pods_failed(key, failed, first_seen.contains(key))) continue;
      double gpus = 0, started_at = 0;
      std::string queue;
      if (auto found = workload_of.find(key); found != workload_of.end()) {
        const Workload& workload = snapshot.workloads[found->second];
        for (PodId pod : workload.pods) {
          if (const auto& binding = snapshot.cluster->binding(pod))
            gpus += static_cast<double>(binding->gpu_milli()) / 1000.0;
        }
        started_at = workload.started_at;
        queue = snapshot.tree->spec(workload.queue).name;
      }
      const double checkpoint = last_checkpoint(*observed.pod_groups.at(key));
      const double lost = restarts.interrupted({key, "PodFailed", gpus, started_at,
                                                std::max(started_at > 0 ? started_at : now, checkpoint), now,
                                                pod_uids(snapshot, observed, key)});
      if (!queue.empty())
        metrics.add_counter("tessera_lost_gpu_hours_total", {{"queue", queue}, {"reason", "PodFailed"}}, lost);
    }
  }

  // A PodGroup for each workload grouped by its controller, where its status is kept (`kubectl get
  // podgroups` lists it), owner-referenced so that garbage collection removes it with the workload.
  // One the cache does not show yet is created again after kPodGroupCreateRetrySeconds.
  void write_pod_groups(const Snapshot& snapshot, const ObservedObjects& observed, double now) {
    std::erase_if(pod_group_sent_at, [&](const auto& entry) {
      return observed.pod_groups.contains(entry.first) || now - entry.second > kPodGroupCreateRetrySeconds;
    });
    std::vector<std::function<void()>> tasks;
    for (const OwnedWorkload& owned : snapshot.owned_pod_groups) {
      const std::string key = owned.pod_group_key();
      if (observed.pod_groups.contains(key) || pod_group_sent_at.contains(key)) continue;
      pod_group_sent_at[key] = now;
      json metadata = {{"name", owned.pod_group_name},
                       {"namespace", owned.owner.namespace_name},
                       {"labels", {{"app.kubernetes.io/managed-by", "tessera"}}},
                       {"annotations", {{std::string(kWorkloadAnnotation), owned.key}}}};
      const ObjectRef& collector = owned.collected_with;
      if (!collector.uid.empty()) {
        metadata["ownerReferences"] = json::array({{{"apiVersion", collector.api_version},
                                                    {"kind", collector.kind},
                                                    {"name", collector.name},
                                                    {"uid", collector.uid}}});
      }
      json spec = {{"minMember", owned.min_member}};
      if (!owned.queue.empty()) spec["queue"] = owned.queue;
      json body = {
          {"apiVersion", std::string(kApiVersion)}, {"kind", "PodGroup"}, {"metadata", metadata}, {"spec", spec}};
      tasks.push_back([this, key, owner = owned.owner.describe(), ns = owned.owner.namespace_name, body] {
        auto created = client.post(fmt::format("/apis/{}/namespaces/{}/podgroups", kApiVersion, ns), body);
        const bool exists = created && created->status == 409;  // made before, by this or another replica
        failures.record("podgroup-create", fmt::format("creating the PodGroup {} of {}", key, owner),
                        exists || (created && created->ok()), failure_cause(created), failure_description(created));
        if (!exists && (!created || !created->ok())) {
          metrics.add_counter("tessera_api_errors_total", {{"operation", "podgroup-create"}});
        }
      });
    }
    api_pool.run_all(std::move(tasks));
  }

  void write_status(const Snapshot& snapshot, const CycleResult& result, const Decisions& decisions,
                    const ObservedObjects& observed, double now) {
    PodGroupProgress progress;
    for (const auto& [key, pod] : observed.pods) {
      if (!pod->value("/spec/nodeName"_json_pointer, std::string()).empty()) progress.bound.insert(key);
    }
    for (const auto& [key, assumed] : memory.assumed) progress.bound.insert(key);
    for (const auto& [workload, plan] : memory.plans) {
      for (const auto& [pod, placement] : plan.bindings) progress.bound.insert(pod);
    }
    for (const WaitingWorkload& waiting : decisions.waiting) {
      if (!waiting.pod_group.empty()) progress.waiting[waiting.pod_group] = &waiting;
    }
    progress.limits = limits.standing();
    progress.restarts = &restarts;
    std::vector<std::function<void()>> tasks;
    for (const auto& [key, object] : observed.pod_groups) {
      json status = pod_group_status(*object, snapshot, progress, now);
      if (!status_differs(*object, status)) continue;
      const auto [ns, name] = split_key(key);
      tasks.push_back([this, ns, name, status = std::move(status)] {
        // A failed write is tried again next cycle: the cache still shows the old status.
        auto written = client.patch(fmt::format("/apis/{}/namespaces/{}/podgroups/{}/status", kApiVersion, ns, name),
                                    {{"status", status}});
        failures.record("podgroup-status", fmt::format("writing the status of PodGroup {}/{}", ns, name), written);
        if (!written || !written->ok()) metrics.add_counter("tessera_api_errors_total", {{"operation", "status"}});
      });
    }
    for (auto& [name, status] : queue_statuses(snapshot, result, observed.queues, now)) {
      auto object = observed.queues.find(name);
      if (object == observed.queues.end() || !status_differs(*object->second, status)) continue;
      tasks.push_back([this, name, status] {
        auto written = client.patch(fmt::format("/apis/{}/queues/{}/status", kApiVersion, name), {{"status", status}});
        failures.record("queue-status", fmt::format("writing the status of Queue {}", name), written);
        if (!written || !written->ok()) metrics.add_counter("tessera_api_errors_total", {{"operation", "status"}});
      });
    }
    api_pool.run_all(std::move(tasks));
  }

  // Each waiting pod gets a FailedScheduling event (one object per pod, updated as its reason
  // changes) and the condition PodScheduled=False, reason Unschedulable, with the same text. A
  // changed message alone is written at most every kStateRefreshSeconds: messages carry live
  // numbers that change every cycle.
  void report_waiting(const Decisions& decisions, const ObservedObjects& observed, double now) {
    std::set<std::string> still_waiting;
    std::set<std::string> waiting_owners;  // "Job ns/name"
    std::vector<std::function<void()>> tasks;
    std::mutex written_mutex;
    for (const WaitingWorkload& waiting : decisions.waiting) {
      const std::string text = fmt::format("{}: {}", waiting.reason, waiting.message);
      // The object the user created hears it too: `kubectl describe job` shows why nothing runs.
      if (options.events && waiting.owner) {
        const ObjectRef& owner = *waiting.owner;
        events.state({owner.namespace_name, owner.kind, owner.api_version, owner.name, owner.uid, "Warning",
                      "FailedScheduling", text},
                     now);
        waiting_owners.insert(owner.kind + " " + owner.namespace_name + "/" + owner.name);
      }
      for (const std::string& pod_key : waiting.pod_keys) {
        auto pod = observed.pods.find(pod_key);
        if (pod == observed.pods.end()) continue;
        still_waiting.insert(pod_key);
        const auto [ns, name] = split_key(pod_key);
        if (options.events) {
          events.state({ns, "Pod", "v1", name, uid_of(observed, pod_key), "Warning", "FailedScheduling", text}, now);
        }
        auto written = condition_written_at.find(pod_key);
        const double last = written == condition_written_at.end() ? -1e300 : written->second;
        if (!condition_needs_write(*pod->second, text, now - last >= kStateRefreshSeconds)) continue;
        tasks.push_back([this, ns, name, pod_key, text, now, &written_mutex,
                         since = condition_transition_time(*pod->second, "PodScheduled", "False", now)] {
          const CallResult result = mark_unschedulable(client, ns, name, text, since);
          if (result.outcome != CallOutcome::kGone) {
            failures.record("pod-condition", fmt::format("writing the PodScheduled condition of pod {}", pod_key),
                            result.outcome == CallOutcome::kDone, result.cause, result.message);
          }
          std::lock_guard lock(written_mutex);
          if (result.outcome == CallOutcome::kDone) {
            condition_written_at[pod_key] = now;
          } else if (result.outcome != CallOutcome::kGone) {
            metrics.add_counter("tessera_api_errors_total", {{"operation", "pod-condition"}});
          }
        });
      }
    }
    api_pool.run_all(std::move(tasks));
    std::erase_if(condition_written_at, [&](const auto& entry) { return !still_waiting.contains(entry.first); });
    events.retry_pending(now);
    events.forget_unless([&](const std::string& kind, const std::string& key) {
      if (kind == "Pod") return observed.pods.contains(key);
      if (kind == "PodGroup") return observed.pod_groups.contains(key);
      if (kind == "Queue") return observed.queues.contains(key);
      return waiting_owners.contains(kind + " " + key);  // a Job, a JobSet...: while its pods wait
    });
  }

  // The condition TesseraScheduled on each owner whose gang waits (False, the pending reason) or
  // runs (True): owner_conditions.h. Written for owners in the caches, at most every
  // kStateRefreshSeconds when only the message changed.
  void report_owner_conditions(const Snapshot& snapshot, const Decisions& decisions, const ObservedObjects& observed,
                               double now) {
    std::map<std::string, std::pair<ObjectRef, OwnerCondition>> wanted;  // by owner path
    for (const WaitingWorkload& waiting : decisions.waiting) {
      if (waiting.owner)
        wanted[owner_status_path(*waiting.owner)] = {*waiting.owner, {false, waiting.reason, waiting.message}};
    }
    for (WorkloadId id : snapshot.workloads.active()) {
      const auto& owner = snapshot.workload_owners[static_cast<size_t>(id)];
      if (!owner || !snapshot.workloads.is_running(id, *snapshot.cluster)) continue;
      const int pods = static_cast<int>(snapshot.workloads[id].pods.size());
      wanted.try_emplace(owner_status_path(*owner), *owner,
                         OwnerCondition{true, "Scheduled", fmt::format("its gang of {} pods runs", pods)});
    }
    std::vector<std::function<void()>> tasks;
    std::mutex written_mutex;
    for (const auto& [path, entry] : wanted) {
      const auto& [owner, condition] = entry;
      const kube::ObjectPtr cached = cached_owner(observed.owners, owner);
      if (path.empty() || !cached) continue;
      auto written = owner_condition_written_at.find(path);
      const bool refresh_due =
          written == owner_condition_written_at.end() || now - written->second >= kStateRefreshSeconds;
      auto patch = owner_condition_patch(*cached, condition, refresh_due, now);
      if (!patch) continue;
      tasks.push_back([this, path, owner = owner.describe(), patch = std::move(*patch), now, &written_mutex] {
        auto result = client.patch(path, patch, kube::PatchType::kJson);
        // 404: the owner is gone; 422/409: it changed since it was cached (tried again next cycle).
        const int code = result ? result->status : 0;
        if (code != 404 && code != 409 && code != 422) {
          failures.record("owner-condition", fmt::format("writing the {} condition of {}", kOwnerConditionType, owner),
                          result);
        }
        std::lock_guard lock(written_mutex);
        if (result && result->ok()) owner_condition_written_at[path] = now;
      });
    }
    api_pool.run_all(std::move(tasks));
    std::erase_if(owner_condition_written_at, [&](const auto& entry) { return !wanted.contains(entry.first); });
  }

  // Whether the pod's PodScheduled condition should be written: it is missing, not False for
  // Unschedulable, or says something else and `refresh_due`.
  static bool condition_needs_write(const json& pod, const std::string& text, bool refresh_due) {
    const json conditions = pod.value("/status/conditions"_json_pointer, json::array());
    if (!conditions.is_array()) return true;
    for (const json& condition : conditions) {
      if (!condition.is_object() || condition.value("type", "") != "PodScheduled") continue;
      if (condition.value("status", "") != "False" || condition.value("reason", "") != "Unschedulable") return true;
      return condition.value("message", "") != text && refresh_due;
    }
    return true;
  }

  void record_queue_metrics(const Snapshot& snapshot, const CycleResult& result) {
    const QueueTree& tree = *snapshot.tree;
    std::vector<std::pair<std::map<std::string, std::string>, double>> allocated, fair, deserved, requested;
    for (QueueIndex queue = 0; queue < tree.size(); ++queue) {
      for (ResourceId resource = 0; resource < tree.resources().size(); ++resource) {
        std::string name = tree.resources().name(resource);
        // cpu in cores, as Prometheus conventions have it.
        const double scale = name == "cpu" ? 1e-3 : 1.0;
        std::map<std::string, std::string> labels{{"queue", tree.spec(queue).name}, {"resource", name}};
        if (queue < result.allocated_after.size()) {
          allocated.push_back({labels, scale * resource_at(result.allocated_after[queue], resource)});
        }
        if (queue < result.shares.fair_share.size()) {
          fair.push_back({labels, scale * resource_at(result.shares.fair_share[queue], resource)});
          requested.push_back({labels, scale * resource_at(result.shares.demand[queue], resource)});
        }
        deserved.push_back({labels, scale * tree.spec(queue).quota_for(resource).deserved});
      }
    }
    metrics.set_gauge_family("tessera_queue_allocated", std::move(allocated));
    metrics.set_gauge_family("tessera_queue_fair_share", std::move(fair));
    metrics.set_gauge_family("tessera_queue_deserved", std::move(deserved));
    metrics.set_gauge_family("tessera_queue_requested", std::move(requested));
    if (options.cycle.fair_share.usage_penalty > 0) {
      std::vector<std::pair<std::map<std::string, std::string>, double>> recent;
      for (const auto& [queue, amounts] : memory.recent_usage) {
        for (const auto& [resource, amount] : amounts) {
          recent.push_back({{{"queue", queue}, {"resource", resource}}, (resource == "cpu" ? 1e-3 : 1.0) * amount});
        }
      }
      metrics.set_gauge_family("tessera_queue_recent_usage", std::move(recent));
    }
  }

  int run(const std::atomic<bool>& stop) {
    start_http();
    for (kube::Informer* informer : informers()) informer->start();
    const auto sync_start = Clock::now();
    std::vector<std::string> logged_errors(informers().size());
    while (!synced()) {
      if (stop) return 0;
      // Say at once why a cache cannot fill (an untrusted certificate, 401, a missing RBAC
      // rule), and again whenever the reason changes.
      const std::vector<std::string> errors = sync_errors();
      for (size_t i = 0; i < errors.size(); ++i) {
        if (!errors[i].empty() && errors[i] != logged_errors[i]) log_line(fmt::format("cannot sync: {}", errors[i]));
        logged_errors[i] = errors[i];
      }
      if (seconds_since(sync_start) > options.cache_sync_timeout_seconds) {
        std::vector<std::string> reasons;
        for (const std::string& error : errors) {
          if (!error.empty()) reasons.push_back(error);
        }
        log_line(fmt::format("informer caches did not sync within {:.0f} s{}", options.cache_sync_timeout_seconds,
                             reasons.empty() ? "" : fmt::format(": {}", fmt::join(reasons, "; "))));
        return 2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    sync_seconds = seconds_since(sync_start);
    log_line(fmt::format("caches synced in {:.2f} s", sync_seconds.load()));
    log_line(limits.describe());
    for (const kube::Informer* informer : owner_informers()) {
      if (informer->last_error().empty()) continue;
      log_line(fmt::format("not grouping by this kind of owner for now ({}); looked for again every 30 s",
                           informer->last_error()));
    }
    if (!topologies->last_error().empty()) {
      log_line(
          fmt::format("not reading topologies for now ({}); gangs are placed without them, looked for again "
                      "every 30 s",
                      topologies->last_error()));
    }
    if (options.leader_elect) {
      kube::LeaderElectionConfig election = options.election;
      election.on_failure = log_line;
      leader = std::make_unique<kube::LeaderElector>(client, std::move(election));
      log_line(fmt::format("waiting for the lease {}/{} as {}", options.election.lease_namespace,
                           options.election.lease_name, options.election.identity));
      if (!leader->acquire(stop, [this] {
            lost = true;
            changed.notify_one();
          })) {
        return 0;
      }
      log_line(fmt::format("leading as {}", options.election.identity));
    }
    auto last_cycle = Clock::now() - std::chrono::hours(1);
    while (!stop) {
      {
        std::unique_lock lock(change_mutex);
        const auto interval = std::chrono::duration<double>(options.cycle_interval_seconds);
        changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return dirty || lost.load(); });
        const bool due = Clock::now() - last_cycle >= interval;
        if (!dirty && !due && !lost) continue;
        if (dirty && !due) {
          lock.unlock();
          std::this_thread::sleep_for(std::chrono::duration<double>(options.cycle_debounce_seconds));
          lock.lock();
        }
        dirty = false;
      }
      if (lost) {
        log_line("lost the lease; stopping");
        return 1;
      }
      if (stop) break;
      if (!synced()) {  // a relist is under way: never act on a half-filled cache; look again soon
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::lock_guard lock(change_mutex);
        dirty = true;
        continue;
      }
      last_cycle = Clock::now();
      run_cycle_once();
      if (options.max_cycles >= 0 && cycle_count >= options.max_cycles) break;
    }
    // A clean stop hands the lease over at once rather than after it expires.
    if (leader && leader->is_leader()) leader->release();
    return 0;
  }

  ~Impl() {
    for (kube::Informer* informer : informers()) informer->stop();
    if (http_thread.joinable()) {
      http.stop();
      http_thread.join();
    }
  }

  kube::ApiClient& client;
  SchedulerOptions options;
  TaskPool api_pool;
  Metrics metrics;
  std::unique_ptr<kube::Informer> nodes, tessera_pods, bound_pods, queues, pod_groups, namespaces;
  std::unique_ptr<kube::Informer> jobs, jobsets, pytorchjobs, trainjobs, rayclusters, topologies;
  std::unique_ptr<kube::LeaderElector> leader;

  std::mutex change_mutex;
  std::condition_variable changed;
  bool dirty = true;

  SchedulerMemory memory;
  static constexpr double kPodGroupCreateRetrySeconds = 10;
  std::map<std::string, double> pod_group_sent_at;  // PodGroup key -> when its creation was sent
  FailureLog failures{log_line};
  EventRecorder events{client, 2, kStateRefreshSeconds, &failures};
  LimitEnforcer limits{options.telemetry};
  RestartLedger restarts;
  std::map<std::string, double> owner_condition_written_at;  // owner status path -> when its condition was written
  std::map<std::string, double> condition_written_at;  // pod key -> when its PodScheduled=False was written
  std::set<std::string> reported_queue_problems;
  std::set<std::string> reported_topology_problems;
  CycleTiming cycle_timing;
  std::atomic<double> cycle_started_at = 0;

  mutable std::mutex totals_mutex;
  CycleTiming totals;
  int64_t cycle_count = 0;

  static constexpr double kDashboardRefreshSeconds = 1;
  dashboard::DashboardPublisher dashboard_state;
  double dashboard_published_at = -1e300;
  std::unique_ptr<dashboard::AccessReviewer> access_reviewer;  // --dashboard-auth kubernetes
  httplib::Server http;
  std::thread http_thread;
  int bound_port = 0;
  std::atomic<double> sync_seconds = 0;
  // Set by the elector's renewal thread, which may outlive run().
  std::atomic<bool> lost = false;
};

KubeScheduler::KubeScheduler(kube::ApiClient& client, SchedulerOptions options)
    : impl_(std::make_unique<Impl>(client, std::move(options))) {}
KubeScheduler::~KubeScheduler() = default;

int KubeScheduler::run(const std::atomic<bool>& stop) { return impl_->run(stop); }
const Metrics& KubeScheduler::metrics() const { return impl_->metrics; }
CycleTiming KubeScheduler::totals() const {
  std::lock_guard lock(impl_->totals_mutex);
  return impl_->totals;
}
int64_t KubeScheduler::cycles() const {
  std::lock_guard lock(impl_->totals_mutex);
  return impl_->cycle_count;
}
int KubeScheduler::listen_port() const { return impl_->bound_port; }
double KubeScheduler::cache_sync_seconds() const { return impl_->sync_seconds; }

}  // namespace tessera::adapter
