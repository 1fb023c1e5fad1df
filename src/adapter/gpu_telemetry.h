// GPU utilisation per pod, read from Prometheus' HTTP API (docs/kubernetes.md, "Idle GPUs"): the
// metric NVIDIA's dcgm-exporter publishes per device, DCGM_FI_DEV_GPU_UTIL, carries the namespace
// and pod of the pod the device is assigned to. One instant query per idle window gives, per pod,
// the highest of its devices' utilisation averaged over the window: what the idle-GPU limit reads.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tessera::adapter {

// The default query; `$window` becomes the rule's idle window ("300s"). A fractional pod shares
// its device, and dcgm-exporter reports the device's utilisation for each pod on it: such a pod
// counts as busy while any pod on its device is, so it is never stopped for a neighbour's idleness
// (nor for its own while a neighbour works).
inline constexpr std::string_view kDefaultUtilisationQuery =
    "max by (namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=\"\"}[$window]))";

// The query with `$window` replaced by the window in whole seconds ("300s").
std::string utilisation_query(std::string_view query_template, double window_seconds);

// An instant query's response ({"status": "success", "data": {"resultType": "vector", "result":
// [{"metric": {"namespace": ..., "pod": ...}, "value": [time, "42.5"]}, ...]}}) as "namespace/pod"
// -> utilisation in percent (the highest, where a pod has several series). Series without both
// labels are skipped. Errors say what was wrong: an error status with Prometheus' message, or a
// body that is not such a response.
Result<std::map<std::string, double>> parse_utilisation(std::string_view body);

// The Prometheus server at `url` ("http://prometheus:9090"). Each query is one HTTP GET of
// /api/v1/query; a server that does not answer within `timeout_seconds` is an error, never a wait.
class PrometheusClient {
 public:
  PrometheusClient(std::string url, double timeout_seconds);
  const std::string& url() const { return url_; }
  Result<std::map<std::string, double>> utilisation(const std::string& query) const;

 private:
  std::string url_;
  double timeout_seconds_;
};

}  // namespace tessera::adapter
