#include "gpumem/allocation_gate.h"

#include <algorithm>

namespace tessera::gpumem {
namespace {

GateResult place_in_host(Ledger& ledger, EntryHandle entry) {
  ledger.stop_waiting(entry);  // charge_host takes a turn again, as a pod with memory in host memory
  return GateResult::kPlaceInHost;
}

}  // namespace

GateResult acquire(Ledger& ledger, EntryHandle entry, std::uint64_t bytes, const GateOptions& options,
                   bool may_place_in_host) {
  const std::int64_t start = monotonic_ns();
  bool waited = false;
  bool evicted = false;
  bool moving_out = false;
  for (std::int64_t now = start;; now = monotonic_ns()) {
    const ChargeOutcome outcome = ledger.charge(entry, bytes, now);
    if (outcome.stale_entry) return GateResult::kStaleEntry;
    switch (outcome.decision.verdict) {
      case ChargeVerdict::kGrant:
        return GateResult::kGranted;
      case ChargeVerdict::kOverLimit:
        return GateResult::kOverLimit;
      case ChargeVerdict::kCollision:
        break;
    }
    const Resolver resolver = ledger.layout().entries[entry.slot].resolver;
    const bool swapping = resolver == Resolver::kSwap && may_place_in_host;
    if (swapping && !moving_out) {
      // Other swap pods move out to make room; when none can, this allocation goes to host memory.
      moving_out = !ledger.move_out_for(entry, outcome.decision.shortfall, now).empty();
      if (!moving_out) return place_in_host(ledger, entry);
    }
    const std::int64_t left = start + options.wait_timeout_ns - now;
    if (left <= 0) {
      if (swapping) return place_in_host(ledger, entry);  // the pods asked did not move out in time
      ledger.count_wait(entry, true);
      return GateResult::kTimedOut;
    }
    if (!waited) {
      ledger.count_wait(entry, false);
      waited = true;
    }
    if (resolver == Resolver::kPriority && !evicted) {
      evicted = !ledger.evict_for(entry, outcome.decision.shortfall, now).empty();
    }
    ledger.wait_for_release(entry.device, outcome.release_seq, std::min(left, options.poll_ns));
    // A release woke it: try again at once. Only a wait that nothing ended scans the process table
    // for holders that died (a death releases nothing).
    if (ledger.release_seq(entry.device) == outcome.release_seq) ledger.reclaim_dead_processes();
  }
}

}  // namespace tessera::gpumem
