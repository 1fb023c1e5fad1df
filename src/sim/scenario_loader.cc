#include "sim/scenario_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "sim/alibaba_trace.h"
#include "sim/embedded_traces.h"
#include "sim/pod_mix.h"
#include "sim/scenario_yaml.h"

namespace tessera {

namespace {

constexpr std::string_view kBuiltinPrefix = "builtin:";

bool is_builtin(std::string_view reference) { return reference.starts_with(kBuiltinPrefix); }

bool is_mix(std::string_view reference) { return reference.starts_with(kPodMixPrefix); }

bool is_yaml(std::string_view reference) {
  return !is_builtin(reference) && !is_mix(reference) && (reference.ends_with(".yaml") || reference.ends_with(".yml"));
}

std::string builtin_names(EmbeddedTrace::Kind kind) {
  std::vector<std::string> names;
  for (const EmbeddedTrace& trace : embedded_traces()) {
    if (trace.kind == kind) names.push_back(fmt::format("builtin:{}", trace.name));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string display_name(std::string_view reference) {
  if (is_builtin(reference)) {
    if (const EmbeddedTrace* trace = find_embedded_trace(reference.substr(kBuiltinPrefix.size()))) {
      return fmt::format("{} ({})", reference, trace->file_name);
    }
  }
  return std::string(reference);
}

// References inside a YAML file are relative to the file.
TextResolver resolver_beside(const std::string& yaml_path) {
  std::filesystem::path base = std::filesystem::path(yaml_path).parent_path();
  return [base](std::string_view reference) -> Result<std::string> {
    if (is_builtin(reference) || std::filesystem::path(reference).is_absolute()) return read_reference(reference);
    return read_reference((base / std::filesystem::path(reference)).string());
  };
}

Result<ScenarioParts> load_yaml(const std::string& path, const ClusterSpec* cluster_hint) {
  auto text = read_reference(path);
  if (!text) return text.error();
  return parse_scenario_yaml(*text, path, resolver_beside(path), cluster_hint);
}

// The queues travel with the workloads: they come from the file that supplied them.
void take_queues(ScenarioParts& parts, Scenario& scenario) {
  scenario.queues = std::move(parts.queues).value_or(std::vector<QueueSpec>());
  scenario.resources = std::move(parts.resources);
  scenario.warnings.insert(scenario.warnings.end(), parts.warnings.begin(), parts.warnings.end());
}

// `mix:...`: pods drawn from a base list with chosen shares (sim/pod_mix.h). The list has no
// times of its own, so only the arrival experiment can use it.
Result<std::vector<WorkloadSpec>> load_pod_mix(std::string_view reference, const ClusterSpec& cluster,
                                               std::string& untimed) {
  auto spec = parse_pod_mix(reference.substr(kPodMixPrefix.size()));
  if (!spec) return spec.error();
  auto text = read_reference(spec->base);
  if (!text) return text.error();
  std::string base_untimed;
  auto base = parse_alibaba_pods(*text, display_name(spec->base), cluster, &base_untimed);
  if (!base) return base.error();
  untimed = fmt::format(
      "{}: a drawn pod mix has no arrival or end times (a timeline replay needs them; arrival "
      "mode does not)",
      reference);
  return draw_pod_mix(*spec, *base, cluster);
}

}  // namespace

Result<std::string> read_reference(std::string_view reference) {
  if (is_builtin(reference)) {
    std::string_view name = reference.substr(kBuiltinPrefix.size());
    if (const EmbeddedTrace* trace = find_embedded_trace(name)) return std::string(trace->text);
    return Error{fmt::format("{}: no such built-in trace (expected one of: {}, {})", reference,
                             builtin_names(EmbeddedTrace::Kind::kNodes), builtin_names(EmbeddedTrace::Kind::kPods))};
  }
  std::error_code error;
  if (std::filesystem::is_directory(reference, error))
    return Error{fmt::format("{}: is a directory (expected a file)", reference)};
  std::ifstream file{std::string(reference), std::ios::binary};
  if (!file) return Error{fmt::format("{}: cannot open file", reference)};
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) return Error{fmt::format("{}: read error", reference)};
  return content.str();
}

Result<std::shared_ptr<const ClusterSpec>> load_cluster(const std::string& reference) {
  ScenarioRequest request;
  request.cluster = reference;
  request.workload_given = false;
  Result<Scenario> scenario = load_scenario(request);
  if (!scenario) return scenario.error();
  return scenario->cluster;
}

Result<Scenario> load_scenario(const ScenarioRequest& request) {
  Scenario scenario;
  std::optional<ScenarioParts> cluster_file;  // a YAML --cluster that also carries workloads
  if (is_yaml(request.cluster)) {
    auto parts = load_yaml(request.cluster, nullptr);
    if (!parts) return parts.error();
    if (!parts->cluster)
      return Error{
          fmt::format("{}: has no 'cluster' section (expected one, since it is given as --cluster)", request.cluster)};
    scenario.cluster = parts->cluster;
    scenario.topology_cost = parts->topology_cost;
    scenario.cluster_source = parts->cluster_source.empty() ? request.cluster : parts->cluster_source;
    scenario.name = parts->name;
    if (parts->workloads && !request.workload_given) {
      scenario.workload_source = parts->workload_source.empty() ? request.cluster : parts->workload_source;
      cluster_file = std::move(*parts);
    }
  } else {
    auto text = read_reference(request.cluster);
    if (!text) return text.error();
    auto cluster = parse_alibaba_nodes(*text, display_name(request.cluster));
    if (!cluster) return cluster.error();
    scenario.cluster = std::make_shared<const ClusterSpec>(std::move(*cluster));
    scenario.cluster_source = display_name(request.cluster);
  }

  if (cluster_file) {
    scenario.workloads = std::move(*cluster_file->workloads);
    take_queues(*cluster_file, scenario);
  } else if (is_yaml(request.workload)) {
    auto parts = load_yaml(request.workload, scenario.cluster.get());
    if (!parts) return parts.error();
    if (!parts->workloads)
      return Error{fmt::format("{}: has no 'workloads' section (expected one, since it is given as --workload)",
                               request.workload)};
    scenario.workloads = std::move(*parts->workloads);
    scenario.workload_source = parts->workload_source.empty() ? request.workload : parts->workload_source;
    take_queues(*parts, scenario);
    if (scenario.name.empty()) scenario.name = parts->name;
  } else if (is_mix(request.workload)) {
    auto workloads = load_pod_mix(request.workload, *scenario.cluster, scenario.untimed);
    if (!workloads) return workloads.error();
    scenario.workloads = std::move(*workloads);
    scenario.workload_source = request.workload;
  } else {
    auto text = read_reference(request.workload);
    if (!text) return text.error();
    auto workloads = parse_alibaba_pods(*text, display_name(request.workload), *scenario.cluster, &scenario.untimed);
    if (!workloads) return workloads.error();
    scenario.workloads = std::move(*workloads);
    scenario.workload_source = display_name(request.workload);
  }
  if (scenario.name.empty()) {
    scenario.name = is_builtin(request.workload)
                        ? fmt::format("Alibaba GPU trace 2023: {}", request.workload.substr(kBuiltinPrefix.size()))
                    : is_mix(request.workload) ? request.workload
                                               : std::filesystem::path(request.workload).stem().string();
  }
  std::stable_sort(scenario.workloads.begin(), scenario.workloads.end(),
                   [](const WorkloadSpec& a, const WorkloadSpec& b) { return a.arrival_seconds < b.arrival_seconds; });
  return scenario;
}

}  // namespace tessera
