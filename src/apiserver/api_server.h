// The Kubernetes API server Tessera is tested against, in process: storage, REST semantics and
// watches (ResourceApi, WatchStream), discovery, served over HTTPS with a certificate made at
// start-up and bearer-token authentication, or over plain HTTP without authentication.
//
//   ApiServer server(ApiServerOptions{});
//   if (Status started = server.start(); !started) ...
//   // clients connect to server.url() with server.token() and server.ca_certificate_pem()
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "apiserver/connection_server.h"
#include "apiserver/fault_injector.h"
#include "apiserver/http_routes.h"
#include "apiserver/kubeconfig_writer.h"
#include "apiserver/object_store.h"
#include "apiserver/resource_api.h"
#include "apiserver/resource_registry.h"
#include "core/result.h"

namespace tessera::apiserver {

struct ApiServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port, see port()
  bool tls = true;
  bool authenticate = true;  // requests need `Authorization: Bearer TOKEN`
  std::string token;         // empty: a random one
  size_t watch_history = 10000;
  WatchLimits watch_limits = {};
  ApiBehaviour behaviour = {};
  ConnectionLimits connections = {};
  FaultOptions faults = {};  // none by default
  // Called for each request served ("GET /api/v1/pods?watch=1 200"); null: no log.
  std::function<void(const std::string&)> request_log = nullptr;
};

class ApiServer {
 public:
  explicit ApiServer(ApiServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Makes the certificates, creates the default namespaces, binds and starts serving.
  Status start();
  // Ends watches, stops serving and joins the server thread. Idempotent.
  void stop();

  int port() const { return port_; }
  std::string url() const;
  const std::string& token() const { return token_; }
  const std::string& ca_certificate_pem() const { return ca_certificate_pem_; }
  KubeconfigContents kubeconfig() const;

  ObjectStore& store() { return store_; }
  ResourceRegistry& registry() { return registry_; }
  ResourceApi& api() { return api_; }
  // What FaultOptions injected so far, by kind (also served at GET /debug/faults).
  nlohmann::json fault_counts() const { return faults_.counts(); }

 private:
  ApiServerOptions options_;
  std::string token_;
  std::string ca_certificate_pem_;
  int port_ = 0;
  ObjectStore store_;
  ResourceRegistry registry_;
  ResourceApi api_;
  FaultInjector faults_;
  std::unique_ptr<HttpRoutes> routes_;
  std::unique_ptr<ConnectionServer> http_;
  std::thread serving_;
};

// The namespaces a fresh cluster has.
inline const std::vector<std::string> kDefaultNamespaces = {"default", "kube-system", "kube-public", "kube-node-lease",
                                                            "tessera-system"};

}  // namespace tessera::apiserver
