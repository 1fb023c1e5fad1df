#include "cli/dev_nodes_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/node_objects.h"
#include "cli/dev_command.h"
#include "cli/user/yaml_text.h"
#include "sim/scenario_loader.h"
#include "wire/timestamp.h"

namespace tessera {

namespace {

using nlohmann::json;

// What KWOK's --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake selects.
constexpr const char* kKwokAnnotation = "kwok.x-k8s.io/node";
constexpr const char* kKwokAnnotationValue = "fake";

struct DevNodesFlags {
  std::string nodes;
  std::string output = "yaml";
};

int run_dev_nodes(const DevNodesFlags& flags) {
  ScenarioRequest request;
  request.cluster = flags.nodes;
  request.workload_given = false;
  Result<Scenario> scenario = load_scenario(request);
  if (!scenario) {
    const std::string& message = scenario.error().message;
    const std::string named =
        message.find(flags.nodes) == std::string::npos ? fmt::format("{}: {}", flags.nodes, message) : message;
    std::fputs(fmt::format("error: --nodes {}\n", named).c_str(), stderr);
    return 1;
  }
  const ClusterSpec& cluster = *scenario->cluster;
  const std::string now = wire::format_time(wire::WallClock::now());
  json items = json::array();
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    json node = apiserver::node_object(cluster.nodes[i], cluster.models, i, now);
    node["metadata"]["annotations"][kKwokAnnotation] = kKwokAnnotationValue;
    // The node's kubelet (KWOK's node-initialize stage) reports the conditions, so a node turns Ready
    // only once something runs its pods; capacity, allocatable, addresses and nodeInfo stay.
    node["status"].erase("conditions");
    items.push_back(std::move(node));
  }
  const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}, {"items", items}};
  if (flags.output == "json") {
    std::fputs(fmt::format("{}\n", list.dump(2)).c_str(), stdout);
  } else {
    std::fputs(cli::yaml_text(list).c_str(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void add_dev_nodes_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DevNodesFlags>();
  CLI::App* dev = dev_command(app);
  CLI::App* nodes = dev->add_subcommand(
      "nodes",
      "Print a cluster file's nodes as a v1 List of Node objects to create on a real API server: capacity with "
      "nvidia.com/gpu, GPU labels and taints, annotated kwok.x-k8s.io/node=fake for KWOK to simulate, and no "
      "conditions "
      "(KWOK reports them; see scripts/real-cluster.sh)");
  nodes->add_option("--nodes", flags->nodes, "The nodes: builtin:NAME, an Alibaba node-list CSV, or a scenario YAML")
      ->required();
  nodes->add_option("--output,-o", flags->output, "json or yaml")
      ->check(CLI::IsMember({"json", "yaml"}))
      ->capture_default_str();
  nodes->callback([flags, &exit_code] { exit_code = run_dev_nodes(*flags); });
}

}  // namespace tessera
