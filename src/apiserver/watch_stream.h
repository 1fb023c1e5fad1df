// One watch: the events of a resource (in one namespace or all, through label and field
// selectors) after a resourceVersion, as the lines of a `?watch=1` response:
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}.
//
// As on the real server: without a resourceVersion (or with "0") the watch starts with the
// current objects as ADDED events; an object that stops (starts) matching the selectors arrives
// as DELETED (ADDED); a resourceVersion older than the history gets one ERROR event, a Status
// 410 Expired "too old resource version: X (Y)", and the end; bookmarks, when asked for, carry
// the resourceVersion the watch has reached.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "apiserver/object_store.h"
#include "apiserver/resource_type.h"
#include "apiserver/selectors.h"

namespace tessera::apiserver {

struct WatchOptions {
  std::string namespace_name;  // empty: every namespace
  LabelSelector labels;
  FieldSelector fields;
  std::optional<uint64_t> resource_version;  // nullopt: start with the current objects
  bool bookmarks = false;
  std::chrono::milliseconds bookmark_interval{60000};
  std::chrono::steady_clock::time_point deadline;
};

class WatchStream {
 public:
  // How an object goes on the wire (as is, or as a Table for `kubectl get -w`).
  using Present = std::function<nlohmann::json(const ResourceType& type, const ObjectPtr& object)>;

  WatchStream(ObjectStore& store, ResourceType type, WatchOptions options, Present present);

  // Appends the next event lines to `out`, waiting up to `wait` for one. False once the stream
  // is over (its deadline passed, or after an ERROR event).
  bool next(std::string& out, std::chrono::milliseconds wait);

 private:
  bool selects(const ObjectPtr& object) const;
  void append(std::string& out, const char* type, const nlohmann::json& object) const;

  ObjectStore& store_;
  const ResourceType type_;
  const WatchOptions options_;
  const Present present_;
  uint64_t position_ = 0;  // every change up to this revision has been considered
  bool started_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_bookmark_;
};

}  // namespace tessera::apiserver
