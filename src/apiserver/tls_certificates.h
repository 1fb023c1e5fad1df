// The certificates of an HTTPS server made at start-up, in process: a self-signed CA, and a
// server certificate it signs for the addresses clients will use (SAN IPs and DNS names). Clients
// trust the CA through the kubeconfig's certificate-authority-data.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace tessera::apiserver {

struct ServerCertificates {
  std::string ca_certificate_pem;
  std::string server_certificate_pem;
  std::string server_private_key_pem;
};

// `ip_addresses` go into the SAN as IP entries, `dns_names` as DNS entries. Keys are ECDSA P-256.
Result<ServerCertificates> make_server_certificates(const std::vector<std::string>& ip_addresses,
                                                    const std::vector<std::string>& dns_names);

}  // namespace tessera::apiserver
