#include "cli/user/gpu_metrics.h"

#include <fmt/format.h>

#include <sstream>
#include <vector>

#include "adapter/annotations.h"
#include "wire/duration.h"
#include "wire/timestamp.h"

namespace tessera::cli {

namespace {

Result<double> profile_seconds(std::string_view text, std::string_view whole) {
  auto seconds = wire::parse_duration_seconds(text);
  if (!seconds) return Error{fmt::format("'{}': {}", whole, seconds.error().message)};
  if (*seconds < 0) return Error{fmt::format("'{}': '{}' is negative", whole, text)};
  return *seconds;
}

}  // namespace

Result<UtilisationProfile> parse_utilisation_annotation(std::string_view text) {
  const size_t space = text.find(' ');
  const std::string_view name = text.substr(0, space);
  const std::string_view argument = space == std::string_view::npos ? "" : text.substr(space + 1);
  UtilisationProfile profile;
  const std::optional<UtilisationShape> shape = parse_utilisation_shape(name);
  if (!shape) {
    return Error{
        fmt::format("'{}' is not a utilisation profile (expected busy, idle_after DURATION, warmup DURATION "
                    "or bursty BUSY/PERIOD)",
                    text)};
  }
  profile.shape = *shape;
  switch (profile.shape) {
    case UtilisationShape::kBusy:
      if (!argument.empty()) return Error{fmt::format("'{}': busy takes no duration", text)};
      break;
    case UtilisationShape::kIdleAfter:
    case UtilisationShape::kWarmup: {
      auto after = profile_seconds(argument, text);
      if (!after) return after.error();
      profile.after_seconds = *after;
      break;
    }
    case UtilisationShape::kBursty: {
      const size_t slash = argument.find('/');
      if (slash == std::string_view::npos) return Error{fmt::format("'{}': expected bursty BUSY/PERIOD", text)};
      auto burst = profile_seconds(argument.substr(0, slash), text);
      if (!burst) return burst.error();
      auto period = profile_seconds(argument.substr(slash + 1), text);
      if (!period) return period.error();
      if (!(*period > 0) || *burst > *period) {
        return Error{fmt::format("'{}': the busy part must be at most the period, which must be positive", text)};
      }
      profile.burst_seconds = *burst;
      profile.period_seconds = *period;
      break;
    }
  }
  return profile;
}

std::string dcgm_utilisation_metrics(const nlohmann::json& pods, double now) {
  std::string text = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  const nlohmann::json items = pods.value("items", nlohmann::json::array());
  for (const nlohmann::json& pod : items) {
    const nlohmann::json annotations = pod.value("/metadata/annotations"_json_pointer, nlohmann::json::object());
    const std::string declared = annotations.value(std::string(adapter::kGpuUtilisationAnnotation), "");
    const std::string node = pod.value("/spec/nodeName"_json_pointer, std::string());
    const std::string started = pod.value("/status/startTime"_json_pointer, std::string());
    const std::string indices = annotations.value(std::string(adapter::kGpuIndexAnnotation), "");
    if (declared.empty() || node.empty() || started.empty() || indices.empty() ||
        pod.value("/status/phase"_json_pointer, std::string()) != "Running") {
      continue;
    }
    const std::string ns = pod.value("/metadata/namespace"_json_pointer, std::string());
    const std::string name = pod.value("/metadata/name"_json_pointer, std::string());
    auto profile = parse_utilisation_annotation(declared);
    auto start = wire::parse_time(started);
    if (!profile || !start) {
      text += fmt::format("# pod {}/{}: {}\n", ns, name, profile ? start.error().message : profile.error().message);
      continue;
    }
    const double utilisation = profile->mean_pct(now - *start, 0);
    const std::string container = pod.value("/spec/containers/0/name"_json_pointer, std::string());
    std::stringstream devices(indices);
    for (std::string device; std::getline(devices, device, ',');) {
      text += fmt::format(
          "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{}\",UUID=\"GPU-{}-{}\",device=\"nvidia{}\",modelName=\"simulated\","
          "Hostname=\"{}\",container=\"{}\",namespace=\"{}\",pod=\"{}\"}} {}\n",
          device, node, device, device, node, container, ns, name, std::lround(utilisation));
    }
  }
  return text;
}

}  // namespace tessera::cli
