#include "cli/user/object_reads.h"

#include <chrono>

#include "wire/timestamp.h"

namespace tessera::cli {

using nlohmann::json;

std::string text_at(const json& object, const char* pointer) {
  if (!object.is_object()) return "";
  const json value = object.value(json::json_pointer(pointer), json());
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::string object_key(const json& object) {
  return text_at(object, "/metadata/namespace") + "/" + text_at(object, "/metadata/name");
}

json condition_of(const json& object, std::string_view type) {
  if (!object.is_object()) return json();
  const json conditions = object.value("/status/conditions"_json_pointer, json::array());
  for (const json& condition : conditions.is_array() ? conditions : json::array()) {
    if (condition.is_object() && condition.value("type", "") == type) return condition;
  }
  return json();
}

double created_at(const json& object) {
  Result<double> time = wire::parse_time(text_at(object, "/metadata/creationTimestamp"));
  return time ? *time : 0;
}

double unix_now() { return std::chrono::duration<double>(wire::WallClock::now().time_since_epoch()).count(); }

bool holds_room(const json& pod) {
  const std::string phase = text_at(pod, "/status/phase");
  return !text_at(pod, "/spec/nodeName").empty() && phase != "Succeeded" && phase != "Failed";
}

const json& list_items(const json& list) {
  static const json kEmpty = json::array();
  if (!list.is_object()) return kEmpty;
  const auto items = list.find("items");
  return items != list.end() && items->is_array() ? *items : kEmpty;
}

}  // namespace tessera::cli
