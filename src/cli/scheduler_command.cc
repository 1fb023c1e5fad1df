#include "cli/scheduler_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "adapter/kube_scheduler.h"
#include "cli/cycle_flags.h"
#include "core/node_pool.h"
#include "core/stop_signal.h"
#include "dashboard/dashboard_routes.h"
#include "kube/api_client.h"
#include "kube/kubeconfig.h"
#include "policy/policy_registry.h"

namespace tessera {

namespace {

adapter::SchedulerOptions with_default_listen() {
  adapter::SchedulerOptions options;
  options.listen = "127.0.0.1:10259";
  return options;
}

struct SchedulerCommandOptions {
  std::string kubeconfig;
  std::string context;
  adapter::SchedulerOptions scheduler = with_default_listen();
  // A move is an eviction on Kubernetes (only pods a controller recreates come back): off unless asked.
  CycleFlags cycle = {.reclaim_moves = false};
  bool no_events = false;
  bool no_estimates = false;
  std::string gpu_memory_overcommit;
  std::string dashboard_auth = "loopback";
  bool no_dashboard = false;
};

std::string default_identity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return fmt::format("{}-{:06x}", host, random() & 0xffffff);
}

int run_scheduler(SchedulerCommandOptions options) {
  StopSignal stop;
  auto config = options.kubeconfig.empty() ? kube::load_default_config(options.context)
                                           : kube::load_kubeconfig(options.kubeconfig, options.context);
  if (!config) {
    std::fputs(fmt::format("error: {}\n", config.error().message).c_str(), stderr);
    return 2;
  }
  if (!make_policy(options.scheduler.policy, WorkloadMix()).ok()) {
    std::fputs(fmt::format("error: --policy: unknown policy '{}' (expected one of {})\n", options.scheduler.policy,
                           fmt::join(policy_names(), ", "))
                   .c_str(),
               stderr);
    return 2;
  }
  if (!options.gpu_memory_overcommit.empty()) {
    auto overcommit = parse_gpu_memory_overcommit(options.gpu_memory_overcommit);
    if (!overcommit) {
      std::fputs(fmt::format("error: --gpu-memory-overcommit: {}\n", overcommit.error().message).c_str(), stderr);
      return 2;
    }
    options.scheduler.gpu_memory_overcommit = std::move(*overcommit);
  }
  auto dashboard_auth = dashboard::parse_dashboard_auth(options.dashboard_auth);
  if (!dashboard_auth) {
    std::fputs(fmt::format("error: {}\n", dashboard_auth.error().message).c_str(), stderr);
    return 2;
  }
  options.scheduler.dashboard_auth = *dashboard_auth;
  options.scheduler.dashboard = !options.no_dashboard;
  options.scheduler.cycle = options.cycle.options();
  options.scheduler.events = !options.no_events;
  options.scheduler.start_estimates = !options.no_estimates;
  if (options.scheduler.election.identity.empty()) options.scheduler.election.identity = default_identity();
  kube::ApiClient client(*config);
  std::fputs(fmt::format("tessera scheduler: API server {}, policy {}{}\n", config->server, options.scheduler.policy,
                         options.scheduler.leader_elect
                             ? fmt::format(", leader election as {}", options.scheduler.election.identity)
                             : "")
                 .c_str(),
             stderr);
  adapter::KubeScheduler scheduler(client, options.scheduler);
  return scheduler.run(stop.flag());
}

}  // namespace

void add_scheduler_options(CLI::App* command, int& exit_code) {
  auto options = std::make_shared<SchedulerCommandOptions>();
  command->add_option("--kubeconfig", options->kubeconfig,
                      "Kubeconfig file; default $KUBECONFIG, ~/.kube/config, else the in-cluster service account");
  command->add_option("--context", options->context, "Kubeconfig context; default its current-context");
  command->add_option("--policy", options->scheduler.policy, "Placement policy")->capture_default_str();
  command->add_option("--gpu-memory-overcommit", options->gpu_memory_overcommit,
                      "How far the GPU memory limits of the pods on one device may add up, as a ratio of its memory: "
                      "RATIO for every node pool, or POOL=RATIO,... by the node label "
                      "scheduling.tessera.dev/node-pool (pool 'default' for nodes without it); 1 to 8, default 1");
  command
      ->add_option("--cycle-interval", options->scheduler.cycle_interval_seconds,
                   "Seconds between cycles when nothing changes")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  command->add_option("--api-workers", options->scheduler.api_workers, "Concurrent bindings and evictions")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command->add_option("--listen", options->scheduler.listen, "host:port for /metrics, /healthz, /readyz and /ui")
      ->capture_default_str();
  command
      ->add_option("--dashboard-auth", options->dashboard_auth,
                   "Whom the dashboard at /ui answers (docs/dashboard.md): loopback (peers on a loopback address "
                   "only, as kubectl port-forward arrives) or kubernetes (a bearer token whose user may list "
                   "podgroups in all namespaces, checked with TokenReview and SubjectAccessReview)")
      ->capture_default_str();
  command->add_flag("--no-dashboard", options->no_dashboard, "Serve no dashboard at /ui");
  add_cycle_flags(*command, options->cycle, "",
                  ". A move is an eviction here: only pods a controller recreates come back");
  command->add_option("--prometheus-url", options->scheduler.telemetry.prometheus_url,
                      "Prometheus server (http://HOST:PORT) to read GPU utilisation from for idle-GPU limits; "
                      "without it idle detection is off");
  command
      ->add_option("--gpu-utilisation-query", options->scheduler.telemetry.query,
                   "PromQL instant query giving per namespace and pod the GPU utilisation in percent; $window is "
                   "the idle window (\"300s\")")
      ->capture_default_str();
  command
      ->add_option("--gpu-utilisation-interval", options->scheduler.telemetry.read_interval_seconds,
                   "Seconds between two reads of GPU utilisation")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  command->add_flag("--no-events", options->no_events, "Write no Kubernetes Events");
  command->add_flag("--no-estimates", options->no_estimates,
                    "Estimate no start times for waiting workloads (docs/estimates.md)");
  command
      ->add_option("--estimate-budget", options->scheduler.estimates.max_wall_seconds,
                   "Wall-clock seconds the start-time estimates may take per cycle")
      ->check(CLI::Range(0.001, 60.0))
      ->capture_default_str();
  command->add_option("--estimate-steps", options->scheduler.estimates.max_steps,
                      "Simulated cycles the start-time estimates may run per cycle")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_flag("--leader-elect", options->scheduler.leader_elect,
                    "Run cycles only while holding the leader Lease (for several replicas)");
  command->add_option("--lease-namespace", options->scheduler.election.lease_namespace)->capture_default_str();
  command->add_option("--lease-name", options->scheduler.election.lease_name)->capture_default_str();
  command->add_option("--identity", options->scheduler.election.identity,
                      "This replica's name in the Lease; default hostname and a random suffix");
  command
      ->add_option("--lease-duration", options->scheduler.election.lease_duration_seconds,
                   "Seconds a standby waits for an unrenewed lease before taking it")
      ->check(CLI::Range(0.5, 600.0))
      ->capture_default_str();
  command
      ->add_option("--renew-deadline", options->scheduler.election.renew_deadline_seconds,
                   "Seconds the leader keeps trying to renew before it steps down")
      ->check(CLI::Range(0.2, 600.0))
      ->capture_default_str();
  command
      ->add_option("--retry-period", options->scheduler.election.retry_period_seconds,
                   "Seconds between lease renewals and acquisition attempts")
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();
  command->add_option("--max-cycles", options->scheduler.max_cycles, "Stop after this many cycles (-1: never)")
      ->capture_default_str();
  command
      ->add_option("--cache-sync-timeout", options->scheduler.cache_sync_timeout_seconds,
                   "Seconds to wait for the first list of every watched kind before exiting with status 2")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  command
      ->add_option("--watch-timeout", options->scheduler.watch_timeout_seconds,
                   "Seconds after which the server is asked to end each watch (it then resumes from the last "
                   "version seen, relisting if that is gone)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command->callback([options, &exit_code] {
    const auto& election = options->scheduler.election;
    if (options->scheduler.leader_elect && !(election.retry_period_seconds < election.renew_deadline_seconds &&
                                             election.renew_deadline_seconds < election.lease_duration_seconds)) {
      std::fputs("error: leader election needs --retry-period < --renew-deadline < --lease-duration\n", stderr);
      exit_code = 2;
      return;
    }
    exit_code = run_scheduler(*options);
  });
}

void add_scheduler_command(CLI::App& app, int& exit_code) {
  add_scheduler_options(app.add_subcommand("scheduler", kSchedulerDescription), exit_code);
}

}  // namespace tessera
