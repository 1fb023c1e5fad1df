#include "gpumem/agent/ledger_metrics.h"

#include <vector>

namespace tessera::gpumem {
namespace {

struct Family {
  const char* name;
  const char* type;
  const char* help;
  std::string samples;
};

// A label value as the text format wants it: backslash, quote and newline escaped.
std::string escaped(const char* text) {
  std::string out;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c == '\\' || *c == '"') out += '\\';
    if (*c == '\n') {
      out += "\\n";
      continue;
    }
    out += *c;
  }
  return out;
}

void sample(Family& family, const std::string& labels, std::uint64_t value) {
  family.samples += std::string(family.name) + "{" + labels + "} " + std::to_string(value) + "\n";
}

}  // namespace

std::string ledger_metrics(Ledger& ledger, const AgentCounters& counters) {
  std::vector<Family> device_families = {
      {"tessera_gpu_memory_device_capacity_bytes", "gauge", "Memory of the device the ledger shares out.", ""},
      {"tessera_gpu_memory_device_used_bytes", "gauge", "Memory charged on the device now.", ""},
      {"tessera_gpu_memory_device_committed_bytes", "gauge",
       "Sum over the device's pods of the larger of use and request: requests are reserved.", ""},
      {"tessera_gpu_memory_device_peak_used_bytes", "gauge", "Highest charge the device has had.", ""}};
  std::vector<Family> pod_families = {
      {"tessera_gpu_memory_pod_used_bytes", "gauge", "Memory the pod's processes hold on the device.", ""},
      {"tessera_gpu_memory_pod_request_bytes", "gauge", "The pod's request: always granted.", ""},
      {"tessera_gpu_memory_pod_limit_bytes", "gauge", "The pod's limit: never passed.", ""},
      {"tessera_gpu_memory_pod_peak_used_bytes", "gauge", "Highest use the pod has had on the device.", ""},
      {"tessera_gpu_memory_pod_grants_total", "counter", "Allocations granted.", ""},
      {"tessera_gpu_memory_pod_waits_total", "counter", "Allocations that collided and waited for memory.", ""},
      {"tessera_gpu_memory_pod_wait_timeouts_total", "counter",
       "Allocations refused after waiting their whole timeout.", ""},
      {"tessera_gpu_memory_pod_limit_refusals_total", "counter", "Allocations refused for passing the limit.", ""},
      {"tessera_gpu_memory_pod_evictions_total", "counter",
       "Times the pod's processes were ended for a pod of higher priority.", ""},
      {"tessera_gpu_memory_pod_host_bytes", "gauge",
       "Swap resolver: memory of the pod's allocations placed in host memory.", ""},
      {"tessera_gpu_memory_pod_swap_outs_total", "counter", "Swap resolver: allocations placed in host memory.", ""},
      {"tessera_gpu_memory_pod_swap_ins_total", "counter", "Swap resolver: allocations moved back to the device.", ""},
      {"tessera_gpu_memory_pod_moved_out_total", "counter",
       "Swap resolver: times the pod's processes moved their allocations to host memory for another pod.", ""}};
  LedgerLayout& layout = ledger.layout();
  int processes = 0;
  for (int device = 0; device < kMaxDevices; ++device) {
    DeviceRecord& record = layout.devices[device];
    LedgerLock lock(
        record.lock, [](LedgerLayout&, int) {}, layout, device);
    if (record.capacity == 0 && record.used == 0) continue;
    const std::string device_label = "device=\"" + std::to_string(device) + "\"";
    sample(device_families[0], device_label, record.capacity);
    sample(device_families[1], device_label, record.used);
    sample(device_families[2], device_label, record.committed);
    sample(device_families[3], device_label, record.peak_used);
    for (const EntryRecord& entry : layout.entries) {
      if (entry.state != kSlotLive || entry.device != device) continue;
      const std::string labels =
          "pod=\"" + escaped(entry.name) + "\",uid=\"" + escaped(entry.uid) + "\"," + device_label;
      const std::uint64_t values[] = {entry.used,      entry.request, entry.limit,     entry.peak_used,
                                      entry.grants,    entry.waits,   entry.wait_ooms, entry.limit_ooms,
                                      entry.evictions, entry.in_host, entry.swap_outs, entry.swap_ins,
                                      entry.moved_out};
      for (std::size_t i = 0; i < pod_families.size(); ++i) sample(pod_families[i], labels, values[i]);
    }
  }
  for (const ProcessRecord& process : layout.processes) {
    if (process.state == kSlotLive) ++processes;
  }
  std::string text;
  for (const std::vector<Family>* families : {&device_families, &pod_families}) {
    for (const Family& family : *families) {
      text += std::string("# HELP ") + family.name + " " + family.help + "\n# TYPE " + family.name + " " + family.type +
              "\n" + family.samples;
    }
  }
  text +=
      "# HELP tessera_gpu_memory_processes GPU processes registered in the ledger.\n"
      "# TYPE tessera_gpu_memory_processes gauge\ntessera_gpu_memory_processes " +
      std::to_string(processes) + "\n";
  text +=
      "# HELP tessera_gpu_agent_reclaimed_bytes_total Memory taken back from processes that ended without freeing.\n"
      "# TYPE tessera_gpu_agent_reclaimed_bytes_total counter\ntessera_gpu_agent_reclaimed_bytes_total " +
      std::to_string(counters.reclaimed_bytes) + "\n";
  text +=
      "# HELP tessera_gpu_agent_syncs_total Times the agent brought the ledger in line with the node's pods.\n"
      "# TYPE tessera_gpu_agent_syncs_total counter\ntessera_gpu_agent_syncs_total " +
      std::to_string(counters.syncs) + "\n";
  text +=
      "# HELP tessera_gpu_agent_pod_problems Pods whose GPU memory annotations could not be read.\n"
      "# TYPE tessera_gpu_agent_pod_problems gauge\ntessera_gpu_agent_pod_problems " +
      std::to_string(counters.pod_problems) + "\n";
  return text;
}

}  // namespace tessera::gpumem
