// ObjectMeta chores the server does on every write: name rules, generated names and UIDs.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace tessera::apiserver {

// Why `name` is not a DNS-1123 subdomain (most kinds) or label (namespaces); nullopt when it is.
std::optional<std::string> dns_subdomain_problem(std::string_view name);
std::optional<std::string> dns_label_problem(std::string_view name);
// Custom resources only need a name that is a path segment.
std::optional<std::string> path_segment_problem(std::string_view name);

// Why `metadata` does not have the shape of an ObjectMeta (strings where strings go, maps of
// strings for labels and annotations...), worded as the real server's decoder words it; nullopt
// when it does.
std::optional<std::string> metadata_shape_problem(const nlohmann::json& metadata);
// Removes fields set to null, which a Go client's decoder reads as absent.
void drop_null_fields(nlohmann::json& metadata);

// Random UIDs and generateName suffixes. Thread-safe.
class IdSource {
 public:
  IdSource();
  std::string uid();                           // an RFC 4122 version 4 UUID
  std::string name_suffix(size_t length = 5);  // what the real server appends to generateName

 private:
  std::mutex mutex_;
  std::mt19937_64 random_;
};

// metadata.X of an object as a string, or "" when absent.
std::string meta_string(const nlohmann::json& object, const char* key);

}  // namespace tessera::apiserver
