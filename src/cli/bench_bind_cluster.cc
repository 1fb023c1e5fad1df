#include "cli/bench_bind_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "adapter/failure_log.h"
#include "adapter/task_pool.h"
#include "cli/elapsed.h"
#include "kube/api_client.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"
#include "sim/html_report.h"

extern char** environ;

namespace tessera {

namespace {

using nlohmann::json;

constexpr const char* kNamespace = "tessera-bench";
constexpr const char* kQueue = "tessera-bench";

struct SchedulerRun {
  std::string scheduler;
  double create_seconds = 0;  // making the pending pods, before the scheduler starts
  double bind_seconds = 0;    // the scheduler's process start to the last pod seen bound
  double cpu_seconds = 0;     // the scheduler process's user + system time
  double peak_rss_mib = 0;    // its peak resident memory
  int bound = 0;
  std::string log_path;
};

// POSTs `body` unless it exists already (409).
Status ensure(kube::ApiClient& client, const std::string& path, const json& body) {
  auto created = client.post(path, body);
  if (created && (created->ok() || created->status == 409)) return Ok{};
  return Error{fmt::format("creating {} failed: {}", path, adapter::failure_description(created))};
}

// Deletes every pod of the benchmark's namespace at once and waits until they are gone.
Status delete_pods(kube::ApiClient& client) {
  const std::string pods = fmt::format("/api/v1/namespaces/{}/pods", kNamespace);
  auto deleted = client.del(pods + "?gracePeriodSeconds=0");
  // A real server may take longer than the client's timeout to delete thousands of pods; it goes
  // on deleting after the connection is gone, so only a refusal ends the wait below.
  if (deleted && !deleted->ok()) {
    return Error{fmt::format("deleting the pods of {} failed: {}", kNamespace, adapter::failure_description(deleted))};
  }
  const auto start = Clock::now();
  while (seconds_since(start) < 300) {
    auto listed = client.get(pods + "?limit=1");
    if (listed && listed->ok()) {
      const json page = listed->json();
      if (page.is_object() && page.value("items", json::array()).empty()) return Ok{};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Error{fmt::format("the pods of {} were not gone within 300 s", kNamespace)};
}

Status create_pods(kube::ApiClient& client, const ClusterBindBenchOptions& options, const std::string& scheduler_name,
                   double& seconds) {
  adapter::TaskPool creators(options.create_workers);
  std::vector<std::function<void()>> tasks;
  std::atomic<int> failures = 0;
  std::mutex error_mutex;
  std::string first_error;
  for (int i = 0; i < options.pods; ++i) {
    tasks.push_back([&, i] {
      const json container = {{"name", "main"},
                              {"image", "busybox"},
                              {"resources",
                               {{"requests", {{"cpu", "1"}, {"memory", "4Gi"}}},
                                {"limits", {{"nvidia.com/gpu", std::to_string(options.gpus_per_pod)}}}}}};
      const json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          // Named after the scheduler: a name the previous run used may still have a delete on its
          // way from the node agent (KWOK deletes by name), which would take the new pod with it.
          {"metadata",
           {{"name", fmt::format("{}-{}", scheduler_name, i)}, {"labels", {{"scheduling.tessera.dev/queue", kQueue}}}}},
          {"spec", {{"schedulerName", scheduler_name}, {"containers", json::array({container})}}}};
      auto response = client.post(fmt::format("/api/v1/namespaces/{}/pods", kNamespace), pod);
      if (!response || !response->ok()) {
        ++failures;
        std::lock_guard lock(error_mutex);
        if (first_error.empty()) first_error = adapter::failure_description(response);
      }
    });
  }
  const auto start = Clock::now();
  creators.run_all(std::move(tasks));
  seconds = seconds_since(start);
  if (failures > 0) {
    return Error{fmt::format("{} of {} pods could not be created; the first: {}", failures.load(), options.pods,
                             first_error)};
  }
  return Ok{};
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

// Starts `argv` with stdout and stderr appended to `log_path`.
Result<pid_t> spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int failed = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) return Error{fmt::format("cannot start {}: {}", argv[0], std::strerror(failed))};
  return pid;
}

// Stops the process (TERM, then KILL after 20 s) and reads its CPU time and peak memory.
void stop(pid_t pid, SchedulerRun& run) {
  kill(pid, SIGTERM);
  const auto start = Clock::now();
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (seconds_since(start) > 20) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  run.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  run.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

std::vector<std::string> scheduler_command(const ClusterBindBenchOptions& options, const std::string& scheduler) {
  const std::string port = std::to_string(free_port());
  if (scheduler == "tessera") {
    return {options.tessera, "scheduler", "--kubeconfig", options.kubeconfig, "--listen", "127.0.0.1:" + port};
  }
  // The default profile, as a cluster runs it; no leader election (one replica).
  return {options.kube_scheduler,
          "--kubeconfig=" + options.kubeconfig,
          "--authentication-kubeconfig=" + options.kubeconfig,
          "--authorization-kubeconfig=" + options.kubeconfig,
          "--leader-elect=false",
          "--bind-address=127.0.0.1",
          "--secure-port=" + port};
}

Result<SchedulerRun> run_scheduler(kube::ApiClient& client, const ClusterBindBenchOptions& options,
                                   const std::string& scheduler, const std::filesystem::path& logs) {
  SchedulerRun run;
  run.scheduler = scheduler;
  run.log_path = (logs / (scheduler + ".log")).string();
  if (Status cleared = delete_pods(client); !cleared) return cleared.error();
  const std::string scheduler_name = scheduler == "tessera" ? "tessera" : "default-scheduler";
  if (Status created = create_pods(client, options, scheduler_name, run.create_seconds); !created) {
    return created.error();
  }
  // An observer that counts bound pods through its own watch, as a user would see them.
  kube::InformerOptions watch;
  watch.collection_path = fmt::format("/api/v1/namespaces/{}/pods", kNamespace);
  watch.field_selector = "spec.nodeName!=";
  kube::Informer bound(client, watch);
  bound.start();
  if (!bound.wait_for_sync(120)) return Error{fmt::format("the observer's watch did not sync: {}", bound.last_error())};

  auto pid = spawn(scheduler_command(options, scheduler), run.log_path);
  if (!pid) return pid.error();
  const auto start = Clock::now();
  double all_bound = -1;
  while (seconds_since(start) < options.timeout_seconds) {
    if (static_cast<int>(bound.snapshot().size()) >= options.pods) {
      all_bound = seconds_since(start);
      break;
    }
    int status = 0;
    if (waitpid(*pid, &status, WNOHANG) == *pid) {
      return Error{fmt::format("{} exited while binding (see {})", scheduler, run.log_path)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop(*pid, run);
  run.bound = static_cast<int>(bound.snapshot().size());
  bound.stop();
  if (all_bound < 0) {
    return Error{fmt::format("{}: only {} of {} pods were bound within {:.0f} s (see {})", scheduler, run.bound,
                             options.pods, options.timeout_seconds, run.log_path)};
  }
  run.bind_seconds = all_bound;
  return run;
}

// Nodes and their GPUs, as the cluster reports them.
std::pair<int, int64_t> cluster_size(kube::ApiClient& client) {
  auto listed = client.get("/api/v1/nodes");
  if (!listed || !listed->ok()) return {0, 0};
  const json page = listed->json();
  int nodes = 0;
  int64_t gpus = 0;
  for (const json& node : page.value("items", json::array())) {
    ++nodes;
    const std::string capacity = node.value("/status/allocatable/nvidia.com~1gpu"_json_pointer, std::string("0"));
    gpus += std::atoll(capacity.c_str());
  }
  return {nodes, gpus};
}

}  // namespace

int run_cluster_bind_bench(const ClusterBindBenchOptions& options) {
  auto config = kube::load_kubeconfig(options.kubeconfig);
  if (!config) {
    std::fputs(fmt::format("error: --kubeconfig: {}\n", config.error().message).c_str(), stderr);
    return 2;
  }
  if (!options.kube_scheduler.empty() && access(options.kube_scheduler.c_str(), X_OK) != 0) {
    std::fputs(fmt::format("error: --kube-scheduler: {} is not an executable file\n", options.kube_scheduler).c_str(),
               stderr);
    return 2;
  }
  kube::ApiClient client(*config);
  const auto [nodes, gpus] = cluster_size(client);
  std::fputs(fmt::format("bench bind: {} pending pods of {} GPU(s) on the cluster of {} ({} nodes, {} GPUs); each "
                         "scheduler a process of its own, timed from its start to the last pod seen bound\n",
                         options.pods, options.gpus_per_pod, config->server, nodes, gpus)
                 .c_str(),
             stdout);
  const std::vector<std::pair<std::string, json>> objects = {
      {"/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}}},
      {"/apis/scheduling.tessera.dev/v1alpha1/queues",
       {{"apiVersion", "scheduling.tessera.dev/v1alpha1"},
        {"kind", "Queue"},
        {"metadata", {{"name", kQueue}}},
        {"spec", {{"resources", {{"gpu", {{"deserved", std::max<int64_t>(gpus, 1)}}}}}}}}}};
  for (const auto& [path, body] : objects) {
    if (Status made = ensure(client, path, body); !made) {
      std::fputs(fmt::format("error: {}\n", made.error().message).c_str(), stderr);
      return 1;
    }
  }
  const auto logs = std::filesystem::temp_directory_path() / fmt::format("tessera-bench-bind-{}", getpid());
  std::filesystem::create_directories(logs);
  std::vector<std::string> schedulers = {"tessera"};
  if (!options.kube_scheduler.empty()) schedulers.push_back("kube-scheduler");
  std::vector<SchedulerRun> runs;
  for (const std::string& scheduler : schedulers) {
    auto run = run_scheduler(client, options, scheduler, logs);
    if (!run) {
      std::fputs(fmt::format("error: {}\n", run.error().message).c_str(), stderr);
      return 1;
    }
    std::fputs(fmt::format("  {:<15} pods created in {:.1f} s; all {} bound {:.2f} s after it started: {:.0f} pods/s; "
                           "CPU {:.1f} s; peak memory {:.0f} MiB\n",
                           scheduler, run->create_seconds, options.pods, run->bind_seconds,
                           options.pods / run->bind_seconds, run->cpu_seconds, run->peak_rss_mib)
                   .c_str(),
               stdout);
    runs.push_back(*run);
  }
  if (Status cleared = delete_pods(client); !cleared) {
    std::fputs(fmt::format("warning: {}\n", cleared.error().message).c_str(), stderr);
  }
  std::filesystem::remove_all(logs);
  if (runs.size() == 2) {
    std::fputs(fmt::format("tessera / kube-scheduler: {:.2f}x the pods per second\n",
                           runs[1].bind_seconds / runs[0].bind_seconds)
                   .c_str(),
               stdout);
  }
  if (!options.json_path.empty()) {
    json list = json::array();
    for (const SchedulerRun& run : runs) {
      list.push_back({{"scheduler", run.scheduler},
                      {"create_seconds", run.create_seconds},
                      {"bind_seconds", run.bind_seconds},
                      {"pods_per_second", options.pods / run.bind_seconds},
                      {"cpu_seconds", run.cpu_seconds},
                      {"peak_rss_mib", run.peak_rss_mib}});
    }
    json report = {{"schema", "tessera.bench.bind-cluster/v1"},
                   {"server", config->server},
                   {"nodes", nodes},
                   {"gpus", gpus},
                   {"pods", options.pods},
                   {"gpus_per_pod", options.gpus_per_pod},
                   {"runs", list}};
    if (runs.size() == 2) report["tessera_to_kube_scheduler"] = runs[1].bind_seconds / runs[0].bind_seconds;
    if (Status written = write_file_atomically(options.json_path, report.dump(2) + "\n"); !written) {
      std::fputs(fmt::format("error: {}\n", written.error().message).c_str(), stderr);
      return 2;
    }
  }
  return 0;
}

}  // namespace tessera
