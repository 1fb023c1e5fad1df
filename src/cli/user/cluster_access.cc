#include "cli/user/cluster_access.h"

#include <fmt/format.h>

#include <cstdio>

#include "kube/kubeconfig.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

// The prefix of an error that is already a whole line as kubectl would print it.
constexpr std::string_view kServerErrorPrefix = "Error from server";
// A request a person waits for: the API server answers a list in well under this.
constexpr double kRequestTimeoutSeconds = 30;

Result<json> answer(const Cluster& cluster, Result<kube::ApiResponse> response, bool absent_is_empty) {
  if (!response) {
    return Error{fmt::format("cannot reach the API server {}: {}", cluster.api->config().server,
                             response.error().message)};
  }
  if (absent_is_empty && response->status == 404) return json();
  if (!response->ok()) return Error{server_error_line(*response)};
  json body = response->json();
  return body.is_null() ? json::object() : body;
}

}  // namespace

void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool with_all_namespaces, bool with_output) {
  command.add_option("--kubeconfig", flags.kubeconfig,
                     "Kubeconfig file; default $KUBECONFIG, else ~/.kube/config, else the pod's service account");
  command.add_option("--context", flags.context, "Kubeconfig context; default its current-context");
  command.add_option("-n,--namespace", flags.namespace_name, "Namespace; default the context's");
  if (with_all_namespaces) {
    command.add_flag("-A,--all-namespaces", flags.all_namespaces, "Every namespace");
  }
  if (with_output) {
    command.add_option("-o,--output", flags.output, "table, wide, json or yaml")
        ->check(CLI::IsMember(std::vector<std::string>(std::begin(kOutputFormatNames), std::end(kOutputFormatNames))))
        ->capture_default_str();
  }
}

Result<Cluster> connect(const ClusterFlags& flags) {
  Result<kube::ClientConfig> config = flags.kubeconfig.empty()
                                          ? kube::load_default_config(flags.context)
                                          : kube::load_kubeconfig(flags.kubeconfig, flags.context);
  if (!config) return config.error();
  Cluster cluster;
  cluster.namespace_name = flags.namespace_name.empty() ? config->default_namespace : flags.namespace_name;
  if (cluster.namespace_name.empty()) cluster.namespace_name = "default";
  cluster.all_namespaces = flags.all_namespaces;
  cluster.output = parse_output_format(flags.output).value_or(OutputFormat::kTable);
  cluster.api = std::make_unique<kube::ApiClient>(std::move(*config));
  cluster.api->set_request_timeout(kRequestTimeoutSeconds);
  return cluster;
}

Result<json> Cluster::get(const std::string& path) const { return answer(*this, api->get(path), false); }

Result<json> Cluster::get_if_present(const std::string& path) const { return answer(*this, api->get(path), true); }

Result<json> Cluster::create(const std::string& path, const json& object) const {
  return answer(*this, api->post(path, object), false);
}

Result<json> Cluster::remove(const std::string& path) const {
  // As kubectl: the object goes now, what it owns after it (the garbage collector's work).
  return answer(*this, api->del(path + "?propagationPolicy=Background"), true);
}

std::string server_error_line(const kube::ApiResponse& response) {
  std::string reason = response.reason();
  if (reason.empty()) reason = fmt::format("HTTP {}", response.status);
  return fmt::format("{} ({}): {}", kServerErrorPrefix, reason, response.error_message());
}

std::string namespaced_path(const std::string& group_version, const std::string& namespace_name,
                            const std::string& resource, const std::string& name) {
  std::string path = fmt::format("{}/namespaces/{}/{}", group_version, namespace_name, resource);
  if (!name.empty()) path += "/" + name;
  return path;
}

std::string scope_path(const Cluster& cluster, const std::string& group_version, const std::string& resource) {
  if (cluster.all_namespaces) return fmt::format("{}/{}", group_version, resource);
  return namespaced_path(group_version, cluster.namespace_name, resource);
}

int report_failure(const Error& error) {
  const std::string& message = error.message;
  const std::string line = message.starts_with(kServerErrorPrefix) ? message : "error: " + message;
  std::fputs((line + "\n").c_str(), stderr);
  return 1;
}

}  // namespace tessera::cli
