// What a client asks to receive (Accept) and sends (Content-Type): plain JSON objects, a
// server-side printed Table (kubectl get), or only metadata (PartialObjectMetadata); bodies in
// JSON or YAML. Protobuf is not spoken: a client that accepts nothing else gets 406.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::apiserver {

enum class OutputForm { kObject, kTable, kMetadata };

struct Output {
  OutputForm form = OutputForm::kObject;
  std::string meta_version = "v1";  // of meta.k8s.io, for Table and PartialObjectMetadata
};

// nullopt when nothing in `accept` can be served.
std::optional<Output> negotiate_output(std::string_view accept);

enum class BodyFormat { kJson, kYaml };
// The format of a create or update body; nullopt for an unsupported Content-Type.
std::optional<BodyFormat> body_format(std::string_view content_type);
inline constexpr const char* kBodyContentTypes = "application/json, application/yaml";

}  // namespace tessera::apiserver
