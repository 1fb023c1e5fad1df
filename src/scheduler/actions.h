// The actions of a cycle (SPEC §4), each a function of the cycle context. Allocate places what
// fits; reserve holds nodes for workloads that waited too long; the others make room by moving or evicting preemptible
// work, each attempt inside a statement that commits only if the pending workload then runs.
#pragma once

#include "scheduler/cycle_context.h"

namespace tessera {

void allocate(CycleContext& context);
void reserve(CycleContext& context);
void consolidate(CycleContext& context);
void reclaim(CycleContext& context);
void preempt(CycleContext& context);

}  // namespace tessera
