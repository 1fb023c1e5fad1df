// An informer: a local cache of one kind of object, filled by a list and kept current by a
// watch (docs/design.md §8). It keeps the resourceVersion of the last event or bookmark, resumes the
// watch from it, relists on 410 Gone, and reconnects with exponential backoff. `synced()` is
// false until the first list is loaded and after a relist starts, so nobody acts on a
// half-filled cache.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kube/api_client.h"

namespace tessera::kube {

struct InformerOptions {
  // The collection, e.g. "/api/v1/pods", "/api/v1/nodes",
  // "/apis/scheduling.tessera.dev/v1alpha1/queues" (all namespaces).
  std::string collection_path;
  std::string label_selector;  // raw selector text, empty: all
  std::string field_selector;
  int list_page_size = 500;         // list in pages with limit/continue
  int watch_timeout_seconds = 300;  // asks the server to end each watch after about this long
  double backoff_initial_seconds = 0.2;
  double backoff_max_seconds = 10;
  // A kind the cluster may not serve (a custom resource whose CRD is not installed) or this
  // client may not list: a list answered 404 or 403 leaves the cache empty and synced, keeps the
  // answer in last_error(), and is tried again after `absent_recheck_seconds`.
  bool optional_kind = false;
  double absent_recheck_seconds = 30;
};

struct InformerStats {
  int64_t lists = 0;            // full lists, the first included
  int64_t relists_on_gone = 0;  // lists caused by 410 Gone
  int64_t watch_starts = 0;
  int64_t events = 0;  // ADDED/MODIFIED/DELETED applied
  int64_t bookmarks = 0;
  int64_t errors = 0;  // failed requests (each followed by a backoff)
};

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

class Informer {
 public:
  // `on_change` is called (from the informer's thread) after each applied event or list, before
  // synced() and resource_version() reflect it.
  Informer(ApiClient& client, InformerOptions options, std::function<void()> on_change = {});
  ~Informer();  // stops
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void start();
  void stop();

  bool synced() const;
  // Blocks until synced, `stop` is set, or `timeout_seconds` pass; returns synced().
  bool wait_for_sync(double timeout_seconds, const std::atomic<bool>* stop = nullptr) const;

  // The cached objects, keyed "namespace/name" (or "name" for cluster-scoped kinds). A copy
  // of the map of shared pointers: cheap, and consistent with itself.
  std::map<std::string, ObjectPtr> snapshot() const;
  std::string resource_version() const;  // of the last list, event or bookmark applied
  // Why the last list or watch failed ("list /api/v1/pods: HTTP 403: ..."), until a list
  // succeeds; empty when none failed. What a user needs when the cache does not sync, or why an
  // optional kind's cache is empty.
  std::string last_error() const;
  InformerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "namespace/name", or "name" when the object has no namespace.
std::string object_key(const nlohmann::json& object);

}  // namespace tessera::kube
