// Device selection inside a node: which devices a whole-GPU pod takes, and the fractional
// candidates a policy compares (one per distinct device state, lowest index first).
#pragma once

#include <vector>

#include "core/node.h"
#include "core/node_state.h"
#include "core/pod.h"

namespace tessera {

// Idle devices of an allowed model, as many as the pod asks for (all there are where fewer): the
// lowest-index ones on a node of one kind of device; elsewhere those of the least memory first,
// then by model, then by index, never by which devices of a kind happen to be busy.
std::vector<int16_t> pick_whole_devices(const NodeSpec& node, const NodeState& state, const PodSpec& pod);

// Devices that can take the pod's fraction, skipping any whose model, memory, used portion and burst
// equal an earlier candidate's (they would score the same).
std::vector<int> fraction_candidates(const NodeSpec& node, const NodeState& state, const PodSpec& pod);
// The same into `candidates` (cleared first): a policy that scores every node group keeps one
// buffer for it instead of allocating one per score.
void fraction_candidates(const NodeSpec& node, const NodeState& state, const PodSpec& pod,
                         std::vector<int>& candidates);

// Whether device `a` comes before device `b` where a policy scores them alike: the one more used
// first, then by burst, model and memory, never by index. Nodes that hold the same on devices in
// different orders (one node group) then choose the same kind of device, and a policy's
// cluster-wide term, which reads the device, is the same on each of them.
bool fills_first(const NodeSpec& node, const NodeState& state, int a, int b);

// The state the node would be in after the pod is placed on `device` (fractional) or on its
// whole devices.
NodeState state_after(const NodeSpec& node, const NodeState& state, const PodSpec& pod, int device);

// The candidate device whose free portion after placement is smallest (best fit) or largest.
int tightest_device(const NodeSpec& node, const NodeState& state, const PodSpec& pod);
int loosest_device(const NodeSpec& node, const NodeState& state, const PodSpec& pod);

}  // namespace tessera
