// tessera-gpu-agent: one per GPU node (deploy/gpu-agent.yaml). It watches the pods bound to its
// node, keeps the node's GPU memory ledger in line with them (ledger_sync.h), reclaims what ended
// processes held, and serves the ledger locally: /metrics (Prometheus), /ledger (text), /healthz.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "kube/api_client.h"

namespace tessera::gpumem {

struct AgentOptions {
  std::string node_name;
  std::string ledger_path;
  std::string listen_address = "0.0.0.0";
  int port = 9464;  // 0: any free port
  // Each device's memory and how many there are; 0: from the node (its nvidia.com/gpu.memory
  // label, in MiB, and its nvidia.com/gpu capacity).
  std::uint64_t device_memory_bytes = 0;
  int devices = 0;
  double sync_interval_seconds = 1.0;
  double node_refresh_seconds = 30.0;
  double idle_after_seconds = 600.0;  // a pod with use and no allocation for this long is idle
  // Set to the port once the agent listens (useful with port 0); may be null.
  std::atomic<int>* listening_port = nullptr;
};

// Runs until `stop`; 0 on a clean stop, 1 when the ledger cannot be opened or the port bound.
int run_node_agent(kube::ApiClient& client, const AgentOptions& options, const std::atomic<bool>& stop);

}  // namespace tessera::gpumem
