// Making room for one pending workload by evicting (or moving) running work, the part shared by
// consolidate, reclaim and preempt. For each pod of the gang that fits nowhere, every node that
// could take it is tried: its eligible victims are taken youngest and lowest priority first
// (elastic extras before whole workloads) until the pod would fit, and the node whose victims
// cost least — lowest top priority, then fewest GPUs, then fewest pods — is chosen. Once the gang
// is placed, every victim whose old place is still free is put back (so none is evicted in
// vain), moved victims are re-placed, and the statement commits; if anything fails, nothing
// happened. Victims are whole workloads or single elastic extras, never part of a gang.
#pragma once

#include <functional>

#include "scheduler/cycle_context.h"

namespace tessera {

// Whether a unit may be taken, given what it holds; called with the ledger as it stands.
using VictimFilter = std::function<bool(const VictimUnit& unit, const ResourceVector& amount)>;

struct RoomRequest {
  WorkloadId pending = -1;
  Action action = Action::kReclaim;
  VictimFilter eligible;
  bool move_victims = false;  // consolidation: victims must be re-placed in the same statement
};

// True when the workload now runs (the statement committed through the context).
bool make_room(CycleContext& context, const RoomRequest& request);

}  // namespace tessera
