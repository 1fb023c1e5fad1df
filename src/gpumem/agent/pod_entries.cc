#include "gpumem/agent/pod_entries.h"

#include <charconv>

#include "adapter/annotations.h"
#include "adapter/object_fields.h"
#include "adapter/object_translation.h"
#include "kube/informer.h"

namespace tessera::gpumem {
namespace {

const std::string* annotation(const Labels& annotations, std::string_view name) {
  const auto value = annotations.find(std::string(name));
  return value != annotations.end() ? &value->second : nullptr;
}

// A byte count; false (with `problem` set) when the annotation is there and not one.
bool read_bytes(const Labels& annotations, const std::string& key, std::string_view name, std::uint64_t* bytes,
                std::string* problem) {
  const std::string* text = annotation(annotations, name);
  if (text == nullptr) return true;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), *bytes);
  if (error == std::errc() && end == text->data() + text->size() && !text->empty()) return true;
  *problem = "pod " + key + ": annotation " + std::string(name) + " '" + *text +
             "' is not a number of bytes (Tessera writes it at binding from gpu-memory and gpu-memory-limit)";
  return false;
}

}  // namespace

PodEntries entries_for_pod(const nlohmann::json& pod) {
  PodEntries result;
  const auto annotations = adapter::ObjectFields(pod, "pod " + kube::object_key(pod)).string_map("metadata.annotations");
  if (!annotations) {
    result.problem = annotations.error().message;
    return result;
  }
  const std::string* request_text = annotation(*annotations, adapter::kGpuMemoryRequestBytesAnnotation);
  const std::string* limit_text = annotation(*annotations, adapter::kGpuMemoryLimitBytesAnnotation);
  if (request_text == nullptr && limit_text == nullptr) return result;
  auto info = adapter::pod_from_object(pod, GpuModelCatalog{});
  if (!info) {
    result.problem = info.error().message;
    return result;
  }
  if (info->phase == adapter::PodPhase::kSucceeded || info->phase == adapter::PodPhase::kFailed) return result;
  std::uint64_t request = 0, limit = 0;
  if (!read_bytes(*annotations, info->key, adapter::kGpuMemoryRequestBytesAnnotation, &request, &result.problem) ||
      !read_bytes(*annotations, info->key, adapter::kGpuMemoryLimitBytesAnnotation, &limit, &result.problem)) {
    return result;
  }
  if (limit_text == nullptr) limit = request;
  if (request > limit) {
    result.problem = "pod " + info->key + ": its GPU memory request (" + std::to_string(request) +
                     " bytes) is above its limit (" + std::to_string(limit) + " bytes)";
    return result;
  }
  // pod_from_object has checked the resolver's name already.
  Resolver resolver = Resolver::kWait;
  parse_resolver(info->gpu_memory_resolver, &resolver);
  if (info->gpu_indices.empty()) {
    result.problem = "pod " + info->key + ": GPU memory in bytes but no " + std::string(adapter::kGpuIndexAnnotation) +
                     " annotation naming its device";
    return result;
  }
  for (int device : info->gpu_indices) {
    if (device >= kMaxDevices) {
      result.problem = "pod " + info->key + ": device " + std::to_string(device) + " is past the ledger's " +
                       std::to_string(kMaxDevices) + " devices";
      result.entries.clear();
      return result;
    }
    EntrySpec spec;
    spec.uid = info->uid;
    spec.name = info->key;
    spec.device = device;
    spec.priority = info->spec.priority;
    spec.resolver = resolver;
    spec.request = request;
    spec.limit = limit;
    result.entries.push_back(spec);
  }
  return result;
}

}  // namespace tessera::gpumem
