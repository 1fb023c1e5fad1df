#include "apiserver/object_store.h"

#include <fmt/format.h>

namespace tessera::apiserver {

const char* event_type_name(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "MODIFIED";
}

ObjectStore::ObjectStore(size_t history_limit) : history_limit_(std::max<size_t>(history_limit, 1)) {}

uint64_t ObjectStore::revision() const {
  std::lock_guard lock(mutex_);
  return revision_;
}

ObjectPtr ObjectStore::get(const std::string& resource, const std::string& namespace_name,
                           const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto objects = resources_.find(resource);
  if (objects == resources_.end()) return nullptr;
  auto found = objects->second.find(Key{namespace_name, name});
  return found == objects->second.end() ? nullptr : found->second;
}

ApiResult<ObjectList> ObjectStore::list(const std::string& resource, const std::string& namespace_name,
                                        uint64_t at) const {
  std::lock_guard lock(mutex_);
  if (at != 0 && at < compacted_) {
    return expired(fmt::format("too old resource version: {} ({})", at, compacted_));
  }
  Objects snapshot;
  if (auto objects = resources_.find(resource); objects != resources_.end()) {
    if (namespace_name.empty()) {
      snapshot = objects->second;
    } else {
      for (auto it = objects->second.lower_bound(Key{namespace_name, ""});
           it != objects->second.end() && it->first.first == namespace_name; ++it) {
        snapshot.insert(*it);
      }
    }
  }
  ObjectList result;
  result.revision = revision_;
  if (at != 0 && at < revision_) {
    // Undo, newest first, the changes made after `at`.
    for (auto event = history_.rbegin(); event != history_.rend() && event->revision > at; ++event) {
      if (event->resource != resource || (!namespace_name.empty() && event->namespace_name != namespace_name)) {
        continue;
      }
      const Key key{event->namespace_name, event->name};
      if (event->previous) {
        snapshot[key] = event->previous;
      } else {
        snapshot.erase(key);
      }
    }
    result.revision = at;
  }
  result.items.reserve(snapshot.size());
  for (auto& [key, object] : snapshot) result.items.push_back(object);
  return result;
}

ApiResult<ObjectPtr> ObjectStore::mutate(const std::string& resource, const std::string& namespace_name,
                                         const std::string& name, const Decision& decide, bool dry_run) {
  std::lock_guard lock(mutex_);
  Objects& objects = resources_[resource];
  const Key key{namespace_name, name};
  auto found = objects.find(key);
  ObjectPtr current = found == objects.end() ? nullptr : found->second;
  const uint64_t next_revision = revision_ + 1;
  ApiResult<Change> decision = decide(current, next_revision);
  if (!decision) return decision.error();
  Change& change = *decision;
  if (change.kind == Change::Kind::kKeep || (change.kind == Change::Kind::kRemove && !current)) return current;

  const std::string version = std::to_string(next_revision);
  if (change.kind == Change::Kind::kPut) {
    if (!dry_run) change.object["metadata"]["resourceVersion"] = version;
    auto stored = std::make_shared<const nlohmann::json>(std::move(change.object));
    if (dry_run) return ObjectPtr(stored);
    revision_ = next_revision;
    objects[key] = stored;
    record(StoredEvent{next_revision, current ? EventType::kModified : EventType::kAdded, resource, namespace_name,
                       name, stored, current});
    return ObjectPtr(stored);
  }

  nlohmann::json final_state = change.object.is_null() ? *current : std::move(change.object);
  if (dry_run) return ObjectPtr(std::make_shared<const nlohmann::json>(std::move(final_state)));
  final_state["metadata"]["resourceVersion"] = version;
  auto last = std::make_shared<const nlohmann::json>(std::move(final_state));
  revision_ = next_revision;
  objects.erase(key);
  record(StoredEvent{next_revision, EventType::kDeleted, resource, namespace_name, name, last, current});
  return ObjectPtr(last);
}

void ObjectStore::record(StoredEvent event) {
  history_.push_back(std::move(event));
  while (history_.size() > history_limit_) {
    compacted_ = history_.front().revision;
    history_.pop_front();
  }
  changed_.notify_all();
}

EventBatch ObjectStore::events_after(uint64_t after, std::chrono::milliseconds wait, size_t max_events) const {
  std::unique_lock lock(mutex_);
  const uint64_t wakeups = wakeups_;
  changed_.wait_for(lock, wait, [&] { return revision_ > after || wakeups_ != wakeups; });
  EventBatch batch;
  batch.compacted = compacted_;
  batch.revision = revision_;
  if (after < compacted_) {
    batch.expired = true;
    return batch;
  }
  if (history_.empty() || after >= revision_) return batch;
  // Every change records one event, so revisions in the history are consecutive.
  const uint64_t first = history_.front().revision;
  size_t index = after + 1 > first ? static_cast<size_t>(after + 1 - first) : 0;
  for (; index < history_.size() && batch.events.size() < max_events; ++index) {
    batch.events.push_back(history_[index]);
  }
  if (!batch.events.empty()) batch.revision = batch.events.back().revision;
  return batch;
}

void ObjectStore::wake_waiters() {
  std::lock_guard lock(mutex_);
  ++wakeups_;
  changed_.notify_all();
}

}  // namespace tessera::apiserver
