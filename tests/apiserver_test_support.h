// For the API server tests: an in-process server on a free port and a small HTTP client that
// speaks to it as Kubernetes clients do (JSON bodies, Status errors, watch streams).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/pem.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_server.h"

namespace tessera::apiserver::testing {

using nlohmann::json;

struct Reply {
  int status = 0;
  json body;
  std::string raw;
  std::string content_type;
  httplib::Headers headers;

  std::string header(const std::string& name) const {
    auto found = headers.find(name);
    return found == headers.end() ? "" : found->second;
  }
};

// A certificate store holding the one CA of `pem`, for httplib's set_ca_cert_store (which takes
// ownership of it).
inline X509_STORE* ca_store_from_pem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_free(ca);
  BIO_free(bio);
  return store;
}

class TestClient {
 public:
  explicit TestClient(const ApiServer& server, bool send_token = true) : client_(server.url()) {
    if (!server.ca_certificate_pem().empty()) {
      client_.set_ca_cert_store(ca_store_from_pem(server.ca_certificate_pem()));
      client_.enable_server_certificate_verification(true);
    }
    if (send_token) client_.set_bearer_token_auth(server.token());
    client_.set_read_timeout(std::chrono::seconds(30));
  }

  Reply get(const std::string& path, const httplib::Headers& headers = {}) { return reply(client_.Get(path, headers)); }
  Reply post(const std::string& path, const json& body) {
    return reply(client_.Post(path, body.dump(), "application/json"));
  }
  Reply post_raw(const std::string& path, const std::string& body, const std::string& content_type) {
    return reply(client_.Post(path, body, content_type));
  }
  Reply put(const std::string& path, const json& body) {
    return reply(client_.Put(path, body.dump(), "application/json"));
  }
  Reply patch(const std::string& path, const std::string& body, const std::string& content_type) {
    return reply(client_.Patch(path, body, content_type));
  }
  Reply del(const std::string& path, const json& options = nullptr) {
    return reply(options.is_null() ? client_.Delete(path) : client_.Delete(path, options.dump(), "application/json"));
  }

  // Reads a watch stream until `done` says so (given the events so far), the server ends it, or
  // `timeout` passes. Returns the events read.
  std::vector<json> watch(const std::string& path, const std::function<bool(const std::vector<json>&)>& done,
                          std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::vector<json> events;
    std::string pending;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    client_.Get(path, httplib::Headers{}, [&](const char* data, size_t length) {
      pending.append(data, length);
      for (size_t newline = pending.find('\n'); newline != std::string::npos; newline = pending.find('\n')) {
        events.push_back(json::parse(pending.substr(0, newline)));
        pending.erase(0, newline + 1);
      }
      return !done(events) && std::chrono::steady_clock::now() < deadline;
    });
    return events;
  }

  httplib::Client& raw() { return client_; }

 private:
  static Reply reply(const httplib::Result& result) {
    Reply out;
    if (!result) {
      ADD_FAILURE() << "request failed: " << httplib::to_string(result.error());
      return out;
    }
    out.status = result->status;
    out.raw = result->body;
    out.content_type = result->get_header_value("Content-Type");
    out.headers = result->headers;
    out.body = json::parse(result->body, nullptr, false);
    return out;
  }

  httplib::Client client_;
};

// Plain HTTP without authentication: what most tests need.
inline ApiServerOptions plain_options() {
  ApiServerOptions options;
  options.tls = false;
  options.authenticate = false;
  return options;
}

inline std::unique_ptr<ApiServer> start_server(ApiServerOptions options = plain_options()) {
  auto server = std::make_unique<ApiServer>(std::move(options));
  Status started = server->start();
  EXPECT_TRUE(started.ok()) << (started.ok() ? "" : started.error().message);
  return server;
}

inline json pod_manifest(const std::string& name, const json& labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox:1.36"}}}}}}};
}

// Waits up to `timeout` for `condition`, checking every 20 ms.
// A pods/binding body for `pod` onto `node`.
inline json binding(const std::string& pod, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", pod}}},
          {"target", {{"kind", "Node"}, {"name", node}}}};
}

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::seconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

}  // namespace tessera::apiserver::testing
