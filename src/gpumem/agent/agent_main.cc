// tessera-gpu-agent: the GPU memory ledger's keeper on one node (node_agent.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "core/stop_signal.h"
#include "gpumem/agent/node_agent.h"
#include "gpumem/pod_settings.h"
#include "kube/kubeconfig.h"

int main(int argc, char** argv) {
  tessera::StopSignal stop;
  tessera::gpumem::AgentOptions options;
  options.ledger_path = tessera::gpumem::kDefaultLedgerPath;
  if (const char* node = std::getenv("NODE_NAME")) options.node_name = node;
  std::string kubeconfig, context;
  CLI::App app{"tessera-gpu-agent: keeps a node's GPU memory ledger in line with its pods and serves its metrics"};
  app.add_option("--node", options.node_name, "this node's name (default: $NODE_NAME)");
  app.add_option("--ledger", options.ledger_path, "the ledger file the pods' interposer maps")->capture_default_str();
  app.add_option("--kubeconfig", kubeconfig, "default: $KUBECONFIG, ~/.kube/config, else the pod's service account");
  app.add_option("--context", context, "the kubeconfig's context to use");
  app.add_option("--listen", options.listen_address, "address for /metrics, /ledger and /healthz")
      ->capture_default_str();
  app.add_option("--port", options.port, "port for them (0: any free port)")->capture_default_str();
  app.add_option("--device-memory", options.device_memory_bytes,
                 "bytes of each device (default: the node's nvidia.com/gpu.memory label, MiB)");
  app.add_option("--devices", options.devices, "how many devices (default: the node's nvidia.com/gpu capacity)");
  app.add_option("--sync-interval", options.sync_interval_seconds, "seconds between syncs")->capture_default_str();
  app.add_option("--idle-after", options.idle_after_seconds,
                 "seconds without an allocation after which a pod's memory counts as idle (the priority resolver may "
                 "end it)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (options.node_name.empty()) {
    std::fprintf(stderr,
                 "tessera-gpu-agent: no node name: pass --node or set NODE_NAME (the downward API's spec.nodeName)\n");
    return 2;
  }
  auto config = kubeconfig.empty() ? tessera::kube::load_default_config(context)
                                   : tessera::kube::load_kubeconfig(kubeconfig, context);
  if (!config) {
    std::fprintf(stderr, "tessera-gpu-agent: %s\n", config.error().message.c_str());
    return 2;
  }
  tessera::kube::ApiClient client(*config);
  return tessera::gpumem::run_node_agent(client, options, stop.flag());
}
