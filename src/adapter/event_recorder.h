// Events as Kubernetes' own components write them: one Event object per object and reason,
// whose count and lastTimestamp grow when it happens again, instead of a new object each time.
// The name is derived from the object's uid and the reason, so a restarted scheduler finds the
// Event it wrote before (409 on create) and updates it rather than writing a second one.
//
// Nothing is taken as written until the API server has said so: a failed write stays pending
// and is tried again by the next report or by retry_pending(). Updates of one event are spaced
// by `min_update_seconds`, so a message that changes every cycle (live numbers in a waiting
// reason) costs one write per interval, not one per cycle.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "adapter/failure_log.h"
#include "adapter/task_pool.h"
#include "kube/api_client.h"

namespace tessera::adapter {

struct EventRecord {
  std::string namespace_name;
  std::string object_kind;  // "Pod", "PodGroup", "Queue"
  std::string object_api_version;
  std::string object_name;
  std::string object_uid;
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

// The Event's name: the object's name and a hash of its uid and the reason (a valid name of
// at most 253 characters).
std::string event_name(const EventRecord& event);

// What the recorder has done, for metrics and tests.
struct EventStats {
  int64_t created = 0;  // Event objects created
  int64_t updated = 0;  // count/message updates of existing ones
  int64_t failed = 0;   // writes that failed (kept pending)
  int64_t found = 0;    // already on the server as reported (written before a restart)
};

class EventRecorder {
 public:
  // Writes run on `threads` threads of its own; failed writes are told to `failures` (if set).
  EventRecorder(kube::ApiClient& client, int threads, double min_update_seconds = 30, FailureLog* failures = nullptr);
  ~EventRecorder();

  // Something happened (again): the event's count grows by one.
  void occurred(EventRecord event, double now);
  // The object is in a state described by the message (e.g. why a pod waits): written when the
  // message differs from the one last written, never just because it is reported again.
  void state(EventRecord event, double now);
  // Sends what failed before (call once a cycle).
  void retry_pending(double now);
  // Forgets the events of objects for which `keep(kind, "namespace/name")` is false.
  void forget_unless(const std::function<bool(const std::string& kind, const std::string& key)>& keep);

  EventStats stats() const;

 private:
  struct Entry {
    std::string name;
    std::string kind;
    std::string object_key;
    bool exists = false;      // written, or found on the server
    int count = 0;            // as on the server
    std::string message;      // as on the server
    double written_at = -1e300;
    bool busy = false;        // a write is queued or under way
    std::optional<EventRecord> pending;
    int pending_occurrences = 0;
  };

  void enqueue(const std::string& name, EventRecord event, int occurrences, double now);
  void flush(const std::string& name, double now);
  // One write of `event` for `entry_state` (a copy): create, or update count and message.
  bool write(Entry& entry_state, const EventRecord& event, int occurrences, double now);

  // A failed write of `event` told to failures_, if set.
  void report(const EventRecord& event, const Result<kube::ApiResponse>& response);

  kube::ApiClient& client_;
  const double min_update_seconds_;
  FailureLog* failures_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // by event name
  EventStats stats_;
  TaskPool pool_;  // last: its threads stop before what they use goes
};

}  // namespace tessera::adapter
