#include "apiserver/request_path.h"

#include <vector>

namespace tessera::apiserver {

std::optional<ResourcePath> parse_resource_path(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) segments.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  ResourcePath result;
  size_t at = 0;
  if (segments.size() >= 2 && segments[0] == "api") {
    result.version = segments[1];
    at = 2;
  } else if (segments.size() >= 3 && segments[0] == "apis") {
    result.group = segments[1];
    result.version = segments[2];
    at = 3;
  } else {
    return std::nullopt;
  }
  if (at < segments.size() && segments[at] == "watch") {
    result.legacy_watch = true;
    ++at;
  }
  const size_t left = segments.size() - at;
  if (left == 0) return std::nullopt;
  auto segment = [&](size_t offset) { return segments[at + offset]; };
  if (segment(0) == "namespaces" && left >= 3) {
    // /namespaces/NAME/status and /finalize are the namespace's own subresources.
    if (left == 3 && result.group.empty() && (segment(2) == "status" || segment(2) == "finalize")) {
      result.resource = "namespaces";
      result.name = segment(1);
      result.subresource = segment(2);
      return result;
    }
    if (left > 5) return std::nullopt;
    result.namespace_name = segment(1);
    result.resource = segment(2);
    if (left >= 4) result.name = segment(3);
    if (left == 5) result.subresource = segment(4);
    return result;
  }
  if (left > 3) return std::nullopt;
  result.resource = segment(0);
  if (left >= 2) result.name = segment(1);
  if (left == 3) result.subresource = segment(2);
  return result;
}

}  // namespace tessera::apiserver
