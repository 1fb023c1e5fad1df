// The tessera policy's measure for one kind of node:
//   T_n(M) = sum_m p_m ( R_n(m) + S_n(m) )
// over the pod types that could ever run on such a node, their popularities renormalised to sum
// to 1. S is the stranded capacity (usable_capacity.h): free GPU that pods of type m could not
// fill even if only they arrived. R is FGD's whole-node loss where CPU or memory is its cause:
// every free GPU of a node that no longer has the CPU or memory for one pod of m. (Where the GPUs
// themselves stop m — too few idle, devices too small — S already counts all of them; FGD's
// partial-device term counted on top of it over-weighted partial devices and lost to first-fit
// on lists with many multi-GPU and model-constrained pods.)
//
// Only GPU types are counted, at their share of all the pods that could run on the node. A
// CPU-only type uses no GPU, so no GPU is lost to it, and the GPUs its CPU would have fed are
// the GPU types' own R and S. Counting its R kept CPU free for CPU-only pods beside idle GPUs,
// which drew them onto the nodes richest in CPU until those nodes' GPUs were left with none:
// where CPU runs out before GPUs do, that CPU is what the GPU pods needed.
//
// Built once per kind of node: the types are filtered and their per-device need worked out for
// the node's devices then, so scoring a state is one pass over the types. The common node whose
// devices are all alike gets both terms from counts of its devices (count_devices); other nodes
// take the general definitions.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "core/node.h"
#include "core/node_state.h"
#include "policy/placement_policy.h"
#include "policy/workload_mix.h"

namespace tessera {

// R over a mix: sum_m p_m [m does not fit the free CPU and memory] sum_g free_g.
double stranded_behind_resources(const NodeState& state, const WorkloadMix& mix);

class TesseraMeasure {
 public:
  TesseraMeasure(const NodeSpec& node, const WorkloadMix& mix);

  double unusable_capacity(const NodeSpec& node, const NodeState& state) const;
  // The same of the state with `pod` placed (on `device` for a fraction), as state_after
  // (device_choice.h) would make it, without copying the state.
  double unusable_capacity_after(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device) const;

  // What the measure reads of a node's devices on a node of like devices, in any order: the idle
  // devices, the free GPU, and per GPU need (need_count() of them, in the measure's order) how
  // many pods of it the devices hold by their GPUs alone (0: none). A placement changes the
  // counts by what it takes of one device or of idle ones, so the tessera policy keeps them with
  // T of a state and scores each placement from them without counting the devices again.
  struct DeviceCounts {
    int idle = 0;
    int64_t free_total = 0;
  };
  size_t need_count() const { return gpu_needs_.size(); }
  // Into `slots` (need_count() of them): what the state's devices hold of each need. Nothing on a
  // node of unlike devices, which has no needs.
  DeviceCounts count_devices(const NodeSpec& node, const NodeState& state, std::span<int32_t> slots) const;
  // T of the state and of the state with `pod` placed, from what count_devices returned for it,
  // each need's part of T written into `parts` (for group_parts and group_growth to read). On a
  // node of unlike devices neither reads the counts or writes the parts: the general definitions
  // serve.
  static constexpr size_t kMaxGpuNeeds = 256;  // past this many, the general definitions serve
  using NeedParts = std::array<double, kMaxGpuNeeds>;
  double unusable_capacity(const NodeSpec& node, const NodeState& state, const DeviceCounts& counts,
                           std::span<const int32_t> slots, NeedParts& parts) const;
  double unusable_capacity_after(const NodeSpec& node, const NodeState& state, const DeviceCounts& counts,
                                 std::span<const int32_t> slots, const PodSpec& pod, int device,
                                 NeedParts& parts) const;
  const WorkloadMix& mix() const { return mix_; }  // the node's GPU types, as shares of its types
  bool uniform_devices() const { return uniform_devices_; }

  // The sizes of the mix's whole-GPU types of more than one GPU, ascending: the parts of T the
  // tessera policy weighs by the idle groups left cluster-wide (tessera_policy.h). At most
  // kMaxGroupSizes, those the mix asks the most GPUs of; the others count at full weight.
  static constexpr size_t kMaxGroupSizes = kScoreParts - 1;
  static std::vector<int> group_sizes(const WorkloadMix& mix);
  // Per group size (by its index in group_sizes of the mix the measure was built from): how much
  // the part of T of the types of that size grows when `pod` is placed (on `device` for a
  // fraction). Zeros on a node of unlike devices, which the general definitions serve.
  using GroupGrowth = std::array<double, kMaxGroupSizes>;
  // What group_growth reads of the state before the placement: each group size's part of T (by
  // the measure's own order of them), from the needs' parts unusable_capacity wrote for the state.
  // It depends on the state alone, so the tessera policy remembers it with T (tessera_policy.h).
  struct GroupParts {
    GroupGrowth part{};
  };
  GroupParts group_parts(const NeedParts& before) const;
  // The growths, from the needs' parts of T after the placement as unusable_capacity_after wrote them.
  GroupGrowth group_growth(const NeedParts& after, const GroupParts& before) const;

  // Whether a pod of `type` could run on an empty node like `node` (CPU, memory, GPU models,
  // GPU count, a device large enough).
  static bool could_ever_run(const NodeSpec& node, const PodType& type);

 private:
  // What a type asks of the GPUs; types alike in it share the count of how many such pods the
  // devices hold, worked out once per state (mixes have many types and few distinct needs).
  struct GpuNeed {
    int whole_gpus = 0;       // > 0: whole devices; 0: a portion
    int need = 0;             // milli of one device a pod takes
    int per_idle_device = 0;  // pods of a portion one idle device holds
    friend bool operator==(const GpuNeed&, const GpuNeed&) = default;
  };
  struct CompactType {
    Resources request;
    double popularity = 0;
  };

  static constexpr size_t kMaxUniformDevices = 64;
  // T from the counts of a state: `slots` per need, the free CPU and memory and the free GPU.
  double unusable_capacity(std::span<const int32_t> slots, const Resources& free, int64_t free_total,
                           NeedParts& parts) const;
  // The type's part of T in a state with `free` CPU and memory and `free_total` milli-GPU free,
  // given how many of its pods the devices hold (`capacity`, as count_devices counts them; at
  // least one: need_unusable counts the types of a need that fits no device itself) and the milli
  // one pod fills (`unit`). Inline: the measure's inner loop runs it for every type of every
  // state it scores.
  [[gnu::always_inline]] static inline double type_unusable(const CompactType& type, int64_t unit, int64_t capacity,
                                                            const Resources& free, int64_t free_total);
  // The part of T of all the types of one GPU need (by index into gpu_needs_), as type_unusable
  // counts them. Inline, as type_unusable (forced: with several callers the compiler would not).
  [[gnu::always_inline]] inline double need_unusable(size_t need, int64_t capacity, const Resources& free,
                                                     int64_t free_total) const;

  WorkloadMix mix_;
  bool uniform_devices_ = false;    // every device of the node the same model and memory
  std::vector<GpuNeed> gpu_needs_;  // distinct, in the order of the types that first ask them
  // Per GPU need (parallel to gpu_needs_): its types, their popularity in all and the most and
  // least CPU and memory any of them asks. Where even the largest fits the free CPU and memory for
  // as many pods as the devices hold, or the least fits none, every type of the need loses the
  // same share of the free GPUs, and the need is counted at once instead of type by type.
  struct NeedTypes {
    std::vector<CompactType> types;  // in the order of the mix
    double popularity = 0;
    Resources largest;
    Resources least;
    int64_t unit = 0;  // milli one pod fills: whole_gpus devices, or its portion
  };
  std::vector<NeedTypes> need_types_;
  // The GPU needs of whole-GPU types with a group size (each size is one need), by index into
  // gpu_needs_, and that size's index in group_sizes.
  struct GroupNeed {
    size_t need = 0;
    size_t group = 0;
  };
  std::vector<GroupNeed> group_needs_;
  // The needs a placement's counts move, by kind (a need that asks for no portion of a device
  // holds no pod in any state): whole GPUs, by the idle devices; a portion, by each device's share.
  struct WholeNeed {
    size_t need = 0;
    int gpus = 0;
  };
  struct PortionNeed {
    size_t need = 0;
    int milli = 0;
    int per_idle_device = 0;
  };
  std::vector<WholeNeed> whole_needs_;
  std::vector<PortionNeed> portion_needs_;
};

}  // namespace tessera
