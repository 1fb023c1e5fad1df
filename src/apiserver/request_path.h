// Where a REST request goes: /api/v1/... (the core group) or /apis/GROUP/VERSION/..., then
// [namespaces/NAMESPACE/]RESOURCE[/NAME[/SUBRESOURCE]], optionally after the legacy `watch/`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::apiserver {

struct ResourcePath {
  std::string group;
  std::string version;
  std::string namespace_name;  // empty: cluster scope, or every namespace
  std::string resource;
  std::string name;
  std::string subresource;
  bool legacy_watch = false;  // /api/v1/watch/...
};

// nullopt for a path that is not a resource path (discovery paths included).
std::optional<ResourcePath> parse_resource_path(std::string_view path);

}  // namespace tessera::apiserver
