#include "adapter/event_recorder.h"

#include <fmt/format.h>

#include <algorithm>

#include "adapter/object_translation.h"
#include "wire/timestamp.h"

namespace tessera::adapter {

namespace {

using nlohmann::json;

constexpr size_t kMaxNameLength = 253;

// FNV-1a: a stable hash (std::hash may differ between builds, and names must survive restarts).
uint64_t stable_hash(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Events about cluster-scoped objects (a Queue) live in "default", as Kubernetes' own do.
std::string event_namespace(const EventRecord& event) {
  return event.namespace_name.empty() ? "default" : event.namespace_name;
}

std::string events_path(const EventRecord& event) {
  return fmt::format("/api/v1/namespaces/{}/events", event_namespace(event));
}

std::string object_key_of(const EventRecord& event) {
  return event.namespace_name.empty() ? event.object_name : event.namespace_name + "/" + event.object_name;
}

}  // namespace

std::string event_name(const EventRecord& event) {
  const std::string suffix =
      fmt::format(".{:016x}", stable_hash(event.object_uid + "\n" + event.object_kind + "\n" + event.reason));
  const std::string prefix = event.object_name.substr(0, kMaxNameLength - suffix.size());
  return prefix + suffix;
}

EventRecorder::EventRecorder(kube::ApiClient& client, int threads, double min_update_seconds, FailureLog* failures)
    : client_(client), min_update_seconds_(min_update_seconds), failures_(failures), pool_(threads) {}

void EventRecorder::report(const EventRecord& event, const Result<kube::ApiResponse>& response) {
  if (!failures_) return;
  failures_->record("event",
                    fmt::format("writing the {} event of {} {}{}{}", event.reason, event.object_kind,
                                event.namespace_name, event.namespace_name.empty() ? "" : "/", event.object_name),
                    response);
}

EventRecorder::~EventRecorder() = default;

void EventRecorder::occurred(EventRecord event, double now) {
  const std::string name = event_name(event);
  enqueue(name, std::move(event), 1, now);
}

void EventRecorder::state(EventRecord event, double now) {
  const std::string name = event_name(event);
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(name);
    const Entry* entry = it == entries_.end() ? nullptr : &it->second;
    if (entry != nullptr && !entry->pending && entry->exists && entry->message == event.message) return;
    // Already on its way; a pending one that is not (its write failed) is sent again below.
    if (entry != nullptr && entry->busy && entry->pending && entry->pending->message == event.message) return;
  }
  enqueue(name, std::move(event), 0, now);
}

void EventRecorder::enqueue(const std::string& name, EventRecord event, int occurrences, double now) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[name];
  if (entry.name.empty()) {
    entry.name = name;
    entry.kind = event.object_kind;
    entry.object_key = object_key_of(event);
  }
  entry.pending = std::move(event);
  entry.pending_occurrences += occurrences;
  const bool due = !entry.exists || now - entry.written_at >= min_update_seconds_;
  if (entry.busy || !due) return;
  entry.busy = true;
  pool_.post([this, name, now] { flush(name, now); });
}

void EventRecorder::retry_pending(double now) {
  std::lock_guard lock(mutex_);
  for (auto& [name, entry] : entries_) {
    if (entry.busy || !entry.pending) continue;
    if (entry.exists && now - entry.written_at < min_update_seconds_) continue;
    entry.busy = true;
    pool_.post([this, name = name, now] { flush(name, now); });
  }
}

void EventRecorder::forget_unless(const std::function<bool(const std::string&, const std::string&)>& keep) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_,
                [&](const auto& item) { return !item.second.busy && !keep(item.second.kind, item.second.object_key); });
}

EventStats EventRecorder::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void EventRecorder::flush(const std::string& name, double now) {
  Entry copy;
  EventRecord event;
  int occurrences = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return;
    Entry& entry = it->second;
    if (!entry.pending) {
      entry.busy = false;
      return;
    }
    event = std::move(*entry.pending);
    occurrences = entry.pending_occurrences;
    entry.pending.reset();
    entry.pending_occurrences = 0;
    copy = entry;
  }
  const bool written = write(copy, event, occurrences, now);
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[name];
  entry.busy = false;
  if (written) {
    entry.exists = copy.exists;
    entry.count = copy.count;
    entry.message = copy.message;
    entry.written_at = copy.written_at;
    return;
  }
  ++stats_.failed;
  if (!entry.pending) entry.pending = std::move(event);  // a newer report, if any, wins
  entry.pending_occurrences += occurrences;
}

bool EventRecorder::write(Entry& entry, const EventRecord& event, int occurrences, double now) {
  const std::string time = wire::format_time(now);
  const int increment = std::max(occurrences, 1);
  // The server holds the event with `count` and this message now.
  const auto written = [&](int count, int64_t EventStats::*counter) {
    entry.exists = true;
    entry.count = count;
    entry.message = event.message;
    entry.written_at = now;
    std::lock_guard lock(mutex_);
    ++(stats_.*counter);
    return true;
  };
  // 1: updated; 0: the event is gone (404); -1: failed.
  const auto update = [&](int base_count) {
    const json patch = {{"count", base_count + increment}, {"message", event.message}, {"lastTimestamp", time}};
    auto response = client_.patch(fmt::format("{}/{}", events_path(event), entry.name), patch);
    if (response && response->status == 404) return 0;
    report(event, response);
    if (!response || !response->ok()) return -1;
    written(base_count + increment, &EventStats::updated);
    return 1;
  };
  if (entry.exists) {
    const int updated = update(entry.count);
    if (updated != 0) return updated > 0;
    entry.exists = false;  // deleted meanwhile (Events expire): write it anew
  }
  const json body = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", entry.name}, {"namespace", event_namespace(event)}}},
      {"involvedObject",
       {{"kind", event.object_kind},
        {"apiVersion", event.object_api_version},
        {"namespace", event.namespace_name},
        {"name", event.object_name},
        {"uid", event.object_uid}}},
      {"type", event.type},
      {"reason", event.reason},
      {"message", event.message},
      {"source", {{"component", "tessera-scheduler"}}},
      {"reportingComponent", "tessera-scheduler"},
      {"reportingInstance", "tessera-scheduler"},
      {"firstTimestamp", time},
      {"lastTimestamp", time},
      {"count", increment},
  };
  auto created = client_.post(events_path(event), body);
  if (!created || created->status != 409) report(event, created);
  if (created && created->ok()) return written(increment, &EventStats::created);
  if (!created || created->status != 409) return false;
  // Written before: by this scheduler before a restart, or by a create whose answer was lost.
  auto existing = client_.get(fmt::format("{}/{}", events_path(event), entry.name));
  report(event, existing);
  if (!existing || !existing->ok()) return false;
  const json object = existing->json();
  const int count = object.is_object() && object.contains("count") && object["count"].is_number_integer()
                        ? object["count"].get<int>()
                        : 1;
  // A state already reported (occurrences 0) is adopted as it is; anything else counts up.
  if (object.is_object() && object.value("message", "") == event.message && occurrences == 0) {
    return written(count, &EventStats::found);
  }
  return update(count) > 0;
}

}  // namespace tessera::adapter
