#include "sim/pod_mix.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <random>

namespace tessera {

namespace {

constexpr std::string_view kKindKeys[kPodKindCount] = {"cpu-only", "sharing", "one-gpu", "multi-gpu"};
constexpr std::string_view kKeys = "cpu-only, sharing, one-gpu, multi-gpu, gpu-spec, portions, seed, pods, base";

Result<double> read_share(std::string_view key, std::string_view value) {
  double share = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), share);
  if (error != std::errc() || end != value.data() + value.size() || !(share >= 0 && share <= 1)) {
    return Error{fmt::format("mix: {}={}: expected a share between 0 and 1", key, value)};
  }
  return share;
}

template <typename Integer>
Result<Integer> read_count(std::string_view key, std::string_view value, Integer least) {
  Integer number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < least) {
    return Error{fmt::format("mix: {}={}: expected a whole number of at least {}", key, value, least)};
  }
  return number;
}

// `portions=`: "base", "even", or portions in milli-GPU joined by '/' ("250/500/750").
Status read_portions(PodMixSpec& spec, std::string_view value) {
  if (value == "base" || value == "even") {
    spec.portion_draw = value == "base" ? PortionDraw::kAsBase : PortionDraw::kEven;
    spec.listed_portions.clear();
    return Ok{};
  }
  std::vector<int> listed;
  size_t start = 0;
  while (start <= value.size()) {
    size_t slash = value.find('/', start);
    if (slash == std::string_view::npos) slash = value.size();
    const std::string_view item = value.substr(start, slash - start);
    int milli = 0;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), milli);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || milli < 1 ||
        milli >= kMilliPerGpu) {
      return Error{fmt::format(
          "mix: portions={}: '{}' is not a portion (expected base, even, or milli-GPU between 1 and {} joined by "
          "'/', as in 250/500/750)",
          value, item, kMilliPerGpu - 1)};
    }
    listed.push_back(milli);
    start = slash + 1;
  }
  spec.portion_draw = PortionDraw::kListed;
  spec.listed_portions = std::move(listed);
  return Ok{};
}

Status set_option(PodMixSpec& spec, std::string_view key, std::string_view value) {
  for (int kind = 0; kind < kPodKindCount; ++kind) {
    if (key != kKindKeys[kind]) continue;
    auto share = read_share(key, value);
    if (!share) return share.error();
    spec.kind_share[kind] = *share;
    return Ok{};
  }
  if (key == "gpu-spec") {
    auto share = read_share(key, value);
    if (!share) return share.error();
    spec.gpu_spec_share = *share;
  } else if (key == "portions") {
    return read_portions(spec, value);
  } else if (key == "seed") {
    auto seed = read_count<uint64_t>(key, value, 0);
    if (!seed) return seed.error();
    spec.seed = *seed;
  } else if (key == "pods") {
    constexpr int kMostPods = 1'000'000;  // a list of more would only fill memory
    auto pods = read_count<int>(key, value, 1);
    if (!pods) return pods.error();
    if (*pods > kMostPods) return Error{fmt::format("mix: pods={}: expected at most {}", value, kMostPods)};
    spec.pods = *pods;
  } else if (key == "base") {
    if (value.empty()) return Error{"mix: base=: expected a pod list (builtin:NAME or a CSV file)"};
    spec.base = value.find(':') == std::string_view::npos && !value.ends_with(".csv") ? fmt::format("builtin:{}", value)
                                                                                      : std::string(value);
  } else {
    return Error{fmt::format("mix: unknown key '{}' (expected one of: {})", key, kKeys)};
  }
  return Ok{};
}

// The probability of each kind: the shares given, and what they leave to the others in the
// proportions the base list has them.
Result<std::vector<double>> kind_weights(const PodMixSpec& spec, const std::vector<int64_t>& base_counts) {
  double given = 0;
  int64_t unnamed_pods = 0;
  for (int kind = 0; kind < kPodKindCount; ++kind) {
    if (spec.kind_share[kind]) {
      given += *spec.kind_share[kind];
      if (*spec.kind_share[kind] > 0 && base_counts[static_cast<size_t>(kind)] == 0) {
        return Error{fmt::format("mix: {}={}: {} has no such pod to draw from", kKindKeys[kind], *spec.kind_share[kind],
                                 spec.base)};
      }
    } else {
      unnamed_pods += base_counts[static_cast<size_t>(kind)];
    }
  }
  if (given > 1 + 1e-9) return Error{fmt::format("mix: the shares given add up to {} (expected at most 1)", given)};
  std::vector<double> weights(kPodKindCount, 0);
  for (int kind = 0; kind < kPodKindCount; ++kind) {
    if (spec.kind_share[kind]) {
      weights[static_cast<size_t>(kind)] = *spec.kind_share[kind];
    } else if (unnamed_pods > 0) {
      weights[static_cast<size_t>(kind)] =
          (1 - given) * static_cast<double>(base_counts[static_cast<size_t>(kind)]) / static_cast<double>(unnamed_pods);
    }
  }
  if (given < 1 - 1e-9 && unnamed_pods == 0) {
    return Error{
        fmt::format("mix: the shares given add up to {}, and {} has no pod of the other kinds to make up "
                    "the rest (expected shares that add up to 1)",
                    given, spec.base)};
  }
  return weights;
}

// GPUs of each model on nodes that could hold the pod alone: the weights a model constraint is
// drawn with.
std::vector<double> model_weights(const PodSpec& pod, const ClusterSpec& cluster) {
  std::vector<double> weights(cluster.models.size(), 0);
  const int wanted = pod.gpu.kind == GpuRequest::Kind::kWhole ? pod.gpu.whole_gpus : 1;
  for (const NodeSpec& node : cluster.nodes) {
    if (node.gpu_count() < wanted || !pod.request.fits_in(node.allocatable)) continue;
    for (const GpuDevice& device : node.gpus) weights[device.model] += 1;
  }
  return weights;
}

}  // namespace

PodKind pod_kind(const GpuRequest& gpu) {
  switch (gpu.kind) {
    case GpuRequest::Kind::kNone:
      return PodKind::kCpuOnly;
    case GpuRequest::Kind::kWhole:
      return gpu.whole_gpus >= 2 ? PodKind::kMultiGpu : PodKind::kOneGpu;
    case GpuRequest::Kind::kPortion:
    case GpuRequest::Kind::kMemory:
      return PodKind::kSharing;
  }
  return PodKind::kCpuOnly;
}

Result<PodMixSpec> parse_pod_mix(std::string_view text) {
  PodMixSpec spec;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      return Error{fmt::format("mix: '{}': expected key=value (keys: {})", item, kKeys)};
    }
    if (Status status = set_option(spec, item.substr(0, equals), item.substr(equals + 1)); !status) {
      return status.error();
    }
  }
  return spec;
}

Result<std::vector<WorkloadSpec>> draw_pod_mix(const PodMixSpec& spec, const std::vector<WorkloadSpec>& base,
                                               const ClusterSpec& cluster) {
  std::vector<std::vector<const PodSpec*>> by_kind(kPodKindCount);
  for (const WorkloadSpec& workload : base) {
    for (const PodSpec& pod : workload.pods) by_kind[static_cast<size_t>(pod_kind(pod.gpu))].push_back(&pod);
  }
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const auto& pods : by_kind) {
    counts.push_back(static_cast<int64_t>(pods.size()));
    total += counts.back();
  }
  if (total == 0) return Error{fmt::format("mix: {} has no pods to draw from", spec.base)};
  auto weights = kind_weights(spec, counts);
  if (!weights) return weights.error();

  // For even portions: the fractions grouped by what they ask (a portion, or an amount of memory).
  std::map<std::pair<GpuRequest::Kind, int64_t>, std::vector<const PodSpec*>> by_ask;
  if (spec.portion_draw == PortionDraw::kEven) {
    for (const PodSpec* pod : by_kind[static_cast<size_t>(PodKind::kSharing)]) {
      by_ask[{pod->gpu.kind,
              pod->gpu.kind == GpuRequest::Kind::kPortion ? pod->gpu.portion_milli : pod->gpu.memory_bytes}]
          .push_back(pod);
    }
  }
  std::mt19937_64 random(spec.seed);
  auto uniform_index = [&random](size_t size) { return std::uniform_int_distribution<size_t>(0, size - 1)(random); };
  std::discrete_distribution<int> kind_of(weights->begin(), weights->end());
  const int pods = spec.pods > 0 ? spec.pods : static_cast<int>(total);
  std::vector<WorkloadSpec> drawn;
  drawn.reserve(static_cast<size_t>(pods));
  for (int i = 0; i < pods; ++i) {
    const auto kind = static_cast<PodKind>(kind_of(random));
    const std::vector<const PodSpec*>* candidates = &by_kind[static_cast<size_t>(kind)];
    if (kind == PodKind::kSharing && !by_ask.empty())
      candidates = &std::next(by_ask.begin(), static_cast<long>(uniform_index(by_ask.size())))->second;
    PodSpec pod = *(*candidates)[uniform_index(candidates->size())];
    if (kind == PodKind::kSharing && spec.portion_draw == PortionDraw::kListed) {
      pod.gpu = GpuRequest::portion(spec.listed_portions[uniform_index(spec.listed_portions.size())]);
    }
    pod.name = fmt::format("mix-pod-{:05d}", i);
    // Every GPU pod draws, constrained or not, so the constraint share alone changes the list.
    const double draw = std::uniform_real_distribution<double>(0, 1)(random);
    if (pod.gpu.wants_gpu() && draw < spec.gpu_spec_share) {
      std::vector<double> models = model_weights(pod, cluster);
      double sum = 0;
      for (double weight : models) sum += weight;
      if (sum > 0) {
        pod.allowed_models = GpuModelSet();
        pod.allowed_models.add(
            static_cast<GpuModelId>(std::discrete_distribution<int>(models.begin(), models.end())(random)));
      }
    }
    WorkloadSpec workload;
    workload.name = pod.name;
    workload.kind = WorkloadKind::kTrain;
    workload.min_member = 1;
    workload.pods.push_back(std::move(pod));
    drawn.push_back(std::move(workload));
  }
  return drawn;
}

}  // namespace tessera
