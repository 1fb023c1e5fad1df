#include "cli/bench_dashboard_command.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "cli/elapsed.h"
#include "cli/synthetic_world_flags.h"
#include "core/stop_signal.h"
#include "dashboard/dashboard_json.h"
#include "dashboard/dashboard_publisher.h"
#include "dashboard/dashboard_routes.h"
#include "dashboard/state_builder.h"
#include "policy/policy_registry.h"
#include "sim/statistics.h"
#include "sim/synthetic_cluster.h"

namespace tessera {

namespace {

struct DashboardBenchOptions {
  SyntheticSpec world = large_synthetic_world();
  int runs = 5;
  std::string serve;  // host:port; empty: print the figures and end
};

// Median wall seconds of `runs` calls of `work`.
double median_seconds(int runs, const std::function<void()>& work) {
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    work();
    seconds.push_back(seconds_since(start));
  }
  return median(seconds);
}

int serve_until_stopped(const dashboard::DashboardPublisher& publisher, const std::string& address,
                        const StopSignal& stop) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    fmt::print(stderr, "error: --serve: '{}' is not HOST:PORT\n", address);
    return 2;
  }
  httplib::Server server;
  dashboard::add_dashboard_routes(
      server, {[&] { return publisher.current(); }, dashboard::DashboardAuth::kLoopback, nullptr, [] { return 0.0; }});
  const std::string host = address.substr(0, colon);
  const int wanted = std::atoi(address.substr(colon + 1).c_str());
  const int port = wanted == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, wanted) ? wanted : -1);
  if (port < 0) {
    fmt::print(stderr, "error: --serve: cannot listen on {}\n", address);
    return 2;
  }
  std::thread thread([&] { server.listen_after_bind(); });
  fmt::print("serving http://{}:{}/ui/ until stopped\n", host, port);
  std::fflush(stdout);
  while (!stop.stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.stop();
  thread.join();
  return 0;
}

int run_dashboard_bench(const DashboardBenchOptions& options, const StopSignal& stop) {
  const SyntheticWorld world = make_synthetic_world(options.world);
  Result<LoadedWorld> loaded = load_world(world, kDefaultPolicy);
  if (!loaded) {
    fmt::print(stderr, "error: {}\n", loaded.error().message);
    return 2;
  }
  CarriedState carried;
  CycleInputs inputs = loaded->inputs();
  inputs.carried = &carried;
  Result<CycleResult> cycle = run_cycle(inputs);
  if (!cycle) {
    fmt::print(stderr, "error: {}\n", cycle.error().message);
    return 2;
  }
  std::vector<std::string> keys;
  for (size_t id = 0; id < loaded->workloads->size(); ++id) {
    keys.push_back(fmt::format("ns-{}/{}", id % 50, (*loaded->workloads)[static_cast<WorkloadId>(id)].spec.name));
  }
  const dashboard::CycleFacts facts{*loaded->cluster, *loaded->workloads, *loaded->queues, *loaded->meter, *cycle, keys,
                                    world.mix,        loaded->now};
  fmt::print(
      "Dashboard on a synthetic cluster — {} nodes × 8 GPUs, {} queues; {} running pods, {} pending workloads after "
      "one cycle; median of {} runs\n",
      options.world.nodes, loaded->queues->size(), world.running_pods, cycle->pending.size(), options.runs);
  dashboard::CycleRows rows;
  fmt::print("{:<34} {:>10}\n", "build (cycle thread)", "time");
  auto timed = [&](const char* what, const std::function<void()>& work) {
    fmt::print("{:<34} {:>7.1f} ms\n", what, median_seconds(options.runs, work) * 1000);
  };
  timed("queue rows", [&] { rows.queues = dashboard::queue_rows(facts); });
  timed("node rows (GPU map, FGD)", [&] { rows.nodes = dashboard::node_rows(facts); });
  timed("pending rows (reasons)", [&] { rows.pending = dashboard::pending_rows(facts); });
  rows.now = loaded->now;
  dashboard::DashboardPublisher publisher;
  // Published as the scheduler does, by move: the copies are made before the clock starts.
  std::vector<dashboard::CycleRows> copies(static_cast<size_t>(options.runs), rows);
  size_t next = 0;
  timed("publish (history, swap)", [&] { publisher.publish(std::move(copies[next++])); });
  const std::shared_ptr<const dashboard::DashboardState> state = publisher.current();

  fmt::print("{:<34} {:>10} {:>10}\n", "endpoint (render + serialise)", "bytes", "time");
  auto endpoint = [&](const std::string& name, const std::function<nlohmann::json()>& render) {
    std::string body;
    const double seconds = median_seconds(options.runs, [&] { body = render().dump(); });
    fmt::print("{:<34} {:>10} {:>7.1f} ms\n", name, body.size(), seconds * 1000);
  };
  endpoint("/ui/api/overview", [&] { return dashboard::overview_json(*state); });
  endpoint("/ui/api/queues", [&] { return dashboard::queues_json(*state); });
  endpoint("/ui/api/nodes?limit=120 (a page)",
           [&] { return dashboard::nodes_json(*state, {.offset = 0, .limit = 120, .match = ""}); });
  endpoint("/ui/api/nodes?limit=2000 (largest)",
           [&] { return dashboard::nodes_json(*state, {.offset = 0, .limit = dashboard::kMaxPageRows, .match = ""}); });
  endpoint("/ui/api/workloads?limit=200",
           [&] { return dashboard::workloads_json(*state, {.offset = 0, .limit = 200, .match = ""}); });
  std::fflush(stdout);
  if (options.serve.empty()) return 0;
  return serve_until_stopped(publisher, options.serve, stop);
}

}  // namespace

void add_bench_dashboard_command(CLI::App& bench, int& exit_code) {
  auto options = std::make_shared<DashboardBenchOptions>();
  CLI::App* command = bench.add_subcommand(
      "dashboard",
      "Time building the scheduler's dashboard after one cycle on a synthetic cluster, and print each /ui/api "
      "endpoint's JSON size and render time");
  add_synthetic_world_flags(*command, options->world, "Seed of the world");
  command->add_option("--runs", options->runs, "Runs per figure (the median is printed)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  command->add_option("--serve", options->serve,
                      "Then serve the dashboard of that cluster at HOST:PORT/ui/ (loopback only; port 0: any) "
                      "until stopped, for a browser to load");
  command->callback([options, &exit_code] {
    StopSignal stop;
    exit_code = run_dashboard_bench(*options, stop);
  });
}

}  // namespace tessera
