#include "cli/dev_gpu_metrics_command.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/dev_command.h"
#include "core/stop_signal.h"
#include "cli/user/cluster_access.h"
#include "cli/user/gpu_metrics.h"

namespace tessera {

namespace {

struct GpuMetricsFlags {
  cli::ClusterFlags cluster;
  std::string listen = "127.0.0.1:9400";  // dcgm-exporter's port
};

int run_gpu_metrics(const GpuMetricsFlags& flags) {
  const StopSignal stop;
  auto cluster = cli::connect(flags.cluster);
  if (!cluster) return cli::report_failure(cluster.error());
  const size_t colon = flags.listen.rfind(':');
  const int port = colon == std::string::npos ? -1 : std::atoi(flags.listen.c_str() + colon + 1);
  if (port <= 0 || port > 65535) {
    std::fputs(fmt::format("error: --listen {}: expected HOST:PORT\n", flags.listen).c_str(), stderr);
    return 2;
  }
  httplib::Server server;
  // Each scrape reads the pods afresh: what runs now, as dcgm-exporter reads the devices.
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& response) {
    auto pods = cluster->get("/api/v1/pods?fieldSelector=spec.nodeName!%3D");
    if (!pods) {
      response.status = 503;
      response.set_content(pods.error().message + "\n", "text/plain");
      return;
    }
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    response.set_content(cli::dcgm_utilisation_metrics(*pods, now), "text/plain; version=0.0.4");
  });
  if (!server.bind_to_port(flags.listen.substr(0, colon), port)) {
    std::fputs(fmt::format("error: cannot listen on {}\n", flags.listen).c_str(), stderr);
    return 1;
  }
  std::thread serving([&server] { server.listen_after_bind(); });
  std::fputs(fmt::format("serving DCGM_FI_DEV_GPU_UTIL on http://{}/metrics\n", flags.listen).c_str(), stdout);
  std::fflush(stdout);
  while (!stop.stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  serving.join();
  return 0;
}

}  // namespace

void add_dev_gpu_metrics_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<GpuMetricsFlags>();
  CLI::App* dev = dev_command(app);
  CLI::App* command = dev->add_subcommand(
      "gpu-metrics",
      "Serve dcgm-exporter's DCGM_FI_DEV_GPU_UTIL at /metrics for the running pods of a cluster with simulated "
      "GPUs, from the utilisation profile each declares in the annotation scheduling.tessera.dev/gpu-utilisation "
      "(\"busy\", \"idle_after 2m\", \"warmup 20m\", \"bursty 15m/1h\"), for a Prometheus to scrape");
  cli::add_cluster_flags(*command, flags->cluster, false, false);
  command->add_option("--listen", flags->listen, "host:port to serve /metrics on")->capture_default_str();
  command->callback([flags, &exit_code] { exit_code = run_gpu_metrics(*flags); });
}

}  // namespace tessera
