// The TLS side of a ClientConfig: its PEM text parsed into OpenSSL objects once, and the
// set-up of each httplib::SSLClient that uses them.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/kubeconfig.h"

namespace httplib {
class SSLClient;
}

namespace tessera::kube {

struct OpenSslFree {
  void operator()(X509* certificate) const;
  void operator()(EVP_PKEY* key) const;
  void operator()(STACK_OF(X509) * stack) const;
};
using X509Ptr = std::unique_ptr<X509, OpenSslFree>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree>;
using X509StackPtr = std::unique_ptr<STACK_OF(X509), OpenSslFree>;

// Every certificate in a PEM bundle; an error when there is none or one is malformed.
Result<std::vector<X509Ptr>> parse_certificates_pem(std::string_view pem);
Result<EvpPkeyPtr> parse_private_key_pem(std::string_view pem);

class TlsCredentials {
 public:
  static Result<std::unique_ptr<TlsCredentials>> create(const ClientConfig& config);

  // A client for host:port that verifies the server against the configured CA (and the
  // certificate's names against `host`) and presents the client certificate, if any. The
  // client refers to this object, which must outlive it.
  Result<std::unique_ptr<httplib::SSLClient>> make_client(const std::string& host, int port) const;

 private:
  TlsCredentials() = default;

  bool verify_server_ = true;
  X509StackPtr trusted_;  // null: the system's trust store
  X509Ptr client_certificate_;
  EvpPkeyPtr client_key_;
};

// The reasons in OpenSSL's error queue (which this empties), "; "-separated.
std::string drain_openssl_errors();

}  // namespace tessera::kube
