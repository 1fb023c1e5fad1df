#include "apiserver/watch_stream.h"

#include <fmt/format.h>

#include "apiserver/api_error.h"
#include "apiserver/wire_json.h"

namespace tessera::apiserver {

WatchStream::WatchStream(ObjectStore& store, ResourceType type, WatchOptions options, Present present)
    : store_(store),
      type_(std::move(type)),
      options_(std::move(options)),
      present_(std::move(present)),
      last_bookmark_(std::chrono::steady_clock::now()) {}

bool WatchStream::selects(const ObjectPtr& object) const {
  if (!object) return false;
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& metadata = object->contains("metadata") ? (*object)["metadata"] : empty;
  return options_.labels.matches(metadata.value("labels", nlohmann::json::object())) &&
         options_.fields.matches(*object);
}

void WatchStream::append(std::string& out, const char* type, const nlohmann::json& object) const {
  out += wire_json(nlohmann::json{{"type", type}, {"object", object}});
  out += '\n';
}

bool WatchStream::next(std::string& out, std::chrono::milliseconds wait) {
  if (finished_) return false;
  if (!started_) {
    started_ = true;
    if (!options_.resource_version) {
      ApiResult<ObjectList> current = store_.list(type_.storage_key(), options_.namespace_name);
      position_ = current->revision;
      for (const ObjectPtr& object : current->items) {
        if (selects(object)) append(out, "ADDED", present_(type_, object));
      }
      if (!out.empty()) return true;
    } else {
      position_ = *options_.resource_version;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (now >= options_.deadline) {
    finished_ = true;
    return false;
  }
  const auto until_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline - now);
  EventBatch batch = store_.events_after(position_, std::min(wait, until_deadline + std::chrono::milliseconds(1)));
  if (batch.expired) {
    ApiError gone = expired(fmt::format("too old resource version: {} ({})", position_, batch.compacted));
    append(out, "ERROR", gone.to_status());
    finished_ = true;
    return true;
  }
  for (const StoredEvent& event : batch.events) {
    if (event.resource != type_.storage_key()) continue;
    if (!options_.namespace_name.empty() && event.namespace_name != options_.namespace_name) continue;
    const bool now_selected = event.type != EventType::kDeleted && selects(event.object);
    const bool was_selected =
        event.type == EventType::kDeleted ? selects(event.previous) || selects(event.object) : selects(event.previous);
    if (event.type == EventType::kDeleted) {
      if (was_selected) append(out, "DELETED", present_(type_, event.object));
    } else if (now_selected && was_selected) {
      append(out, "MODIFIED", present_(type_, event.object));
    } else if (now_selected) {
      append(out, "ADDED", present_(type_, event.object));
    } else if (was_selected) {
      append(out, "DELETED", present_(type_, event.object));
    }
  }
  position_ = std::max(position_, batch.revision);
  if (options_.bookmarks && std::chrono::steady_clock::now() - last_bookmark_ >= options_.bookmark_interval) {
    last_bookmark_ = std::chrono::steady_clock::now();
    append(out, "BOOKMARK",
           {{"kind", type_.kind},
            {"apiVersion", type_.api_version()},
            {"metadata", {{"resourceVersion", std::to_string(position_)}}}});
  }
  return true;
}

}  // namespace tessera::apiserver
