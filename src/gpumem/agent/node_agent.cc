#include "gpumem/agent/node_agent.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "adapter/object_translation.h"
#include "gpumem/agent/ledger_metrics.h"
#include "gpumem/agent/ledger_sync.h"
#include "gpumem/agent/pod_entries.h"
#include "gpumem/ledger_report.h"
#include "kube/informer.h"

namespace tessera::gpumem {
namespace {

void log_line(const std::string& text) {
  std::fprintf(stderr, "tessera-gpu-agent: %s\n", text.c_str());
  std::fflush(stderr);
}

// Each device's memory: the options', else the node's (its label in MiB, as GPU feature discovery
// publishes it). Empty when neither says.
std::vector<std::uint64_t> device_capacities(kube::ApiClient& client, const AgentOptions& options) {
  if (options.device_memory_bytes > 0 && options.devices > 0) {
    return std::vector<std::uint64_t>(options.devices, options.device_memory_bytes);
  }
  auto response = client.get("/api/v1/nodes/" + options.node_name);
  if (!response || !response->ok()) {
    log_line("cannot read node " + options.node_name + ": " +
             (response ? response->error_message() : response.error().message));
    return {};
  }
  GpuModelCatalog models;
  auto node = adapter::node_from_object(response->json(), models);
  if (!node) {
    log_line(node.error().message);
    return {};
  }
  std::vector<std::uint64_t> capacities;
  for (const GpuDevice& device : node->gpus) {
    const std::uint64_t bytes =
        options.device_memory_bytes > 0 ? options.device_memory_bytes : static_cast<std::uint64_t>(device.memory_bytes);
    capacities.push_back(bytes);
  }
  if (options.devices > 0) capacities.resize(options.devices, options.device_memory_bytes);
  return capacities;
}

}  // namespace

int run_node_agent(kube::ApiClient& client, const AgentOptions& options, const std::atomic<bool>& stop) {
  std::string error;
  auto ledger = Ledger::open(options.ledger_path, &error);
  if (!ledger) {
    log_line(error);
    return 1;
  }
  ledger->layout().idle_after_ns = static_cast<std::int64_t>(options.idle_after_seconds * 1e9);
  std::mutex counters_mutex;
  AgentCounters counters;

  httplib::Server http;
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& response) {
    AgentCounters copy;
    {
      std::lock_guard lock(counters_mutex);
      copy = counters;
    }
    response.set_content(ledger_metrics(*ledger, copy), "text/plain; version=0.0.4");
  });
  http.Get("/ledger", [&](const httplib::Request&, httplib::Response& response) {
    response.set_content(ledger_report(*ledger), "text/plain");
  });
  http.Get("/healthz",
           [](const httplib::Request&, httplib::Response& response) { response.set_content("ok\n", "text/plain"); });
  const int port = options.port == 0 ? http.bind_to_any_port(options.listen_address)
                                     : (http.bind_to_port(options.listen_address, options.port) ? options.port : -1);
  if (port < 0) {
    log_line("cannot listen on " + options.listen_address + ":" + std::to_string(options.port));
    return 1;
  }
  std::thread server([&] { http.listen_after_bind(); });
  if (options.listening_port != nullptr) options.listening_port->store(port);
  log_line("node " + options.node_name + ", ledger " + options.ledger_path + ", serving on port " +
           std::to_string(port));

  kube::InformerOptions pods;
  pods.collection_path = "/api/v1/pods";
  pods.field_selector = "spec.nodeName=" + options.node_name;
  kube::Informer informer(client, pods);
  informer.start();

  std::vector<std::uint64_t> capacities;
  auto capacities_read_at = std::chrono::steady_clock::time_point{};
  std::set<std::string> reported;  // problems already logged, each once
  while (!stop) {
    const auto now = std::chrono::steady_clock::now();
    if (capacities.empty() || now - capacities_read_at > std::chrono::duration<double>(options.node_refresh_seconds)) {
      capacities = device_capacities(client, options);
      capacities_read_at = now;
    }
    if (informer.synced()) {
      std::vector<EntrySpec> desired;
      std::uint64_t problems = 0;
      for (const auto& [key, pod] : informer.snapshot()) {
        PodEntries entries = entries_for_pod(*pod);
        desired.insert(desired.end(), entries.entries.begin(), entries.entries.end());
        if (!entries.problem.empty()) {
          ++problems;
          if (reported.insert(entries.problem).second) log_line(entries.problem);
        }
      }
      const SyncReport report = sync_ledger(*ledger, desired, capacities);
      if (report.entries_not_written > 0) {
        log_line("the ledger's entry table is full: " + std::to_string(report.entries_not_written) +
                 " entries not written");
      }
      std::lock_guard lock(counters_mutex);
      counters.reclaimed_bytes += report.reclaimed_bytes;
      counters.pod_problems = problems;
      ++counters.syncs;
    }
    for (int step = 0; step < 10 && !stop; ++step) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options.sync_interval_seconds / 10));
    }
  }
  informer.stop();
  http.stop();
  server.join();
  return 0;
}

}  // namespace tessera::gpumem
