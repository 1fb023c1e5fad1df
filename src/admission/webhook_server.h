// The HTTPS server of the GPU-memory admission webhook: POST /mutate takes an AdmissionReview and
// answers with review_gpu_memory's; GET /healthz answers "ok". The API server only calls webhooks
// over TLS, verifying the certificate against the configuration's caBundle.
#pragma once

#include <memory>
#include <string>

#include "admission/gpu_memory_injection.h"
#include "core/result.h"

namespace httplib {
class SSLServer;
}

namespace tessera::admission {

struct WebhookServerOptions {
  std::string host = "0.0.0.0";
  int port = 8443;               // 0: any free port (tests)
  std::string certificate_file;  // PEM: the server certificate (and any intermediates)
  std::string private_key_file;  // PEM
  GpuMemoryLayout layout;
};

class WebhookServer {
 public:
  // Loads the certificate and key and binds the port; an error names the file or the address.
  static Result<std::unique_ptr<WebhookServer>> bind(const WebhookServerOptions& options);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  int port() const { return port_; }
  // Serves until stop() is called from another thread, once serve() is running().
  void serve();
  bool running() const;
  void stop();

 private:
  WebhookServer() = default;

  std::unique_ptr<httplib::SSLServer> https_;
  int port_ = 0;
};

}  // namespace tessera::admission
