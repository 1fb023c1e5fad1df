// The kubeconfig a client needs to reach the server: one cluster (its URL and, with TLS, the CA
// as certificate-authority-data), one user (the bearer token), and the context `tessera-dev`,
// current, in namespace default. Written atomically: a temporary file renamed over the target.
#pragma once

#include <string>

#include "core/result.h"

namespace tessera::apiserver {

struct KubeconfigContents {
  std::string server_url;          // "https://127.0.0.1:6443"
  std::string ca_certificate_pem;  // empty for plain HTTP
  std::string token;               // empty: no user credentials
  std::string context = "tessera-dev";
  std::string namespace_name = "default";
};

std::string kubeconfig_yaml(const KubeconfigContents& contents);
// Writes with mode 0600 (it holds a credential).
Status write_kubeconfig(const std::string& path, const KubeconfigContents& contents);

}  // namespace tessera::apiserver
