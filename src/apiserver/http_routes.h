// The HTTP face of the API: discovery and OpenAPI, then every resource path mapped onto
// ResourceApi (and watch streams), with responses encoded as the client asked (objects, Tables
// or metadata) and every failure as a metav1.Status.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>

#include "apiserver/request_path.h"
#include "apiserver/resource_api.h"

namespace tessera::apiserver {

struct WatchLimits {
  std::chrono::seconds max_duration{1800};  // the real server's default request timeout for watches
  std::chrono::milliseconds bookmark_interval{60000};
  std::chrono::milliseconds poll{200};  // how often a waiting watch wakes (shutdown, deadlines)
};

class HttpRoutes {
 public:
  HttpRoutes(ResourceApi& api, WatchLimits limits, std::string server_address);

  // Registers the handlers for every method on every path.
  void install(httplib::Server& server);
  void handle(const httplib::Request& request, httplib::Response& response);
  // Ends every watch stream at its next wake-up.
  void stop_watches() { stopping_ = true; }

 private:
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
  std::atomic<bool> stopping_{false};
};

}  // namespace tessera::apiserver
