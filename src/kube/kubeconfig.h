// Where the API server is and how to authenticate to it: read from a kubeconfig file (the
// current context, or a named one) or from the in-cluster service account.
#pragma once

#include <string>

#include "core/result.h"

namespace tessera::kube {

struct ClientConfig {
  std::string server;  // "https://host:port" (or "http://" for a plain local server)
  // PEM text of the CA bundle that signs the server's certificate. Empty with https: the
  // system's trust store.
  std::string certificate_authority_pem;
  bool insecure_skip_tls_verify = false;  // only when the kubeconfig says so explicitly
  std::string client_certificate_pem;     // mutual TLS, both or neither
  std::string client_key_pem;
  std::string bearer_token;
  // A token file is re-read when it changes (projected service-account tokens rotate).
  std::string bearer_token_file;
  std::string default_namespace = "default";  // the context's namespace
};

// Reads `path` (a kubeconfig YAML); `context` empty: its current-context. File references in
// it (certificate-authority, client-certificate, client-key, tokenFile) are read relative to
// the kubeconfig's folder; *-data fields are base64. Errors name the file and the field.
Result<ClientConfig> load_kubeconfig(const std::string& path, const std::string& context = "");

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, and token, ca.crt and namespace
// under `account_dir`.
Result<ClientConfig> load_in_cluster_config(
    const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// The kubeconfig to use when none is given: $KUBECONFIG (its first entry), else ~/.kube/config
// if it exists, else the in-cluster account. `context` as for load_kubeconfig (a kubeconfig's
// context; the in-cluster account has none and ignores it).
Result<ClientConfig> load_default_config(const std::string& context = "");

}  // namespace tessera::kube
