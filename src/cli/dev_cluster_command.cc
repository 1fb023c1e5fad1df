#include "cli/dev_cluster_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "apiserver/dev_cluster.h"
#include "sim/scenario_loader.h"

namespace tessera {

namespace {

struct DevClusterFlags {
  std::string listen = "127.0.0.1:6443";
  std::string nodes;
  std::string kubeconfig = "tessera-dev.kubeconfig";
  bool plain_http = false;
  std::string token;
  size_t watch_history = 10000;
  double max_watch_seconds = 1800;
  double bookmark_interval_seconds = 60;
  double pod_start_seconds = 0.5;
  double termination_seconds = 1;
  bool no_crds = false;
  bool no_kubelet = false;
  bool log_requests = false;
  apiserver::FaultOptions faults;
};

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

int run_dev_cluster(const DevClusterFlags& flags) {
  const size_t colon = flags.listen.rfind(':');
  int port = -1;
  try {
    if (colon != std::string::npos) port = std::stoi(flags.listen.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535) {
    std::fputs(fmt::format("error: --listen {}: expected HOST:PORT, such as 127.0.0.1:6443\n", flags.listen).c_str(),
               stderr);
    return 2;
  }
  apiserver::DevClusterOptions options;
  options.server.host = flags.listen.substr(0, colon);
  options.server.port = port;
  options.server.tls = !flags.plain_http;
  options.server.authenticate = !flags.plain_http;
  options.server.token = flags.token;
  options.server.watch_history = flags.watch_history;
  options.server.watch_limits.max_duration = std::chrono::seconds(static_cast<int64_t>(flags.max_watch_seconds));
  options.server.watch_limits.bookmark_interval = milliseconds(flags.bookmark_interval_seconds);
  if (flags.log_requests) {
    options.server.request_log = [](const std::string& line) { std::fputs(fmt::format("{}\n", line).c_str(), stderr); };
  }
  options.server.faults = flags.faults;
  if (!flags.nodes.empty()) {
    auto nodes = load_cluster(flags.nodes);
    if (!nodes) {
      std::fputs(fmt::format("error: {}\n", nodes.error().message).c_str(), stderr);
      return 2;
    }
    options.nodes = std::move(*nodes);
  }
  options.install_crds = !flags.no_crds;
  options.kubelet = !flags.no_kubelet;
  options.kubelet_options.pod_start_delay = milliseconds(flags.pod_start_seconds);
  options.kubelet_options.termination_delay = milliseconds(flags.termination_seconds);

  // Every thread the cluster starts inherits this mask, so SIGINT and SIGTERM reach sigwait below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  apiserver::DevCluster cluster(options);
  if (Status started = cluster.start(); !started) {
    std::fputs(fmt::format("error: {}{}\n", flags.nodes.empty() ? "" : flags.nodes + ": ", started.error().message)
                   .c_str(),
               stderr);
    return 2;
  }
  apiserver::ApiServer& server = cluster.server();
  if (Status written = apiserver::write_kubeconfig(flags.kubeconfig, server.kubeconfig()); !written) {
    std::fputs(fmt::format("error: {}\n", written.error().message).c_str(), stderr);
    return 1;
  }
  std::error_code error;
  const std::filesystem::path kubeconfig = std::filesystem::absolute(flags.kubeconfig, error);
  fmt::print("tessera dev cluster: {} nodes, serving {}\n", cluster.node_count(), server.url());
  fmt::print("server: {}\nkubeconfig: {}\n", server.url(), kubeconfig.string());
  fmt::print("  export KUBECONFIG={}\n", kubeconfig.string());
  std::fflush(stdout);

  int received = 0;
  sigwait(&stop_signals, &received);
  fmt::print("tessera dev cluster: stopping ({})\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stdout);
  cluster.stop();
  if (flags.faults.any()) {
    fmt::print("tessera dev cluster: injected faults: {}\n", server.fault_counts().dump());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

void add_dev_cluster_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DevClusterFlags>();
  CLI::App* dev = app.add_subcommand("dev", "Development tools");
  dev->require_subcommand(1);
  CLI::App* cluster = dev->add_subcommand(
      "cluster",
      "Run a local Kubernetes API server with simulated GPU nodes and kubelets (a playground for the scheduler and "
      "kubectl)");
  cluster->add_option("--listen", flags->listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  cluster->add_option("--nodes", flags->nodes, "The nodes: builtin:NAME, an Alibaba node-list CSV, or a scenario YAML")
      ->required();
  cluster->add_option("--kubeconfig", flags->kubeconfig, "Where to write the kubeconfig for clients")
      ->capture_default_str();
  cluster->add_flag("--plain-http", flags->plain_http, "Serve HTTP without TLS and without authentication");
  cluster->add_option("--token", flags->token, "The bearer token clients must send (default: a random one)");
  cluster
      ->add_option("--watch-history", flags->watch_history,
                   "Changes kept for watches to resume from; older resourceVersions get 410 Expired")
      ->check(CLI::Range(size_t{1}, size_t{100000000}))
      ->capture_default_str();
  cluster
      ->add_option("--max-watch-seconds", flags->max_watch_seconds,
                   "The longest a watch lasts before the server ends it and the client reconnects")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cluster
      ->add_option("--bookmark-interval", flags->bookmark_interval_seconds,
                   "Seconds between BOOKMARK events for watches that allow them")
      ->check(CLI::Range(0.05, 1e7))
      ->capture_default_str();
  cluster->add_option("--pod-start-seconds", flags->pod_start_seconds, "How long a bound pod takes to become Running")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  cluster
      ->add_option("--termination-seconds", flags->termination_seconds,
                   "How long a deleted running pod takes to go (0: at once)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  cluster->add_flag("--no-crds", flags->no_crds, "Do not preinstall Tessera's CRDs (queues, podgroups)");
  cluster->add_flag("--no-kubelet", flags->no_kubelet, "Do not simulate kubelets: bound pods stay Pending");
  cluster->add_flag("--log-requests", flags->log_requests, "Print every request served to stderr");
  cluster->add_option("--fault-seed", flags->faults.seed, "Seed of the faults drawn (--fault-*)")->capture_default_str();
  cluster
      ->add_option("--fault-idle-close", flags->faults.idle_close_seconds,
                   "Close kept-alive connections idle longer than a random time up to SECONDS (0: off)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  cluster
      ->add_option("--fault-drop", flags->faults.drop_rate,
                   "Share of non-watch requests whose connection is closed with no response, half before and half "
                   "after the request is applied")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cluster
      ->add_option("--fault-errors", flags->faults.error_rate,
                   "Share of requests, watches included, answered 500, 503 or 429 (with Retry-After) without being "
                   "applied")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cluster->add_option("--fault-user-agent", flags->faults.user_agent_prefix,
                      "Drops and errors only for clients whose User-Agent starts with this (\"tessera\": the "
                      "scheduler; default: every client)");
  cluster->callback([flags, &exit_code] { exit_code = run_dev_cluster(*flags); });
}

}  // namespace tessera
