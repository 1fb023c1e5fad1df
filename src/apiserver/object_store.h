// The server's storage, in memory, playing the part etcd plays for the real server: objects by
// resource, namespace and name; one revision counter for everything, stamped into each object's
// metadata.resourceVersion; and a bounded history of changes, which watches replay and which lets
// a list be served as of an earlier revision (pagination, resourceVersionMatch=Exact).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/api_error.h"

namespace tessera::apiserver {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

enum class EventType { kAdded, kModified, kDeleted };
const char* event_type_name(EventType type);  // "ADDED", "MODIFIED", "DELETED"

struct StoredEvent {
  uint64_t revision = 0;
  EventType type = EventType::kAdded;
  std::string resource;  // storage key
  std::string namespace_name;
  std::string name;
  ObjectPtr object;    // the new state; for DELETED the last state, stamped with the deletion's revision
  ObjectPtr previous;  // the state before; null for ADDED
};

struct ObjectList {
  uint64_t revision = 0;
  std::vector<ObjectPtr> items;  // in key order: namespace, then name
};

struct EventBatch {
  std::vector<StoredEvent> events;  // revision > the one asked for, in order
  uint64_t revision = 0;            // every change up to this revision is in `events` or before it
  bool expired = false;             // changes after the revision asked for have left the history
  uint64_t compacted = 0;           // the newest revision that has left the history
};

// What a mutation decides, seeing the current object.
struct Change {
  enum class Kind { kKeep, kPut, kRemove };
  Kind kind = Kind::kKeep;
  nlohmann::json object;  // kPut: the new state; kRemove: the final state (null: the current one)

  static Change keep() { return Change{Kind::kKeep, nullptr}; }
  static Change put(nlohmann::json object) { return Change{Kind::kPut, std::move(object)}; }
  static Change remove(nlohmann::json final_state = nullptr) { return Change{Kind::kRemove, std::move(final_state)}; }
};

class ObjectStore {
 public:
  explicit ObjectStore(size_t history_limit);

  uint64_t revision() const;

  ObjectPtr get(const std::string& resource, const std::string& namespace_name, const std::string& name) const;

  // The objects of a resource in one namespace (all namespaces when empty) as of revision `at`
  // (0: now). Fails with 410 Expired when changes after `at` have left the history.
  ApiResult<ObjectList> list(const std::string& resource, const std::string& namespace_name, uint64_t at = 0) const;

  // Reads and changes one object atomically: `decide` sees the current object (null when there
  // is none) and the revision the change will get. A put or a removal takes the next revision,
  // stamps it into metadata.resourceVersion and records an event. With `dry_run` nothing is
  // stored. Returns the stored object (for a removal its final state; for keep the current one).
  using Decision = std::function<ApiResult<Change>(const ObjectPtr& current, uint64_t next_revision)>;
  ApiResult<ObjectPtr> mutate(const std::string& resource, const std::string& namespace_name, const std::string& name,
                              const Decision& decide, bool dry_run = false);

  // Changes after revision `after`, waiting up to `wait` for the first one. At most `max_events`.
  EventBatch events_after(uint64_t after, std::chrono::milliseconds wait, size_t max_events = 2048) const;

  // Wakes every waiting events_after (at shutdown).
  void wake_waiters();

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name
  using Objects = std::map<Key, ObjectPtr>;

  void record(StoredEvent event);

  const size_t history_limit_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  uint64_t revision_ = 0;
  uint64_t compacted_ = 0;
  uint64_t wakeups_ = 0;
  std::map<std::string, Objects> resources_;
  std::deque<StoredEvent> history_;
};

}  // namespace tessera::apiserver
