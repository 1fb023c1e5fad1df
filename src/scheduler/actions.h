// The actions of a cycle (docs/design.md §4), each a function of the cycle context. Allocate places what
// fits; consolidate, reclaim and preempt make room by moving or evicting preemptible work, each
// attempt inside a statement that commits only if the pending workload then runs; reserve, last,
// holds nodes for large workloads that waited too long for room.
#pragma once

#include "scheduler/cycle_context.h"

namespace tessera {

void allocate(CycleContext& context);
void consolidate(CycleContext& context);
void reclaim(CycleContext& context);
void preempt(CycleContext& context);
void reserve(CycleContext& context);
// Sets when each reservation's nodes are expected free, from what runs on them now.
void set_due_times(CycleContext& context, std::vector<Reservation>& reservations);

}  // namespace tessera
