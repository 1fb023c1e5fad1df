// The resources the server serves: the built-in ones and those CustomResourceDefinitions add.
// Thread-safe: CRDs are registered while requests are served.
#pragma once

#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "apiserver/resource_type.h"

namespace tessera::apiserver {

class ResourceRegistry {
 public:
  ResourceRegistry();  // the built-in resources

  std::optional<ResourceType> find(const std::string& group, const std::string& version,
                                   const std::string& plural) const;
  // Any served version of a resource, by storage key ("pods", "queues.scheduling.tessera.dev").
  std::optional<ResourceType> find_by_storage_key(const std::string& storage_key) const;
  std::vector<ResourceType> all() const;
  // The group/versions served, the core group's "v1" first, in registration order.
  std::vector<std::string> group_versions() const;

  // Replaces what the CRD named `crd_name` served before with `types`.
  void register_custom(const std::string& crd_name, std::vector<ResourceType> types);
  void unregister_custom(const std::string& crd_name);

 private:
  mutable std::shared_mutex mutex_;
  std::vector<ResourceType> types_;
};

}  // namespace tessera::apiserver
