// How the user commands reach a cluster, as kubectl does: the flags every command shares
// (--kubeconfig, --context, -n/--namespace, -A/--all-namespaces, -o), the client they make, and
// requests whose failures read as one line a kubectl user recognises:
//   Error from server (Forbidden): pods is forbidden: User "x" cannot list resource ...
//   cannot reach the API server https://127.0.0.1:6443: GET /api/v1/...: Connection refused
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/user/output.h"
#include "core/result.h"
#include "kube/api_client.h"

namespace tessera::cli {

struct ClusterFlags {
  std::string kubeconfig;  // empty: $KUBECONFIG, else ~/.kube/config, else the in-cluster account
  std::string context;     // empty: the kubeconfig's current-context
  std::string namespace_name;  // empty: the context's namespace, else "default"
  bool all_namespaces = false;
  std::string output = "table";
};

// Adds the flags to `command`; `with_all_namespaces` and `with_output` for the commands that
// list things.
void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool with_all_namespaces, bool with_output);

// A connection to the cluster the flags name, and the namespace the command works in.
struct Cluster {
  std::unique_ptr<kube::ApiClient> api;
  std::string namespace_name;
  bool all_namespaces = false;
  OutputFormat output = OutputFormat::kTable;

  // The request's answer as JSON; an error that reads as one line for anything but 2xx.
  Result<nlohmann::json> get(const std::string& path) const;
  Result<nlohmann::json> create(const std::string& path, const nlohmann::json& object) const;
  // Deletes with background propagation; an object already gone (404) is an empty answer.
  Result<nlohmann::json> remove(const std::string& path) const;
  // As get(), but a 404 is an empty answer (a kind the cluster does not serve, an object gone).
  Result<nlohmann::json> get_if_present(const std::string& path) const;
};

Result<Cluster> connect(const ClusterFlags& flags);

// The one line for an answer that is not 2xx: kubectl's "Error from server (Reason): message".
std::string server_error_line(const kube::ApiResponse& response);

// A path under the namespace the command works in, or across namespaces with -A:
// scope_path(cluster, "/api/v1", "pods") is /api/v1/namespaces/NS/pods, or /api/v1/pods.
std::string scope_path(const Cluster& cluster, const std::string& group_version, const std::string& resource);
std::string namespaced_path(const std::string& group_version, const std::string& namespace_name,
                            const std::string& resource, const std::string& name = "");

inline constexpr const char* kTesseraGroupVersion = "/apis/scheduling.tessera.dev/v1alpha1";

// Prints the error as "error: MESSAGE" (or the server's line as it is) on stderr; returns 1.
int report_failure(const Error& error);

}  // namespace tessera::cli
