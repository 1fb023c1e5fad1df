#include "cli/dev_nodes_command.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/node_objects.h"
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

// Whether YAML would read this string as something else (a number, a boolean, null) unless quoted.
bool needs_quotes(const std::string& text) {
  if (text.empty()) return true;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  static constexpr const char* kWords[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"};
  for (const char* word : kWords) {
    if (lower == word) return true;
  }
  const char first = text.front();
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' || first == '.') {
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    if (end != nullptr && *end == '\0') return true;
    if (lower == ".inf" || lower == "-.inf" || lower == "+.inf" || lower == ".nan") return true;
    if (lower.rfind("0x", 0) == 0 || lower.rfind("0o", 0) == 0) return true;
  }
  return false;
}

void emit_yaml(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        emit_yaml(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& item : value) emit_yaml(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (needs_quotes(text)) out << YAML::DoubleQuoted;
      out << text;
      break;
    }
    case json::value_t::boolean:
      out << value.get<bool>();
      break;
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:  // numbers: JSON's text is valid YAML
      out << value.dump();
      break;
  }
}

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
    YAML::Emitter out;
    emit_yaml(out, list);
    std::fputs(fmt::format("{}\n", out.c_str()).c_str(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void add_dev_nodes_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DevNodesFlags>();
  const std::vector<CLI::App*> existing =
      app.get_subcommands([](CLI::App* subcommand) { return subcommand->get_name() == "dev"; });
  CLI::App* dev = existing.empty() ? nullptr : existing.front();
  if (dev == nullptr) {
    dev = app.add_subcommand("dev", "Development tools");
    dev->require_subcommand(1);
  }
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
