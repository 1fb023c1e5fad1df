#include "admission/gpu_memory_injection.h"

#include <fmt/format.h>

#include <set>
#include <string_view>

#include "adapter/annotations.h"

namespace tessera::admission {
namespace {

using nlohmann::json;

const json& field_or_null(const json& object, const char* name) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

json field_ref(std::string path) { return json{{"fieldRef", json{{"fieldPath", std::move(path)}}}}; }

json annotation_ref(std::string_view annotation) {
  return field_ref(fmt::format("metadata.annotations['{}']", annotation));
}

// The variables the interposer reads (src/gpumem/pod_settings.h), in the order they are added.
// The pod's priority has no downward-API field: the node agent reads it from the pod instead.
std::vector<json> interposer_variables(const GpuMemoryLayout& layout) {
  return {
      json{{"name", "LD_PRELOAD"}, {"value", layout.library_dir + "/" + layout.library_name}},
      json{{"name", "TESSERA_GPUMEM_LEDGER"}, {"value", layout.ledger_dir + "/" + layout.ledger_name}},
      json{{"name", "TESSERA_POD_UID"}, {"valueFrom", field_ref("metadata.uid")}},
      json{{"name", "TESSERA_POD_NAME"}, {"valueFrom", field_ref("metadata.name")}},
      json{{"name", "TESSERA_GPU_MEMORY_REQUEST"},
           {"valueFrom", annotation_ref(adapter::kGpuMemoryRequestBytesAnnotation)}},
      json{{"name", "TESSERA_GPU_MEMORY_LIMIT"},
           {"valueFrom", annotation_ref(adapter::kGpuMemoryLimitBytesAnnotation)}},
      json{{"name", "TESSERA_GPU_MEMORY_RESOLVER"},
           {"valueFrom", annotation_ref(adapter::kGpuMemoryResolverAnnotation)}},
      json{{"name", "TESSERA_GPU_MEMORY_SWAP_SLICE_MS"},
           {"valueFrom", annotation_ref(adapter::kGpuMemorySwapSliceAnnotation)}},
      json{{"name", "NVIDIA_VISIBLE_DEVICES"}, {"valueFrom", annotation_ref(adapter::kGpuIndexAnnotation)}},
  };
}

std::set<std::string> names_in(const json& list) {
  std::set<std::string> names;
  if (!list.is_array()) return names;
  for (const json& item : list) {
    const json& name = field_or_null(item, "name");
    if (name.is_string()) names.insert(name.get<std::string>());
  }
  return names;
}

// Adds `items` to the array at `path`: the array itself when the pod has none, else one append each.
void append_all(const std::string& path, const json& existing, const std::vector<json>& items, json& patch) {
  if (items.empty()) return;
  if (!existing.is_array()) {
    patch.push_back(json{{"op", "add"}, {"path", path}, {"value", items}});
    return;
  }
  for (const json& item : items) patch.push_back(json{{"op", "add"}, {"path", path + "/-"}, {"value", item}});
}

// LD_PRELOAD set as a value: the interposer goes first, so that its wrappers win over a library
// the pod preloads for its own reasons. A variable from valueFrom cannot be combined and is kept.
void prepend_preload(const json& env, const std::string& container_path, const std::string& library,
                     Injection& injection, const std::string& container_name) {
  for (std::size_t i = 0; i < env.size(); ++i) {
    if (field_or_null(env[i], "name") != "LD_PRELOAD") continue;
    const json& value = field_or_null(env[i], "value");
    if (!value.is_string()) {
      injection.warnings.push_back(
          fmt::format("container {}: LD_PRELOAD comes from valueFrom and is kept; GPU memory is not enforced in it",
                      container_name));
      return;
    }
    const auto current = value.get<std::string>();
    if (current.find(library) != std::string::npos) return;
    injection.patch.push_back(json{{"op", "replace"},
                                   {"path", fmt::format("{}/env/{}/value", container_path, i)},
                                   {"value", current.empty() ? library : library + ":" + current}});
    return;
  }
}

// `list` is "containers" or "initContainers": an init container may touch the GPU too (a model
// warm-up, a cache fill), and its allocations count against the same request and limit.
void inject_container(const json& container, const char* list, std::size_t index, const GpuMemoryLayout& layout,
                      Injection& injection) {
  const std::string path = fmt::format("/spec/{}/{}", list, index);
  const std::string name = field_or_null(container, "name").is_string()
                               ? field_or_null(container, "name").get<std::string>()
                               : std::to_string(index);
  const json& env = field_or_null(container, "env");
  const std::set<std::string> env_names = names_in(env);
  std::vector<json> variables;
  for (json& variable : interposer_variables(layout)) {
    if (!env_names.contains(variable["name"].get<std::string>())) variables.push_back(std::move(variable));
  }
  if (env_names.contains("LD_PRELOAD")) {
    prepend_preload(env, path, layout.library_dir + "/" + layout.library_name, injection, name);
  }
  append_all(path + "/env", env, variables, injection.patch);

  const json& mounts = field_or_null(container, "volumeMounts");
  std::set<std::string> mounted;  // volumes and paths the container already mounts
  if (mounts.is_array()) {
    for (const json& mount : mounts) {
      for (const char* key : {"name", "mountPath"}) {
        if (field_or_null(mount, key).is_string()) mounted.insert(field_or_null(mount, key).get<std::string>());
      }
    }
  }
  std::vector<json> new_mounts;
  if (!mounted.contains(kLibraryVolume) && !mounted.contains(layout.library_dir)) {
    new_mounts.push_back(json{{"name", kLibraryVolume}, {"mountPath", layout.library_dir}, {"readOnly", true}});
  }
  if (!mounted.contains(kLedgerVolume) && !mounted.contains(layout.ledger_dir)) {
    // Read-write: every GPU process charges the ledger and holds its liveness lock in it.
    new_mounts.push_back(json{{"name", kLedgerVolume}, {"mountPath", layout.ledger_dir}});
  } else if (!mounted.contains(kLedgerVolume)) {
    injection.warnings.push_back(
        fmt::format("container {}: {} is already mounted from another volume and is kept", name, layout.ledger_dir));
  }
  append_all(path + "/volumeMounts", mounts, new_mounts, injection.patch);
}

}  // namespace

bool wants_gpu_memory(const nlohmann::json& pod) {
  const json& spec = field_or_null(pod, "spec");
  if (field_or_null(spec, "schedulerName") != adapter::kSchedulerName) return false;
  const json& annotations = field_or_null(field_or_null(pod, "metadata"), "annotations");
  return annotations.is_object() && annotations.contains(adapter::kGpuMemoryAnnotation);
}

Injection gpu_memory_injection(const nlohmann::json& pod, const GpuMemoryLayout& layout) {
  Injection injection;
  if (!wants_gpu_memory(pod)) return injection;
  const json& spec = pod["spec"];
  for (const char* list : {"initContainers", "containers"}) {
    const json& containers = field_or_null(spec, list);
    if (!containers.is_array()) continue;
    for (std::size_t i = 0; i < containers.size(); ++i) inject_container(containers[i], list, i, layout, injection);
  }
  const json& volumes = field_or_null(spec, "volumes");
  const std::set<std::string> volume_names = names_in(volumes);
  std::vector<json> new_volumes;
  if (!volume_names.contains(kLibraryVolume)) {
    // Directory, not DirectoryOrCreate: on a node without the agent's library the pod does not
    // start (an event says why) rather than run with its limit unenforced.
    new_volumes.push_back(
        json{{"name", kLibraryVolume}, {"hostPath", json{{"path", layout.library_dir}, {"type", "Directory"}}}});
  }
  if (!volume_names.contains(kLedgerVolume)) {
    new_volumes.push_back(
        json{{"name", kLedgerVolume}, {"hostPath", json{{"path", layout.ledger_dir}, {"type", "DirectoryOrCreate"}}}});
  }
  append_all("/spec/volumes", volumes, new_volumes, injection.patch);
  return injection;
}

}  // namespace tessera::admission
