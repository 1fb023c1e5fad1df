#include "apiserver/dev_cluster.h"

#include <fmt/format.h>

#include "apiserver/embedded_crds.h"
#include "apiserver/node_objects.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

DevCluster::DevCluster(DevClusterOptions options) : options_(std::move(options)) {
  // With kubelets, a running pod's deletion is graceful: they remove it once it has stopped
  // (unless stopping takes no time).
  options_.server.behaviour.graceful_pod_deletion =
      options_.kubelet && options_.kubelet_options.termination_delay.count() > 0;
}

DevCluster::~DevCluster() { stop(); }

Status DevCluster::start() {
  const std::shared_ptr<const ClusterSpec>& cluster = options_.nodes;
  Result<std::vector<nlohmann::json>> crds = std::vector<nlohmann::json>{};
  if (options_.install_crds) {
    crds = embedded_crds();
    if (!crds) return crds.error();
  }

  server_ = std::make_unique<ApiServer>(options_.server);
  if (Status started = server_->start(); !started) return started;
  ResourceApi& api = server_->api();
  const std::optional<ResourceType> crd_type =
      api.registry().find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  for (const nlohmann::json& crd : *crds) {
    ApiResult<ObjectPtr> created = api.create(*crd_type, "", crd);
    if (!created) return Error{fmt::format("installing the built-in CRDs: {}", created.error().message)};
  }
  if (cluster) {
    const std::optional<ResourceType> node_type = api.registry().find("", "v1", "nodes");
    const std::string now = wire::format_time(wire::WallClock::now());
    for (size_t i = 0; i < cluster->nodes.size(); ++i) {
      ApiResult<ObjectPtr> created =
          api.create(*node_type, "", node_object(cluster->nodes[i], cluster->models, i, now));
      if (!created) {
        return Error{fmt::format("node {}: {}", cluster->nodes[i].name, created.error().message)};
      }
    }
    node_count_ = cluster->nodes.size();
  }
  if (options_.kubelet) {
    kubelet_ = std::make_unique<KubeletSimulator>(api, options_.kubelet_options);
    kubelet_->start();
  }
  return Ok{};
}

void DevCluster::stop() {
  if (kubelet_) kubelet_->stop();
  if (server_) server_->stop();
}

}  // namespace tessera::apiserver
