#include "cli/user/node_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "adapter/annotations.h"
#include "cli/user/object_reads.h"
#include "cli/user/queue_view.h"
#include "cli/user/workload_view.h"
#include "core/gpu_request.h"
#include "wire/quantity.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

int device_count(const json& node) {
  for (const char* pointer : {"/status/allocatable", "/status/capacity"}) {
    const json resources = node.value(json::json_pointer(pointer), json::object());
    if (!resources.is_object() || !resources.contains(adapter::kGpuResourceName)) continue;
    const json& value = resources[std::string(adapter::kGpuResourceName)];
    if (value.is_number_integer()) return std::max(0, value.get<int>());
    if (value.is_string()) {
      Result<int64_t> count = wire::parse_quantity(value.get<std::string>());
      if (count) return static_cast<int>(std::max<int64_t>(0, *count));
    }
  }
  return 0;
}

// The device indices the scheduler wrote ("0,1,3"); empty when absent or unreadable.
std::vector<int> device_indices(const json& pod) {
  const json annotations = pod.value("/metadata/annotations"_json_pointer, json::object());
  std::vector<int> indices;
  if (!annotations.is_object()) return indices;
  const std::string text = annotations.value(std::string(adapter::kGpuIndexAnnotation), "");
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    try {
      indices.push_back(std::stoi(text.substr(start, comma - start)));
    } catch (const std::exception&) {
      return {};
    }
    start = comma + 1;
  }
  return indices;
}

// A shared device's portion the scheduler wrote, in thousandths; 0 when absent.
int written_portion(const json& pod) {
  const json annotations = pod.value("/metadata/annotations"_json_pointer, json::object());
  if (!annotations.is_object()) return 0;
  try {
    return std::clamp(std::stoi(annotations.value(std::string(adapter::kGpuPortionAnnotation), "0")), 0, kMilliPerGpu);
  } catch (const std::exception&) {
    return 0;
  }
}

// Fragmented GPUs to a tenth: a weighted sum over pod types, whose thousandths mean nothing.
std::string fragmented_figure(double milli) { return fmt::format("{:.1f}", milli / kMilliPerGpu); }

}  // namespace

int NodeGpus::used_milli() const {
  return std::min<int>(std::accumulate(device_milli.begin(), device_milli.end(), 0) + unplaced_milli,
                       static_cast<int>(device_milli.size()) * kMilliPerGpu);
}

int NodeGpus::free_devices() const {
  return static_cast<int>(std::count(device_milli.begin(), device_milli.end(), 0));
}

std::vector<NodeGpus> node_gpus(const json& nodes, const json& pods, const PodQueues& queues) {
  std::vector<NodeGpus> result;
  std::map<std::string, size_t> by_name;
  for (const json& node : list_items(nodes)) {
    NodeGpus gpus;
    gpus.name = text_at(node, "/metadata/name");
    const json labels = node.value("/metadata/labels"_json_pointer, json::object());
    if (labels.is_object()) gpus.model = labels.value(std::string(adapter::kGpuProductLabel), "");
    gpus.device_milli.assign(static_cast<size_t>(device_count(node)), 0);
    gpus.schedulable = !node.value("/spec/unschedulable"_json_pointer, false);
    by_name[gpus.name] = result.size();
    result.push_back(std::move(gpus));
  }
  for (const json& pod : list_items(pods)) {
    if (!holds_room(pod)) continue;
    auto node = by_name.find(text_at(pod, "/spec/nodeName"));
    if (node == by_name.end()) continue;
    NodeGpus& gpus = result[node->second];
    const GpuRequest request = pod_gpu_request(pod);
    const std::vector<int> indices = device_indices(pod);
    auto queue = queues.find(object_key(pod));
    const std::string holder = queue == queues.end() || queue->second.empty() ? "-" : queue->second;
    if (!indices.empty()) {
      const int each = request.is_fractional() ? written_portion(pod) : kMilliPerGpu;
      for (int index : indices) {
        if (index < 0 || static_cast<size_t>(index) >= gpus.device_milli.size()) continue;
        gpus.device_milli[static_cast<size_t>(index)] += each;
        gpus.queue_milli[holder] += each;
      }
    } else if (request.kind == GpuRequest::Kind::kWhole) {
      // Devices a device plugin chose, which no scheduler sees: counted, not mapped.
      gpus.unplaced_milli += request.whole_gpus * kMilliPerGpu;
      gpus.queue_milli[holder] += request.whole_gpus * kMilliPerGpu;
    }
  }
  // Unmapped whole GPUs take free devices on the map, so it shows how many are left.
  for (NodeGpus& gpus : result) {
    int left = gpus.unplaced_milli;
    for (int& device : gpus.device_milli) {
      if (left < kMilliPerGpu) break;
      if (device == 0) {
        device = kMilliPerGpu;
        left -= kMilliPerGpu;
      }
    }
    gpus.unplaced_milli = left;
  }
  return result;
}

std::string device_map(const std::vector<int>& device_milli) {
  std::string map;
  for (int milli : device_milli) {
    if (milli <= 0) {
      map += '.';
    } else if (milli >= kMilliPerGpu) {
      map += '#';
    } else {
      map += static_cast<char>('0' + std::clamp(milli / 100, 1, 9));
    }
  }
  return "[" + map + "]";
}

ClusterGpus cluster_gpus(const std::vector<NodeGpus>& nodes) {
  ClusterGpus cluster;
  for (const NodeGpus& node : nodes) {
    cluster.gpus += static_cast<int>(node.device_milli.size());
    cluster.used += static_cast<double>(node.used_milli()) / kMilliPerGpu;
    cluster.fragmented += node.fragmented_milli / kMilliPerGpu;
  }
  return cluster;
}

std::string cluster_line(const ClusterGpus& cluster) {
  const auto percent = [](double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; };
  return fmt::format("Cluster: {} of {} GPUs in use; {} free, of which {} fragmented ({:.1f}%; {:.1f}% of capacity)\n",
                     gpu_figure(cluster.used), cluster.gpus, gpu_figure(cluster.free()),
                     fragmented_figure(cluster.fragmented * kMilliPerGpu), percent(cluster.fragmented, cluster.free()),
                     percent(cluster.fragmented, cluster.gpus));
}

Table node_table(const std::vector<NodeGpus>& nodes) {
  Table table;
  for (const char* header : {"NODE", "MODEL", "GPUS", "MAP", "FREE", "FRAG", "QUEUES"})
    table.columns.push_back({header});
  for (const char* header : {"DEVICES", "SCHEDULABLE"}) table.columns.push_back({header, true});
  for (const NodeGpus& node : nodes) {
    std::string queues;
    for (const auto& [queue, milli] : node.queue_milli) {
      queues += fmt::format("{}{}({})", queues.empty() ? "" : ",", queue,
                            gpu_figure(static_cast<double>(milli) / kMilliPerGpu));
    }
    std::string devices;
    for (int milli : node.device_milli) devices += fmt::format("{}{}", devices.empty() ? "" : ",", milli);
    table.add_row({node.name, node.model.empty() ? "-" : node.model,
                   fmt::format("{}/{}", gpu_figure(static_cast<double>(node.used_milli()) / kMilliPerGpu),
                               node.device_milli.size()),
                   device_map(node.device_milli), std::to_string(node.free_devices()),
                   fragmented_figure(node.fragmented_milli), queues.empty() ? "-" : queues,
                   devices.empty() ? "-" : devices, node.schedulable ? "true" : "false"});
  }
  return table;
}

json node_json(const std::vector<NodeGpus>& nodes) {
  json items = json::array();
  for (const NodeGpus& node : nodes) {
    json queues = json::object();
    for (const auto& [queue, milli] : node.queue_milli) queues[queue] = static_cast<double>(milli) / kMilliPerGpu;
    items.push_back({{"name", node.name},
                     {"model", node.model},
                     {"gpus", node.device_milli.size()},
                     {"usedGpus", static_cast<double>(node.used_milli()) / kMilliPerGpu},
                     {"deviceMilli", node.device_milli},
                     {"freeDevices", node.free_devices()},
                     {"fragmentedGpus", node.fragmented_milli / kMilliPerGpu},
                     {"queues", queues},
                     {"schedulable", node.schedulable}});
  }
  const ClusterGpus cluster = cluster_gpus(nodes);
  return {{"kind", "NodeGpuList"},
          {"items", items},
          {"cluster",
           {{"gpus", cluster.gpus},
            {"usedGpus", cluster.used},
            {"freeGpus", cluster.free()},
            {"fragmentedGpus", cluster.fragmented}}}};
}

}  // namespace tessera::cli
