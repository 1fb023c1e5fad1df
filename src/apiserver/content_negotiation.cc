#include "apiserver/content_negotiation.h"

#include <cctype>
#include <map>
#include <vector>

#include "apiserver/text.h"

namespace tessera::apiserver {

namespace {

struct MediaRange {
  std::string type;
  std::map<std::string, std::string> parameters;
};

MediaRange parse_media_range(std::string_view text) {
  MediaRange range;
  size_t semicolon = text.find(';');
  range.type = std::string(trim(text.substr(0, semicolon)));
  while (semicolon != std::string_view::npos) {
    text = text.substr(semicolon + 1);
    semicolon = text.find(';');
    const std::string_view parameter = trim(text.substr(0, semicolon));
    const size_t equals = parameter.find('=');
    if (equals == std::string_view::npos) continue;
    range.parameters[std::string(trim(parameter.substr(0, equals)))] = std::string(trim(parameter.substr(equals + 1)));
  }
  return range;
}

}  // namespace

std::optional<Output> negotiate_output(std::string_view accept) {
  if (trim(accept).empty()) return Output{};
  size_t start = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    const MediaRange range = parse_media_range(accept.substr(start, comma - start));
    start = comma + 1;
    const bool json = range.type == "application/json";
    if (range.type == "*/*" || range.type == "application/*") return Output{};
    if (!json) continue;
    auto as = range.parameters.find("as");
    if (as == range.parameters.end()) return Output{};
    const std::string group = range.parameters.contains("g") ? range.parameters.at("g") : "";
    const std::string version = range.parameters.contains("v") ? range.parameters.at("v") : "";
    if (group != "meta.k8s.io" || (version != "v1" && version != "v1beta1")) continue;
    if (as->second == "Table") return Output{OutputForm::kTable, version};
    if (as->second == "PartialObjectMetadata" || as->second == "PartialObjectMetadataList") {
      return Output{OutputForm::kMetadata, version};
    }
  }
  return std::nullopt;
}

std::optional<BodyFormat> body_format(std::string_view content_type) {
  const MediaRange range = parse_media_range(content_type);
  if (range.type.empty() || range.type == "application/json") return BodyFormat::kJson;
  if (range.type == "application/yaml") return BodyFormat::kYaml;
  return std::nullopt;
}

}  // namespace tessera::apiserver
