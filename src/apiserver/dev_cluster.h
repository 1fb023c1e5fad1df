// The local playground behind `tessera dev cluster`: the API server with simulated GPU nodes
// (a cluster description, which the caller reads from a file as `tessera sim` does), Tessera's
// CRDs preinstalled, and simulated kubelets that run bound pods. A library class so that tests
// and benchmarks can run it in process.
#pragma once

#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "apiserver/kubelet_simulator.h"
#include "core/cluster.h"
#include "core/result.h"

namespace tessera::apiserver {

struct DevClusterOptions {
  ApiServerOptions server = {};
  std::shared_ptr<const ClusterSpec> nodes;  // null: no nodes
  bool install_crds = true;
  bool kubelet = true;
  KubeletOptions kubelet_options = {};
};

class DevCluster {
 public:
  explicit DevCluster(DevClusterOptions options);
  ~DevCluster();

  // Starts the server and creates everything (an error names the node it could not create).
  Status start();
  void stop();

  ApiServer& server() { return *server_; }
  size_t node_count() const { return node_count_; }

 private:
  DevClusterOptions options_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<KubeletSimulator> kubelet_;
  size_t node_count_ = 0;
};

}  // namespace tessera::apiserver
