#include "cli/bench_bind_command.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "adapter/kube_scheduler.h"
#include "adapter/task_pool.h"
#include "apiserver/dev_cluster.h"
#include "cli/bench_bind_cluster.h"
#include "cli/elapsed.h"
#include "kube/api_client.h"
#include "kube/informer.h"
#include "policy/policy_registry.h"
#include "policy/workload_mix.h"
#include "sim/html_report.h"
#include "sim/scenario_loader.h"

namespace tessera {

namespace {

using nlohmann::json;

struct BindBenchOptions {
  int nodes = 1000;
  int pods = 5000;
  int gpus_per_pod = 1;
  int api_workers = 16;
  int repeat = 3;
  bool events = true;
  std::string policy = "tessera";
  std::string json_path;
  std::string kubeconfig;      // set: against that running cluster, the schedulers as processes
  std::string kube_scheduler;  // with kubeconfig: also time this kube-scheduler binary
};

struct BindRun {
  double create_seconds = 0;  // creating the pending pods (before the scheduler starts)
  double sync_seconds = 0;    // the scheduler's informers listing everything
  double bind_seconds = 0;    // synced caches to the last pod seen bound
  double snapshot_seconds = 0;
  double engine_seconds = 0;
  double api_seconds = 0;
  int64_t cycles = 0;
  int bound = 0;
};

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : (n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2);
}

Result<BindRun> run_once(const BindBenchOptions& options) {
  // The cluster: N nodes of 8 GPUs, as a scenario file the dev cluster reads.
  const auto nodes_file = std::filesystem::temp_directory_path() / fmt::format("tessera-bench-bind-{}.yaml", getpid());
  {
    std::ofstream out(nodes_file);
    out << fmt::format(
        "cluster:\n  nodes:\n    - name: node\n      count: {}\n      cpu: 96\n      memory: 768Gi\n      gpus: 8\n"
        "      gpu_model: A100\n      gpu_memory: 80Gi\n",
        options.nodes);
  }
  auto nodes = load_cluster(nodes_file.string());
  std::filesystem::remove(nodes_file);
  if (!nodes) return nodes.error();
  apiserver::DevClusterOptions cluster_options;
  cluster_options.nodes = std::move(*nodes);
  apiserver::DevCluster cluster(cluster_options);
  if (Status started = cluster.start(); !started) return started.error();

  const auto kubeconfig = cluster.server().kubeconfig();
  kube::ClientConfig config;
  config.server = kubeconfig.server_url;
  config.certificate_authority_pem = kubeconfig.ca_certificate_pem;
  config.bearer_token = kubeconfig.token;
  kube::ApiClient client(config);

  auto created = client.post("/apis/scheduling.tessera.dev/v1alpha1/queues",
                             {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
                              {"kind", "Queue"},
                              {"metadata", {{"name", "bench"}}},
                              {"spec", {{"resources", {{"gpu", {{"deserved", options.nodes * 8}}}}}}}});
  if (!created || !created->ok()) return Error{"could not create the benchmark queue"};
  created = client.post("/api/v1/namespaces",
                        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "bench"}}}});
  if (!created || !created->ok()) return Error{"could not create the benchmark namespace"};

  BindRun run;
  {
    adapter::TaskPool creators(options.api_workers);
    std::vector<std::function<void()>> tasks;
    std::atomic<int> failures = 0;
    for (int i = 0; i < options.pods; ++i) {
      tasks.push_back([&, i] {
        json container = {{"name", "main"},
                          {"image", "busybox"},
                          {"resources",
                           {{"requests", {{"cpu", "1"}, {"memory", "4Gi"}}},
                            {"limits", {{"nvidia.com/gpu", std::to_string(options.gpus_per_pod)}}}}}};
        json pod = {
            {"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", fmt::format("pod-{}", i)}, {"labels", {{"scheduling.tessera.dev/queue", "bench"}}}}},
            {"spec", {{"schedulerName", "tessera"}, {"containers", json::array({container})}}}};
        auto response = client.post("/api/v1/namespaces/bench/pods", pod);
        if (!response || !response->ok()) ++failures;
      });
    }
    const auto start = Clock::now();
    creators.run_all(std::move(tasks));
    run.create_seconds = seconds_since(start);
    if (failures > 0) return Error{fmt::format("{} of {} pods could not be created", failures.load(), options.pods)};
  }

  // An observer that counts bound pods through its own watch, as a user would see them.
  kube::InformerOptions watch;
  watch.collection_path = "/api/v1/namespaces/bench/pods";
  watch.field_selector = "spec.nodeName!=";
  kube::Informer bound(client, watch);
  bound.start();
  if (!bound.wait_for_sync(60)) return Error{"the observer's watch did not sync"};

  adapter::SchedulerOptions scheduler_options;
  scheduler_options.policy = options.policy;
  scheduler_options.api_workers = options.api_workers;
  scheduler_options.events = options.events;
  kube::ApiClient scheduler_client(config);
  adapter::KubeScheduler scheduler(scheduler_client, scheduler_options);
  std::atomic<bool> stop = false;
  const auto start = Clock::now();
  std::thread scheduling([&] { scheduler.run(stop); });
  double all_bound = -1;
  while (seconds_since(start) < 600) {
    if (static_cast<int>(bound.snapshot().size()) >= options.pods) {
      all_bound = seconds_since(start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  scheduling.join();
  run.bound = static_cast<int>(bound.snapshot().size());
  bound.stop();
  cluster.stop();
  if (all_bound < 0) return Error{fmt::format("only {} of {} pods were bound within 600 s", run.bound, options.pods)};
  const adapter::CycleTiming totals = scheduler.totals();
  run.sync_seconds = scheduler.cache_sync_seconds();
  run.bind_seconds = all_bound - run.sync_seconds;
  run.snapshot_seconds = totals.snapshot_seconds;
  run.engine_seconds = totals.engine_seconds;
  run.api_seconds = totals.bind_seconds;
  run.cycles = scheduler.cycles();
  return run;
}

int run_bind_bench(const BindBenchOptions& options) {
  if (auto policy = make_policy(options.policy, WorkloadMix()); !policy) {
    std::fputs(fmt::format("error: --policy: {}\n", policy.error().message).c_str(), stderr);
    return 2;
  }
  std::fputs(fmt::format("bench bind: {} nodes x 8 GPUs, {} pending pods of {} GPU(s), {} API workers, policy {}, "
                         "through the dev cluster's API server (HTTPS, bearer token) in this process\n",
                         options.nodes, options.pods, options.gpus_per_pod, options.api_workers, options.policy)
                 .c_str(),
             stdout);
  std::vector<BindRun> runs;
  for (int i = 0; i < options.repeat; ++i) {
    auto run = run_once(options);
    if (!run) {
      std::fputs(fmt::format("error: {}\n", run.error().message).c_str(), stderr);
      return 1;
    }
    std::fputs(
        fmt::format("  run {}: created in {:.2f} s; caches synced in {:.2f} s; all bound {:.2f} s later "
                    "({:.0f} pods/s); {} cycles: snapshot {:.3f} s, engine {:.3f} s, API calls {:.3f} s\n",
                    i + 1, run->create_seconds, run->sync_seconds, run->bind_seconds, options.pods / run->bind_seconds,
                    run->cycles, run->snapshot_seconds, run->engine_seconds, run->api_seconds)
            .c_str(),
        stdout);
    runs.push_back(*run);
  }
  auto collect = [&](auto field) {
    std::vector<double> values;
    for (const BindRun& run : runs) values.push_back(field(run));
    return median(values);
  };
  const double bind = collect([](const BindRun& r) { return r.bind_seconds; });
  const double engine = collect([](const BindRun& r) { return r.engine_seconds; });
  const double snapshot = collect([](const BindRun& r) { return r.snapshot_seconds; });
  const double api = collect([](const BindRun& r) { return r.api_seconds; });
  const double sync = collect([](const BindRun& r) { return r.sync_seconds; });
  std::fputs(
      fmt::format("median of {}: {:.0f} pods bound/s ({:.2f} s for {} pods after the caches synced in {:.2f} s); "
                  "engine {:.1f}% of that time, snapshots {:.1f}%, API calls {:.1f}%; peak RSS {:.0f} MiB "
                  "(server and scheduler)\n",
                  runs.size(), options.pods / bind, bind, options.pods, sync, 100 * engine / bind,
                  100 * snapshot / bind, 100 * api / bind, peak_rss_mib())
          .c_str(),
      stdout);
  if (!options.json_path.empty()) {
    json report = {{"schema", "tessera.bench.bind/v1"},
                   {"nodes", options.nodes},
                   {"pods", options.pods},
                   {"gpus_per_pod", options.gpus_per_pod},
                   {"api_workers", options.api_workers},
                   {"policy", options.policy},
                   {"median",
                    {{"pods_per_second", options.pods / bind},
                     {"bind_seconds", bind},
                     {"cache_sync_seconds", sync},
                     {"engine_seconds", engine},
                     {"snapshot_seconds", snapshot},
                     {"api_seconds", api},
                     {"engine_share", engine / bind}}},
                   {"peak_rss_mib", peak_rss_mib()}};
    json list = json::array();
    for (const BindRun& run : runs) {
      list.push_back({{"create_seconds", run.create_seconds},
                      {"cache_sync_seconds", run.sync_seconds},
                      {"bind_seconds", run.bind_seconds},
                      {"snapshot_seconds", run.snapshot_seconds},
                      {"engine_seconds", run.engine_seconds},
                      {"api_seconds", run.api_seconds},
                      {"cycles", run.cycles}});
    }
    report["runs"] = list;
    if (Status written = write_file_atomically(options.json_path, report.dump(2) + "\n"); !written) {
      std::fputs(fmt::format("error: {}\n", written.error().message).c_str(), stderr);
      return 2;
    }
  }
  return 0;
}

}  // namespace

void add_bench_bind_command(CLI::App& bench, int& exit_code) {
  auto options = std::make_shared<BindBenchOptions>();
  CLI::App* bind = bench.add_subcommand(
      "bind",
      "Pods bound per second end to end: pending pods on a dev cluster, `tessera scheduler`'s loop binding them "
      "through the API server, and the engine's share of that time");
  bind->add_option("--nodes", options->nodes, "Nodes of 8 GPUs")->check(CLI::Range(1, 100000))->capture_default_str();
  bind->add_option("--pods", options->pods, "Single-pod workloads, pending when the scheduler starts")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  bind->add_option("--gpus-per-pod", options->gpus_per_pod, "Whole GPUs per pod")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  bind->add_option("--api-workers", options->api_workers, "Concurrent API calls of the scheduler")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  bind->add_option("--repeat", options->repeat, "Runs; the median is reported")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  bind->add_option("--policy", options->policy, "Placement policy")->capture_default_str();
  bind->add_flag(
      "--no-events", [options](int64_t) { options->events = false; }, "Write no Scheduled events");
  bind->add_option("--json", options->json_path, "Also write the figures as JSON (schema tessera.bench.bind/v1)");
  bind->add_option("--kubeconfig", options->kubeconfig,
                   "Measure on this running cluster instead (a real control plane with KWOK nodes: "
                   "scripts/bench-real-cluster.sh): `tessera scheduler` as a process of its own, timed from its "
                   "start to the last pod bound, with its CPU time and peak memory");
  bind->add_option("--kube-scheduler", options->kube_scheduler,
                   "With --kubeconfig: then the same pods for this kube-scheduler binary (default profile)");
  bind->callback([options, &exit_code] {
    if (options->kubeconfig.empty()) {
      if (!options->kube_scheduler.empty()) {
        std::fputs("error: --kube-scheduler needs --kubeconfig (a cluster it can run against)\n", stderr);
        exit_code = 2;
        return;
      }
      exit_code = run_bind_bench(*options);
      return;
    }
    ClusterBindBenchOptions cluster;
    cluster.kubeconfig = options->kubeconfig;
    cluster.kube_scheduler = options->kube_scheduler;
    cluster.tessera = std::filesystem::read_symlink("/proc/self/exe").string();
    cluster.pods = options->pods;
    cluster.gpus_per_pod = options->gpus_per_pod;
    cluster.json_path = options->json_path;
    exit_code = run_cluster_bind_bench(cluster);
  });
}

}  // namespace tessera
