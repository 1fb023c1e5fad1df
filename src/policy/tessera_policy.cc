#include "policy/tessera_policy.h"

#include <algorithm>

#include "policy/device_choice.h"
#include "policy/growth_quantum.h"

namespace tessera {

TesseraPolicy::TesseraPolicy(WorkloadMix mix) : mix_(std::move(mix)), scarcity_(mix_), gap_waste_(mix_) {
  double gpu_milli = 0;
  std::vector<int> share_sizes;
  for (const PodType& type : mix_.types()) {
    gpu_milli += type.popularity * static_cast<double>(type.gpu.nominal_milli());
    has_fractions_ = has_fractions_ || type.gpu.is_fractional();
    if (type.gpu.kind == GpuRequest::Kind::kPortion) share_sizes.push_back(type.gpu.portion_milli);
  }
  std::sort(share_sizes.begin(), share_sizes.end());
  share_sizes.erase(std::unique(share_sizes.begin(), share_sizes.end()), share_sizes.end());
  gap_classes_ = GapClasses(share_sizes);
  cpu_per_gpu_milli_ = mix_.cpu_per_gpu_milli();
  group_sizes_ = TesseraMeasure::group_sizes(mix_);
  group_demand_share_.assign(group_sizes_.size(), 0);
  for (const PodType& type : mix_.types()) {
    if (type.gpu.kind != GpuRequest::Kind::kWhole || gpu_milli <= 0) continue;
    const auto size = std::find(group_sizes_.begin(), group_sizes_.end(), type.gpu.whole_gpus);
    if (size == group_sizes_.end()) continue;
    group_demand_share_[static_cast<size_t>(size - group_sizes_.begin())] +=
        type.popularity * static_cast<double>(type.gpu.nominal_milli()) / gpu_milli;
  }
}

const TesseraMeasure& TesseraPolicy::measure_for(const NodeSpec& node) const {
  auto [known, inserted] = measure_of_node_.try_emplace(&node, nullptr);
  if (inserted) {
    std::vector<int64_t> kind = {node.allocatable.cpu_milli, node.allocatable.memory_bytes};
    for (const GpuDevice& device : node.gpus) {
      kind.push_back(device.model);
      kind.push_back(device.memory_bytes);
    }
    auto it = measures_.find(kind);
    if (it == measures_.end()) it = measures_.emplace(std::move(kind), TesseraMeasure(node, mix_)).first;
    known->second = &it->second;
  }
  return *known->second;
}

size_t TesseraPolicy::StateKeyHash::operator()(const StateKey& key) const {
  uint64_t hash = reinterpret_cast<uintptr_t>(key.measure);
  auto mix = [&hash](uint64_t value) { hash = (hash ^ value) * 0x100000001b3ULL + (hash >> 29); };
  mix(static_cast<uint64_t>(key.free_cpu_milli));
  mix(static_cast<uint64_t>(key.free_memory_bytes));
  // The devices' use four at a time: a mix for each device was most of the hash's work.
  for (size_t i = 0; i < key.used_ascending.size(); i += 4) {
    uint64_t four = 0;
    for (size_t j = 0; j < 4; ++j) four = four << 16 | static_cast<uint16_t>(key.used_ascending[i + j]);
    mix(four);
  }
  return static_cast<size_t>(hash);
}

std::optional<TesseraPolicy::StateKey> TesseraPolicy::state_key(const TesseraMeasure& measure, const NodeState& state) {
  StateKey key;
  const size_t devices = state.gpu_used_milli.size();
  if (!measure.uniform_devices() || devices > key.used_ascending.size()) return std::nullopt;
  key.measure = &measure;
  key.free_cpu_milli = state.free.cpu_milli;
  key.free_memory_bytes = state.free.memory_bytes;
  std::copy(state.gpu_used_milli.begin(), state.gpu_used_milli.end(), key.used_ascending.begin());
  std::sort(key.used_ascending.begin(), key.used_ascending.begin() + static_cast<long>(devices));
  return key;
}

TesseraPolicy::Before TesseraPolicy::work_out_before(const TesseraMeasure& measure, const NodeSpec& node,
                                                     const NodeState& state) {
  Before before;
  before.slots_at = slots_.size();
  slots_.resize(slots_.size() + measure.need_count());
  const std::span<int32_t> slots(slots_.data() + before.slots_at, measure.need_count());
  before.counts = measure.count_devices(node, state, slots);
  TesseraMeasure::NeedParts parts;
  before.unusable = measure.unusable_capacity(node, state, before.counts, slots, parts);
  before.groups = measure.group_parts(parts);
  return before;
}

const TesseraPolicy::Before& TesseraPolicy::unusable_before(const TesseraMeasure& measure, const NodeSpec& node,
                                                            const NodeState& state,
                                                            const std::optional<StateKey>& key) {
  slots_.resize(remembered_slots_);  // a state not remembered, scored last, is done with
  if (!key) {
    unremembered_ = work_out_before(measure, node, state);
    return unremembered_;
  }
  constexpr size_t kMaxRemembered = size_t{1} << 20;  // bounded; entries are cheap to recompute
  if (before_.size() >= kMaxRemembered) {
    before_.clear();
    slots_.clear();
    remembered_slots_ = 0;
  }
  auto [it, inserted] = before_.try_emplace(*key);
  if (inserted) {
    it->second = work_out_before(measure, node, state);
    remembered_slots_ = slots_.size();
  }
  return it->second;
}

PlacementChoice TesseraPolicy::score(const NodeView& node, const PodSpec& pod) {
  PlacementChoice choice = score_by_measure(node, pod);
  if (spreads_by_cpu_ == true && pod.gpu.wants_gpu())
    choice.preference = static_cast<float>(node.state.free.cpu_milli - pod.request.cpu_milli);
  return choice;
}

PlacementChoice TesseraPolicy::score_by_measure(const NodeView& node, const PodSpec& pod) {
  const TesseraMeasure& measure = measure_for(node.spec);
  const std::optional<StateKey> key = state_key(measure, node.state);
  const Before& before = unusable_before(measure, node.spec, node.state, key);
  // T after the placement, from the state's counts, and its needs' parts: the best placement's
  // are kept for its group growths.
  const std::span<const int32_t> slots(slots_.data() + before.slots_at, measure.need_count());
  std::array<TesseraMeasure::NeedParts, 2> parts;
  auto unusable_after = [&](int device, TesseraMeasure::NeedParts& into) {
    return measure.unusable_capacity_after(node.spec, node.state, before.counts, slots, pod, device, into);
  };
  if (!pod.gpu.is_fractional()) {
    const double raw = before.unusable - unusable_after(-1, parts[0]);
    PlacementChoice choice{quantised(raw), -1};
    set_group_parts(measure, pod, before, parts[0], raw, choice);
    return choice;
  }
  PlacementChoice best{0, -1};
  size_t best_parts = 0;
  size_t next = 0;  // the parts the next candidate fills: never the best's
  fraction_candidates(node.spec, node.state, pod, candidates_);
  for (int device : candidates_) {
    const double growth = unusable_after(device, parts[next]) - before.unusable;
    if (best.device < 0 || -growth > best.score ||
        (-growth == best.score && fills_first(node.spec, node.state, device, best.device))) {
      best = {-growth, device};
      best_parts = next;
      next = 1 - next;
    }
  }
  const double raw = best.score;
  best.score = quantised(raw);
  set_group_parts(measure, pod, before, parts[best_parts], raw, best);
  return best;
}

void TesseraPolicy::set_group_parts(const TesseraMeasure& measure, const PodSpec& pod, const Before& before,
                                    const TesseraMeasure::NeedParts& after, double raw, PlacementChoice& choice) const {
  if (group_sizes_.empty() || !pod.gpu.wants_gpu() || (pod.gpu.is_fractional() && choice.device < 0)) return;
  const TesseraMeasure::GroupGrowth growth = measure.group_growth(after, before.groups);
  for (size_t i = 0; i < group_sizes_.size(); ++i) choice.parts[i] = static_cast<float>(growth[i]);
  choice.parts[kRawScorePart] = static_cast<float>(raw);
}

bool TesseraPolicy::gpus_run_out_first(const GpuSupply& supply) {
  if (!gpus_run_out_first_) gpus_run_out_first_ = supply.gpus_run_out_first(cpu_per_gpu_milli_);
  return *gpus_run_out_first_;
}

inline double TesseraPolicy::idle_group_term(const PodSpec& pod, const GpuSupply& supply,
                                             const PlacementChoice& choice) {
  if (group_sizes_.empty() || !pod.gpu.wants_gpu()) return 0;
  // Kept for the search under way; asked here first, as the engine asks for every node.
  const SparedGroups& spared = in_search_ && spared_groups_.search == search_ ? spared_groups_ : spared_groups(supply);
  if (!spared.any) return 0;
  // Over every slot, a fixed count the compiler unrolls: past the mix's sizes both factors are 0,
  // and adding 0 leaves the sum as it was.
  double change = 0;
  for (size_t i = 0; i < TesseraMeasure::kMaxGroupSizes; ++i) change += spared.spared[i] * choice.parts[i];
  if (change == 0) return 0;
  // The score with the weights, rounded once as the score is, less the score as cached.
  return quantised_change(choice.parts[kRawScorePart] + change, choice.score);
}

const TesseraPolicy::SparedGroups& TesseraPolicy::spared_groups(const GpuSupply& supply) {
  if (in_search_ && spared_groups_.search == search_) return spared_groups_;
  spared_groups_ = {in_search_ ? search_ : 0, {}, false};
  const auto free_gpus = static_cast<double>(supply.free_total_milli) / kMilliPerGpu;
  for (size_t i = 0; i < group_sizes_.size(); ++i) {
    const auto in_groups = static_cast<double>(supply.idle_in_groups(group_sizes_[i]));
    if (in_groups <= 0) continue;
    spared_groups_.spared[i] = 1 - std::min(1.0, group_demand_share_[i] * free_gpus / in_groups);
    spared_groups_.any = spared_groups_.any || spared_groups_.spared[i] > 0;
  }
  return spared_groups_;
}

inline TesseraPolicy::FractionChanges TesseraPolicy::fraction_changes(const GpuSupply& supply, GpuModelId model,
                                                                      int free_milli, int share_milli,
                                                                      bool same_share_all_search) {
  if (in_search_ && same_share_all_search) {
    const size_t at = remembered_at(model, free_milli);
    if (at < remembered_changes_.size() && remembered_changes_[at].search == search_) return remembered_changes_[at];
  }
  return work_out_fraction_changes(supply, model, free_milli, share_milli, same_share_all_search);
}

TesseraPolicy::FractionChanges TesseraPolicy::work_out_fraction_changes(const GpuSupply& supply, GpuModelId model,
                                                                        int free_milli, int share_milli,
                                                                        bool same_share_all_search) {
  const FractionChanges changes{search_, sum_of_squares_change(supply, model, free_milli, share_milli, gap_classes_),
                                gap_waste_.change(free_milli, share_milli)};
  if (!in_search_ || !same_share_all_search) return changes;
  const size_t at = remembered_at(model, free_milli);
  if (at >= remembered_changes_.size()) remembered_changes_.resize(remembered_at(model + 1, 0));
  remembered_changes_[at] = changes;
  return changes;
}

double TesseraPolicy::cluster_term(const NodeView& node, const PodSpec& pod, const GpuSupply& supply,
                                   const PlacementChoice& choice) {
  const int device = choice.device;
  const double cost = scarcity_.may_cost(node.spec) ? scarcity_.cost(node.spec, node.state, pod, supply) : 0;
  const double term = -cost + idle_group_term(pod, supply, choice);
  if (!pod.gpu.is_fractional() || device < 0 || !gpus_run_out_first(supply)) return term;
  const GpuDevice& chosen = node.spec.gpus[static_cast<size_t>(device)];
  const int share = pod.gpu.milli_on_device(chosen.memory_bytes);
  // A portion is the same share on every device; GPU memory is not, so it is not remembered.
  const FractionChanges changes = fraction_changes(supply, chosen.model, node.state.gpu_free_milli(device), share,
                                                   pod.gpu.kind == GpuRequest::Kind::kPortion);
  return term - kSquaresWeight * static_cast<double>(changes.squares) - kGapWeight * changes.waste;
}

}  // namespace tessera
