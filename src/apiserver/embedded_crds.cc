#include "apiserver/embedded_crds.h"

#include <fmt/format.h>

#include "apiserver/yaml_json.h"

extern "C" {
extern const char tessera_crd_queues_begin[];
extern const char tessera_crd_queues_end[];
extern const char tessera_crd_podgroups_begin[];
extern const char tessera_crd_podgroups_end[];
extern const char tessera_crd_topologies_begin[];
extern const char tessera_crd_topologies_end[];
}

namespace tessera::apiserver {

std::vector<std::string_view> embedded_crd_manifests() {
  return {std::string_view(tessera_crd_queues_begin,
                           static_cast<size_t>(tessera_crd_queues_end - tessera_crd_queues_begin)),
          std::string_view(tessera_crd_podgroups_begin,
                           static_cast<size_t>(tessera_crd_podgroups_end - tessera_crd_podgroups_begin)),
          std::string_view(tessera_crd_topologies_begin,
                           static_cast<size_t>(tessera_crd_topologies_end - tessera_crd_topologies_begin))};
}

Result<std::vector<nlohmann::json>> embedded_crds() {
  std::vector<nlohmann::json> crds;
  for (std::string_view manifest : embedded_crd_manifests()) {
    Result<std::vector<nlohmann::json>> documents = yaml_documents_to_json(manifest);
    if (!documents) return Error{fmt::format("built-in CRD manifest: {}", documents.error().message)};
    for (nlohmann::json& document : *documents) crds.push_back(std::move(document));
  }
  return crds;
}

}  // namespace tessera::apiserver
