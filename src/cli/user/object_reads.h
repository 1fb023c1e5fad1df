// Lenient reads of the objects the API server returned, for display: an absent field, or one of
// another type, reads as empty. (The scheduler reads strictly, adapter/object_fields.h; a listing
// shows what it can of an object it could not schedule.)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tessera::cli {

// The string at a JSON pointer ("/metadata/name"), or "".
std::string text_at(const nlohmann::json& object, const char* pointer);
// "namespace/name" (a cluster-scoped object: "/name").
std::string object_key(const nlohmann::json& object);
// The status condition of this type, or null.
nlohmann::json condition_of(const nlohmann::json& object, std::string_view type);
// metadata.creationTimestamp in Unix seconds; 0 without one.
double created_at(const nlohmann::json& object);
// The wall clock in Unix seconds, against which ages are shown.
double unix_now();
// Whether a pod holds room on a node: bound, and not finished.
bool holds_room(const nlohmann::json& pod);
// The items of a List answer (an empty array when there are none).
const nlohmann::json& list_items(const nlohmann::json& list);

}  // namespace tessera::cli
