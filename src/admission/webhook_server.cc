#include "admission/webhook_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <filesystem>

#include "admission/admission_review.h"

namespace tessera::admission {

Result<std::unique_ptr<WebhookServer>> WebhookServer::bind(const WebhookServerOptions& options) {
  for (const std::string* file : {&options.certificate_file, &options.private_key_file}) {
    std::error_code error;
    if (file->empty() || !std::filesystem::is_regular_file(*file, error)) {
      return Error{fmt::format("webhook TLS file '{}' does not exist or is no file", *file)};
    }
  }
  std::unique_ptr<WebhookServer> server(new WebhookServer());
  server->https_ =
      std::make_unique<httplib::SSLServer>(options.certificate_file.c_str(), options.private_key_file.c_str());
  if (!server->https_->is_valid()) {
    return Error{fmt::format("webhook TLS: cannot load the certificate '{}' with the key '{}' (PEM, matching pair)",
                             options.certificate_file, options.private_key_file)};
  }
  const GpuMemoryLayout layout = options.layout;
  server->https_->Post("/mutate", [layout](const httplib::Request& request, httplib::Response& response) {
    const auto review = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    auto answer = review.is_discarded() ? Result<nlohmann::json>(Error{"AdmissionReview: the body is not JSON"})
                                        : review_gpu_memory(review, layout);
    if (!answer) {
      response.status = 400;
      response.set_content(answer.error().message + "\n", "text/plain");
      return;
    }
    response.set_content(answer->dump(), "application/json");
  });
  server->https_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  if (options.port == 0) {
    server->port_ = server->https_->bind_to_any_port(options.host);
  } else if (server->https_->bind_to_port(options.host, options.port)) {
    server->port_ = options.port;
  }
  if (server->port_ <= 0) return Error{fmt::format("webhook: cannot listen on {}:{}", options.host, options.port)};
  return server;
}

WebhookServer::~WebhookServer() = default;

void WebhookServer::serve() { https_->listen_after_bind(); }

bool WebhookServer::running() const { return https_->is_running(); }

void WebhookServer::stop() { https_->stop(); }

}  // namespace tessera::admission
