// Pod lists drawn from a published one with chosen shares of each kind of pod: the held-out
// workloads a placement policy is checked on, beyond the lists it was tuned on.
//
// `tessera sim --workload mix:gpu-spec=0.33,multi-gpu=0.08,cpu-only=0.2,seed=7` draws pods, with
// replacement, from the base list (builtin:default unless `base=` names another list): each pod
// first picks its kind — CPU-only, a fraction of one GPU, one whole GPU, two or more whole GPUs —
// with the shares given (kinds left unnamed share what remains in their proportions in the base
// list), then a pod of that kind uniformly from the base list. A `gpu-spec` share of the GPU pods
// is then constrained to one GPU model, chosen with probability proportional to the GPUs of that
// model on nodes that could hold the pod alone (as mixed-generation clusters constrain their
// pods); the rest may use any model. `portions=` changes the sizes the fractions ask for, so that a
// policy is also tried on gaps it was not tuned on: `even` draws a fraction's portion uniformly
// from the base list's distinct portions first (the rare sizes become as common as the popular
// ones), `250/500/750` gives each drawn fraction one of the listed portions, uniformly, keeping
// its CPU and memory. The same text and cluster always give the same list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/result.h"
#include "core/workload.h"

namespace tessera {

inline constexpr std::string_view kPodMixPrefix = "mix:";

enum class PodKind { kCpuOnly, kSharing, kOneGpu, kMultiGpu };
inline constexpr int kPodKindCount = 4;

// How the fractions' portions are drawn: as the base list has them, evenly over its distinct
// portions, or from a list given.
enum class PortionDraw { kAsBase, kEven, kListed };

struct PodMixSpec {
  std::string base = "builtin:default";  // the list pods are drawn from
  // Share of the drawn pods of each kind (PodKind order); unset: what the others leave, in the
  // base list's proportions.
  std::optional<double> kind_share[kPodKindCount];
  double gpu_spec_share = 0;  // share of GPU pods constrained to one GPU model
  PortionDraw portion_draw = PortionDraw::kAsBase;
  std::vector<int> listed_portions;  // kListed: milli-GPU, each 1..999
  uint64_t seed = 1;
  int pods = 0;  // 0: as many as the base list has
};

PodKind pod_kind(const GpuRequest& gpu);

// Reads the text after `mix:` ("gpu-spec=0.3,multi-gpu=0.1,seed=4"), or an Error naming the key.
Result<PodMixSpec> parse_pod_mix(std::string_view text);

// Draws the list. `base` is the base list's pods; `source` names it in errors.
Result<std::vector<WorkloadSpec>> draw_pod_mix(const PodMixSpec& spec, const std::vector<WorkloadSpec>& base,
                                               const ClusterSpec& cluster);

}  // namespace tessera
