#include "engine/cluster_state.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <tuple>

namespace tessera {

namespace {

// Everything about a node that placement can see, except its usage: nodes equal in this are
// interchangeable. Only the labels some pod selects on count.
auto static_features(const NodeSpec& node, const std::set<std::string>& selector_keys) {
  std::vector<std::tuple<int, int64_t>> gpus;
  for (const GpuDevice& device : node.gpus) gpus.emplace_back(device.model, device.memory_bytes);
  std::vector<std::tuple<std::string, std::string, int>> taints;
  for (const Taint& taint : node.taints) taints.emplace_back(taint.key, taint.value, static_cast<int>(taint.effect));
  Labels selected;
  for (const std::string& key : selector_keys) {
    if (auto it = node.labels.find(key); it != node.labels.end()) selected.insert(*it);
  }
  return std::make_tuple(node.allocatable.cpu_milli, node.allocatable.memory_bytes, gpus, selected, taints,
                         node.schedulable, node.gpu_memory_overcommit_milli);
}

}  // namespace

ClusterState::ClusterState(std::shared_ptr<const ClusterSpec> spec)
    : spec_(std::move(spec)),
      topology_(*spec_),
      reservations_(spec_->nodes.size()),
      groups_(static_cast<int>(spec_->nodes.size())) {
  states_.reserve(spec_->nodes.size());
  gpu_free_milli_.assign(spec_->nodes.size(), 0);
  free_gpu_bits_.assign((spec_->nodes.size() + 63) / 64, 0);
  domain_free_milli_.assign(topology_.slot_count(), 0);
  for (const NodeSpec& node : spec_->nodes) {
    states_.push_back(NodeState::empty(node));
    set_gpu_free(static_cast<NodeIndex>(states_.size() - 1), states_.back().gpu_free_total());
    std::vector<GpuDevice> kinds;
    std::vector<int16_t> ordinals;
    for (const GpuDevice& device : node.gpus) {
      auto found = std::find(kinds.begin(), kinds.end(), device);
      if (found == kinds.end()) found = kinds.insert(kinds.end(), device);
      ordinals.push_back(static_cast<int16_t>(found - kinds.begin()));
    }
    device_kind_.push_back(std::move(ordinals));
    totals_.gpu_capacity_milli += int64_t{node.gpu_count()} * kMilliPerGpu;
    if (node.gpu_count() > 0) {
      supply_.count_idle(node.gpu_count(), 1);
      supply_.count_shape({node.gpus.front().model, node.gpu_count(), node.allocatable});
    }
    for (const GpuDevice& device : node.gpus) {
      supply_.capacity_milli[device.model] += kMilliPerGpu;
      supply_.free_milli[device.model] += kMilliPerGpu;
      supply_.free_total_milli += kMilliPerGpu;
      if (supply_.device_memory_bytes[device.model] == 0)
        supply_.device_memory_bytes[device.model] = device.memory_bytes;
    }
    totals_.capacity += node.allocatable;
  }
  supply_.cpu_capacity_milli = totals_.capacity.cpu_milli;
  classify_nodes();
}

void ClusterState::classify_nodes() {
  using Features = decltype(static_features(std::declval<NodeSpec>(), selector_keys_));
  std::map<Features, int32_t> classes;
  node_class_.clear();
  for (const NodeSpec& node : spec_->nodes) {
    auto [it, inserted] =
        classes.try_emplace(static_features(node, selector_keys_), static_cast<int32_t>(classes.size()));
    node_class_.push_back(it->second);
  }
  node_class_count_ = static_cast<int32_t>(classes.size());
  groups_.clear();
  for (NodeIndex node = 0; node < node_count(); ++node) regroup(node);
}

bool ClusterState::distinguishes_selector_of(const PodSpec& pod) const {
  for (const auto& [key, value] : pod.node_selector) {
    if (!selector_keys_.contains(key)) return false;
  }
  return true;
}

NodeStateKey ClusterState::key_of(NodeIndex node) const {
  const NodeState& state = node_state(node);
  NodeStateKey key{node_class_[static_cast<size_t>(node)],
                   state.free.cpu_milli,
                   state.free.memory_bytes,
                   {},
                   reservations_[static_cast<size_t>(node)].holder};
  const auto& kinds = device_kind_[static_cast<size_t>(node)];
  key.devices.reserve(kinds.size());
  for (size_t device = 0; device < kinds.size(); ++device) {
    key.devices.push_back(device_code(kinds[device], state, static_cast<int>(device)));
  }
  std::sort(key.devices.begin(), key.devices.end());
  return key;
}

PodId ClusterState::add_pod(PodSpec pod) {
  if (!distinguishes_selector_of(pod)) {
    for (const auto& [key, value] : pod.node_selector) selector_keys_.insert(key);
    classify_nodes();
  }
  pods_.push_back(PodEntry{std::move(pod), std::nullopt});
  return static_cast<PodId>(pods_.size() - 1);
}

bool ClusterState::fits(PodId id, const Binding& binding) const {
  const NodeState& state = node_state(binding.node);
  const PodSpec& spec = pod(id);
  if (state.free.cpu_milli < spec.request.cpu_milli || state.free.memory_bytes < spec.request.memory_bytes)
    return false;
  for (int16_t device : binding.devices) {
    if (device < 0 || static_cast<size_t>(device) >= state.gpu_used_milli.size() ||
        state.gpu_used_milli[static_cast<size_t>(device)] + binding.milli_per_device > kMilliPerGpu)
      return false;
    if (binding.burst_milli > 0 && state.device_limit_milli(device) + binding.milli_per_device + binding.burst_milli >
                                       node_spec(binding.node).gpu_memory_overcommit_milli)
      return false;
  }
  return true;
}

void ClusterState::bind(PodId id, Binding binding) {
  PodEntry& entry = pods_[static_cast<size_t>(id)];
  assert(!entry.binding && "binding a bound pod");
  NodeState& state = states_[static_cast<size_t>(binding.node)];
  state.apply(entry.spec, binding);
  set_gpu_free(binding.node, state.gpu_free_total());
  totals_.gpu_allocated_milli += binding.gpu_milli();
  totals_.allocated += entry.spec.request;
  take_from_supply(binding, 1);
  NodeIndex node = binding.node;
  entry.binding = std::move(binding);
  regroup(node);
}

void ClusterState::take_from_supply(const Binding& binding, int sign) {
  const NodeSpec& node = node_spec(binding.node);
  const NodeState& state = node_state(binding.node);  // already with the binding applied or released
  int idle_change = 0;                                // the node's idle devices now, less those before
  for (int16_t device : binding.devices) {
    const GpuModelId model = node.gpus[static_cast<size_t>(device)].model;
    supply_.free_milli[model] -= sign * binding.milli_per_device;
    const int now_used = state.gpu_used_milli[static_cast<size_t>(device)];
    const int was_used = now_used - sign * binding.milli_per_device;
    supply_.move_partial(model, was_used, now_used);
    idle_change += (now_used == 0 ? 1 : 0) - (was_used == 0 ? 1 : 0);
  }
  if (idle_change != 0) {
    const int idle_now = state.idle_devices();
    supply_.move_idle(idle_now - idle_change, idle_now);
  }
  supply_.free_total_milli -= sign * binding.gpu_milli();
}

void ClusterState::set_gpu_free(NodeIndex node, int64_t milli) {
  const auto index = static_cast<size_t>(node);
  const int64_t change = milli - gpu_free_milli_[index];
  for (uint32_t slot : topology_.slots_of(node)) domain_free_milli_[slot] += change;
  gpu_free_milli_[index] = milli;
  const uint64_t bit = uint64_t{1} << (index % 64);
  free_gpu_bits_[index / 64] = milli > 0 ? free_gpu_bits_[index / 64] | bit : free_gpu_bits_[index / 64] & ~bit;
}

void ClusterState::reserve(NodeIndex node, NodeReservation reservation) {
  NodeReservation& entry = reservations_[static_cast<size_t>(node)];
  reserved_nodes_ += (reservation.holder >= 0 ? 1 : 0) - (entry.holder >= 0 ? 1 : 0);
  const bool regroups = entry.holder != reservation.holder;
  if (regroups || entry.due != reservation.due) record_room_gained(node);
  entry = reservation;
  if (regroups) regroup(node);
}

Binding ClusterState::unbind(PodId id) {
  PodEntry& entry = pods_[static_cast<size_t>(id)];
  assert(entry.binding && "unbinding a pod that is not bound");
  Binding binding = std::move(*entry.binding);
  entry.binding.reset();
  NodeState& state = states_[static_cast<size_t>(binding.node)];
  state.release(entry.spec, binding);
  set_gpu_free(binding.node, state.gpu_free_total());
  totals_.gpu_allocated_milli -= binding.gpu_milli();
  totals_.allocated -= entry.spec.request;
  take_from_supply(binding, -1);
  regroup(binding.node);
  record_room_gained(binding.node);
  return binding;
}

void ClusterState::record_room_gained(NodeIndex node) {
  // Past this many entries the record starts again: a search for a pod that fit nowhere reads
  // the entries since, and beyond a few dozen searches afresh anyway.
  constexpr size_t kMaxRecorded = size_t{1} << 16;
  if (room_gained_.size() >= kMaxRecorded) {
    room_gained_.clear();
    ++room_epoch_;
  }
  room_gained_.push_back(node);
}

}  // namespace tessera
