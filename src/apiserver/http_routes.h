// The HTTP face of the API: discovery and OpenAPI, then every resource path mapped onto
// ResourceApi (and watch streams), with responses encoded as the client asked (objects, Tables
// or metadata) and every failure as a metav1.Status.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>

#include "apiserver/fault_injector.h"
#include "apiserver/request_path.h"
#include "apiserver/resource_api.h"

namespace tessera::apiserver {

struct WatchLimits {
  std::chrono::seconds max_duration{1800};  // the real server's default request timeout for watches
  std::chrono::milliseconds bookmark_interval{60000};
  std::chrono::milliseconds poll{200};  // how often a waiting watch wakes (shutdown, deadlines)
  // Watches open at once; more get 429. Each holds a connection and its thread for its whole
  // length: the cap keeps threads (ConnectionLimits::max_connections) for other requests.
  size_t max_open = 2048;
};

class HttpRoutes {
 public:
  // `faults` null: none injected; it must outlive the routes.
  HttpRoutes(ResourceApi& api, WatchLimits limits, std::string server_address, FaultInjector* faults = nullptr);

  // Registers the handlers for every method on every path.
  void install(httplib::Server& server);
  // One request: under /debug/ the server's own state, anything else through the faults drawn.
  void serve(const httplib::Request& request, httplib::Response& response);
  void handle(const httplib::Request& request, httplib::Response& response);
  // Ends every watch stream at its next wake-up.
  void stop_watches() { stopping_ = true; }

 private:
  void handle_debug(const httplib::Request& request, httplib::Response& response);
  void handle_discovery(const httplib::Request& request, httplib::Response& response);
  void handle_resource(const httplib::Request& request, httplib::Response& response, const ResourcePath& path);
  void handle_read(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                   const ResourcePath& path);
  void handle_watch(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                    const ResourcePath& path);
  void handle_write(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                    const ResourcePath& path);
  void handle_delete(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                     const ResourcePath& path);

  ResourceApi& api_;
  const WatchLimits limits_;
  const std::string server_address_;
  FaultInjector* const faults_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_watches_{0};
};

}  // namespace tessera::apiserver
