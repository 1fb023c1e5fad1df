#include "apiserver/discovery.h"

#include <algorithm>
#include <map>
#include <vector>

namespace tessera::apiserver {

namespace {

using nlohmann::json;

json group_version_entry(const std::string& group, const std::string& version) {
  return {{"groupVersion", group + "/" + version}, {"version", version}};
}

// Groups in registration order, each with its versions in registration order.
std::vector<std::pair<std::string, std::vector<std::string>>> served_groups(const ResourceRegistry& registry) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const ResourceType& type : registry.all()) {
    if (type.group.empty()) continue;
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& entry) { return entry.first == type.group; });
    if (group == groups.end()) {
      groups.push_back({type.group, {}});
      group = groups.end() - 1;
    }
    if (std::find(group->second.begin(), group->second.end(), type.version) == group->second.end()) {
      group->second.push_back(type.version);
    }
  }
  return groups;
}

json group_entry(const std::string& name, const std::vector<std::string>& versions) {
  json list = json::array();
  for (const std::string& version : versions) list.push_back(group_version_entry(name, version));
  return {{"name", name}, {"versions", list}, {"preferredVersion", group_version_entry(name, versions.front())}};
}

// Protocol buffer wire format: field tags and length-delimited strings.
void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void append_bytes_field(std::string& out, uint32_t field, const std::string& bytes) {
  append_varint(out, (uint64_t{field} << 3) | 2);
  append_varint(out, bytes.size());
  out += bytes;
}

}  // namespace

json version_info() {
  return {{"major", "1"},
          {"minor", "27"},
          {"gitVersion", kServerGitVersion},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2024-01-01T00:00:00Z"},
          {"goVersion", "go1.20"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

json core_api_versions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

json api_group_list(const ResourceRegistry& registry) {
  json groups = json::array();
  for (const auto& [name, versions] : served_groups(registry)) groups.push_back(group_entry(name, versions));
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json> api_group(const ResourceRegistry& registry, const std::string& group) {
  for (const auto& [name, versions] : served_groups(registry)) {
    if (name != group) continue;
    json entry = group_entry(name, versions);
    entry["kind"] = "APIGroup";
    entry["apiVersion"] = "v1";
    return entry;
  }
  return std::nullopt;
}

std::optional<json> api_resource_list(const ResourceRegistry& registry, const std::string& group,
                                      const std::string& version) {
  json resources = json::array();
  for (const ResourceType& type : registry.all()) {
    if (type.group != group || type.version != version) continue;
    json entry = {{"name", type.plural},
                  {"singularName", type.singular},
                  {"namespaced", type.namespaced},
                  {"kind", type.kind},
                  {"verbs", type.verbs}};
    if (!type.short_names.empty()) entry["shortNames"] = type.short_names;
    if (!type.categories.empty()) entry["categories"] = type.categories;
    resources.push_back(std::move(entry));
    for (const Subresource& subresource : type.subresources) {
      json sub = {{"name", type.plural + "/" + subresource.name},
                  {"singularName", ""},
                  {"namespaced", type.namespaced},
                  {"kind", subresource.kind},
                  {"verbs", subresource.verbs}};
      if (!subresource.group.empty()) {
        sub["group"] = subresource.group;
        sub["version"] = subresource.version;
      }
      resources.push_back(std::move(sub));
    }
  }
  if (resources.empty()) return std::nullopt;
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", resources}};
}

std::string openapi_v2_protobuf() {
  // openapi.v2.Document{swagger = 1, info = 2}; Info{title = 1, version = 2} (gnostic's OpenAPIv2.proto).
  std::string info;
  append_bytes_field(info, 1, "Kubernetes");
  append_bytes_field(info, 2, kServerGitVersion);
  std::string document;
  append_bytes_field(document, 1, "2.0");
  append_bytes_field(document, 2, info);
  return document;
}

json openapi_v2_json() {
  return {{"swagger", "2.0"},
          {"info", {{"title", "Kubernetes"}, {"version", kServerGitVersion}}},
          {"paths", json::object()},
          {"definitions", json::object()}};
}

}  // namespace tessera::apiserver
