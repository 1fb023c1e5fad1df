#include "gpumem/pod_settings.h"

#include <cerrno>
#include <cstdlib>

#include "gpumem/ledger.h"

namespace tessera::gpumem {
namespace {

std::optional<std::uint64_t> read_bytes(const EnvironmentLookup& lookup, const char* variable,
                                        std::vector<std::string>& problems) {
  const char* text = lookup(variable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || *text == '-') {
    problems.push_back(std::string(variable) + "=" + text + ": not a number of bytes");
    return std::nullopt;
  }
  return value;
}

std::vector<int> read_device_list(const char* text) {
  std::vector<int> devices;
  if (text == nullptr) return devices;
  const char* cursor = text;
  while (*cursor != '\0') {
    char* end = nullptr;
    const long index = std::strtol(cursor, &end, 10);
    if (end == cursor || index < 0 || index >= kMaxDevices) return {};  // "all", UUIDs: ordinals are indices
    devices.push_back(static_cast<int>(index));
    cursor = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return {};
  }
  return devices;
}

}  // namespace

PodSettings read_pod_settings(const EnvironmentLookup& lookup) {
  PodSettings settings;
  if (const char* path = lookup("TESSERA_GPUMEM_LEDGER"); path != nullptr && *path != '\0') settings.ledger_path = path;
  if (const char* uid = lookup("TESSERA_POD_UID"); uid != nullptr) settings.uid = uid;
  if (const char* name = lookup("TESSERA_POD_NAME"); name != nullptr) settings.name = name;
  settings.limit = read_bytes(lookup, "TESSERA_GPU_MEMORY_LIMIT", settings.problems);
  settings.request = read_bytes(lookup, "TESSERA_GPU_MEMORY_REQUEST", settings.problems).value_or(0);
  if (settings.limit && settings.request > *settings.limit) {
    settings.problems.push_back(
        "TESSERA_GPU_MEMORY_REQUEST is above TESSERA_GPU_MEMORY_LIMIT: the request is cut to the limit");
    settings.request = *settings.limit;
  }
  if (const char* resolver = lookup("TESSERA_GPU_MEMORY_RESOLVER"); resolver != nullptr && *resolver != '\0') {
    if (!parse_resolver(resolver, &settings.resolver)) {
      settings.problems.push_back(std::string("TESSERA_GPU_MEMORY_RESOLVER=") + resolver +
                                  ": not wait, priority or swap; using wait");
    }
  }
  if (const char* priority = lookup("TESSERA_POD_PRIORITY"); priority != nullptr && *priority != '\0') {
    settings.priority = static_cast<std::int32_t>(std::strtol(priority, nullptr, 10));
  }
  settings.visible_devices = read_device_list(lookup("NVIDIA_VISIBLE_DEVICES"));
  settings.device_memory = read_bytes(lookup, "TESSERA_GPU_DEVICE_MEMORY", settings.problems).value_or(0);
  if (auto timeout = read_bytes(lookup, "TESSERA_GPUMEM_WAIT_TIMEOUT_MS", settings.problems)) {
    settings.wait_timeout_ns = static_cast<std::int64_t>(*timeout) * 1000000;
  }
  if (auto slice = read_bytes(lookup, "TESSERA_GPU_MEMORY_SWAP_SLICE_MS", settings.problems)) {
    settings.swap_slice_ns = static_cast<std::int64_t>(*slice) * 1000000;
  }
  return settings;
}

int node_device(const PodSettings& settings, int ordinal) {
  if (ordinal >= 0 && ordinal < static_cast<int>(settings.visible_devices.size())) {
    return settings.visible_devices[ordinal];
  }
  return ordinal;
}

}  // namespace tessera::gpumem
