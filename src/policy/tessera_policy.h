// tessera: the project's default placement policy. Like FGD it descends a gradient of expected
// unusable GPU capacity, against a measure that counts what FGD's misses (tessera_measure.h):
//   T_n(M) = sum_m p_m ( R_n(m) + S_n(m) )
// S is the stranded capacity (usable_capacity.h) — free GPU that pods of type m could not fill
// even if only they arrived, because CPU or memory runs out first, too few devices are idle, or a
// device's free portion is not a multiple of m's portion — and R is every free GPU of a node that
// no longer has the CPU or memory for one pod of m. The pod goes where T grows least:
//   score(n) = -( T_n'(M) - T_n(M) ), rounded to a tenth of a GPU
// and a fraction tries every device it fits on and keeps the smallest growth. Rounding makes
// nearly equal choices tie, and ties go to the lowest index: first-fit's packing among them.
// M is taken per node: only the types that could ever run on the node (its GPU models, GPU count,
// CPU and memory allow them), their popularities renormalised. The other types' view of the node
// never changes, so counting them (as FGD does) only adds a constant pull toward the nodes they
// cannot use — with a third of the pods constrained to GPU models, a pull stronger than the
// packing signal itself. Of those types only the GPU ones count: keeping room for CPU-only pods
// beside idle GPUs gave away the CPU the GPU pods needed where CPU runs out first. What a node
// cannot show — how much of its GPU model is left cluster-wide for the pods constrained to it — is
// a separate term the engine adds outside its per-state cache: the score less the cost of taking
// that model (model_scarcity.h). A second such term steers fractions by the gaps the whole
// cluster has left: less, on the device the score chose, the growth of the sum of squares of the
// numbers of partial devices by free share (sum_of_squares.h), the shares counted by class — the
// mix's portions, a gap in the class of the largest portion it holds — so that each gap size that
// some pod can fill is kept few and a fraction goes where its class closes or is rare. A third
// such term, weighted to decide first where it differs, charges a fraction the part of the
// device's gap it leaves that the mix's common portions cannot fill (gap_waste.h), so that gaps are
// left of sizes that can close. And the measure's part for the types of several whole GPUs counts
// at full weight only once the idle groups they need are no more than their share of the demand
// asks for: the engine keeps the nodes by idle devices, and the score hands back each size's
// growth for the cluster-wide term to reweigh (idle_group_term).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "policy/gap_waste.h"
#include "policy/model_scarcity.h"
#include "policy/placement_policy.h"
#include "policy/sum_of_squares.h"
#include "policy/tessera_measure.h"
#include "policy/workload_mix.h"

namespace tessera {

// An instance serves the node specs of one cluster for its lifetime — its caches key on their
// addresses — as every caller makes one per replay or per scheduling cycle.
class TesseraPolicy final : public PlacementPolicy {
 public:
  explicit TesseraPolicy(WorkloadMix mix);
  std::string_view name() const override { return "tessera"; }
  PlacementChoice score(const NodeView& node, const PodSpec& pod) override;
  // Minus the cost to the pods constrained to GPU models of taking the node's model
  // (model_scarcity.h): cluster-wide, so outside the engine's per-state cache.
  // Less, for a fraction, kSquaresWeight times the growth of the sum of squares of the cluster's
  // partial devices counted by gap class, on the device the score chose (sum_of_squares.h).
  // The weight puts a change of a few devices near the rounding of the score (a tenth of a GPU):
  // on the shared-GPU tuning lists of scripts/packing-generalisation.sh 0.1 to 0.6 gained, 1 and
  // more lost, and gaps counted by exact share did not gain; docs/results.md has the figures.
  static constexpr double kSquaresWeight = 0.3;
  // And less kGapWeight times the change the fraction makes to the waste of that device: the part
  // of its gap the mix's common portions cannot fill (gap_waste.h). The weight makes the term decide
  // first where it differs (a gap that only rare portions fit is mostly lost, where the other
  // terms weigh expectations): on the shared-GPU tuning lists 6, 10 and 20 read within 0.1
  // points of each other, 40 and 100 a little less; docs/policies.md has the figures.
  static constexpr double kGapWeight = 20;
  double cluster_term(const NodeView& node, const PodSpec& pod, const GpuSupply& supply,
                      const PlacementChoice& choice) override;
  bool has_cluster_term() const override {
    return has_fractions_ || scarcity_.any_constrained() || !group_sizes_.empty();
  }
  // Only a fraction has the gap terms, and only a GPU pod a cost of the GPU model it takes and a
  // weight of the idle groups it breaks.
  bool has_cluster_term(const PodSpec& pod) const override {
    return (has_fractions_ && pod.gpu.is_fractional()) ||
           ((scarcity_.any_constrained() || !group_sizes_.empty()) && pod.gpu.wants_gpu());
  }
  // Where the mix asks clearly more CPU than the cluster has (filling its GPUs, at least
  // kSpreadByCpuAbove times its CPU: known from the first search on), a GPU pod's choices of equal
  // score go to the node with the most CPU left after the placement (PlacementChoice::preference),
  // not to the lowest index. There CPU decides which pods fail, and spread by CPU the nodes keep
  // CPU beside their GPUs for the GPU pods to come; nearer the balance the node order's packing
  // mostly did better. On the tuning lists spreading gained 0.3 to 3.4 points where the mix asks
  // a tenth more CPU than there is or more and lost up to 0.4 on most lists below that, and
  // spreading CPU-only pods too lost up to 0.8 more; docs/policies.md has the figures and the
  // held-out result.
  static constexpr double kSpreadByCpuAbove = 1.1;
  void search_begins(const GpuSupply& supply) override {
    ++search_;
    in_search_ = true;
    if (!spreads_by_cpu_) spreads_by_cpu_ = supply.cpu_asked_share(cpu_per_gpu_milli_) >= kSpreadByCpuAbove;
  }
  void search_ends() override { in_search_ = false; }

 private:
  struct StateKey {
    const TesseraMeasure* measure = nullptr;  // the kind of node
    int64_t free_cpu_milli = 0;
    int64_t free_memory_bytes = 0;
    std::array<int16_t, 8> used_ascending{};
    friend bool operator==(const StateKey&, const StateKey&) = default;
  };
  struct StateKeyHash {
    size_t operator()(const StateKey& key) const;
  };

  // The score and device by the measure alone, without the preference.
  PlacementChoice score_by_measure(const NodeView& node, const PodSpec& pod);
  const TesseraMeasure& measure_for(const NodeSpec& node) const;
  // T of a state before the placement, and the parts of it group_growth reads: the same state is
  // asked about for every pod shape that comes to it, so they are remembered by the kind of node
  // and the state, its devices in any order (neither depends on it). (Remembering the states after
  // a placement too saved few computations and made the table large enough to slow a replay.)
  // And what the measure counted of the state's devices (TesseraMeasure::count_devices), from which
  // it scores each placement there: the counts per need are kept in slots_, from `slots_at`.
  struct Before {
    double unusable = 0;
    TesseraMeasure::GroupParts groups;
    TesseraMeasure::DeviceCounts counts;
    size_t slots_at = 0;
  };
  // The state's key in that table: none where it is not remembered (devices unlike, or too many).
  static std::optional<StateKey> state_key(const TesseraMeasure& measure, const NodeState& state);
  // The entry is valid until the next call.
  const Before& unusable_before(const TesseraMeasure& measure, const NodeSpec& node, const NodeState& state,
                                const std::optional<StateKey>& key);
  // Works out a state's entry, its counts per need appended to slots_.
  Before work_out_before(const TesseraMeasure& measure, const NodeSpec& node, const NodeState& state);
  // Whether the mix, filling the cluster's GPUs, asks for no more than its CPU: where CPU runs out
  // first, the gaps left on GPUs are not what limits the packing, and the sum-of-squares term is
  // off (worked out on the first call: an instance serves one cluster).
  bool gpus_run_out_first(const GpuSupply& supply);
  // The measure counts each type of n > 1 GPUs at its full share, as if the idle groups of n
  // devices left were all its pods will need. Where more are left than that, the part of T of
  // size n is worth less: weighted by w_n = min(1, c_n * F / A_n) (c_n: the share of the mix's
  // GPU demand from types of n GPUs; F: the cluster's free GPUs; A_n: the devices in whole groups
  // of n idle ones). This is the score's change for it, (1 - w_n) times each part's growth,
  // added to the score before it is rounded (so the term is the rounded score with the weights
  // less the score as cached); 0 where every weight is 1. The growths and the score before
  // rounding are the score's parts (PlacementChoice::parts), worked out with it and cached with it.
  inline double idle_group_term(const PodSpec& pod, const GpuSupply& supply, const PlacementChoice& choice);
  // The last part: the score before rounding; the others: one per group size.
  static constexpr size_t kRawScorePart = kScoreParts - 1;
  // Into the choice's parts: the growth of each group size's part of T (TesseraMeasure::group_growth)
  // and the score before rounding, `raw`.
  void set_group_parts(const TesseraMeasure& measure, const PodSpec& pod, const Before& before,
                       const TesseraMeasure::NeedParts& after, double raw, PlacementChoice& choice) const;

  WorkloadMix mix_;
  ModelScarcity scarcity_;
  GapWaste gap_waste_;
  bool has_fractions_ = false;              // whether any type of the mix asks for a fraction
  GapClasses gap_classes_;                  // from each of the mix's portions to the next
  double cpu_per_gpu_milli_ = 0;            // the mix's CPU asked per milli-GPU asked
  std::vector<int> group_sizes_;            // TesseraMeasure::group_sizes of the mix
  std::vector<double> group_demand_share_;  // per group size: c_n
  // Per group size, 1 - w_n, kept for the search under way (the cluster does not change in it).
  struct SparedGroups {
    uint64_t search = 0;  // the search they were worked out in; 0: none
    std::array<double, TesseraMeasure::kMaxGroupSizes> spared{};
    bool any = false;  // some weight below 1
  };
  SparedGroups spared_groups_;
  const SparedGroups& spared_groups(const GpuSupply& supply);
  std::optional<bool> gpus_run_out_first_;
  std::optional<bool> spreads_by_cpu_;  // see kSpreadByCpuAbove: worked out as the first search begins
  // The fraction's two cluster-wide changes on a device of a model with a free share, kept for
  // the search under way (they depend on nothing else while the pod and the cluster stay): a
  // search asks about dozens of node groups and their devices repeat few free shares.
  struct FractionChanges {
    uint64_t search = 0;  // the search they were worked out in; 0: none
    int64_t squares = 0;
    int waste = 0;
  };
  // Inline where they are kept (asked of every node group a fraction fits); worked out otherwise.
  inline FractionChanges fraction_changes(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                                          bool same_share_all_search);
  FractionChanges work_out_fraction_changes(const GpuSupply& supply, GpuModelId model, int free_milli, int share_milli,
                                            bool same_share_all_search);
  uint64_t search_ = 0;
  bool in_search_ = false;
  std::vector<FractionChanges> remembered_changes_;  // at [remembered_at(model, free milli)]
  static size_t remembered_at(size_t model, int free_milli) {
    return model * (kMilliPerGpu + 1) + static_cast<size_t>(free_milli);
  }
  // One per kind of node (allocatable CPU and memory, then each device's model and memory), built
  // on first use, and found by the node spec's address after that (specs never change).
  mutable std::map<std::vector<int64_t>, TesseraMeasure> measures_;
  mutable std::unordered_map<const NodeSpec*, const TesseraMeasure*> measure_of_node_;
  std::unordered_map<StateKey, Before, StateKeyHash> before_;
  // The counts per need of the states in before_, and at the end those of a state not remembered
  // (dropped by the next such state).
  std::vector<int32_t> slots_;
  size_t remembered_slots_ = 0;  // the part of slots_ that before_ refers to
  Before unremembered_;          // the entry of the last state not remembered
  std::vector<int> candidates_;  // fraction_candidates' buffer, reused by every score
};

}  // namespace tessera
