#include "gpumem/agent/ledger_sync.h"

#include <set>
#include <string>
#include <utility>

namespace tessera::gpumem {

SyncReport sync_ledger(Ledger& ledger, const std::vector<EntrySpec>& desired,
                       const std::vector<std::uint64_t>& capacities) {
  SyncReport report;
  for (std::size_t device = 0; device < capacities.size() && device < kMaxDevices; ++device) {
    if (capacities[device] > 0) ledger.set_capacity(static_cast<int>(device), capacities[device], true);
  }
  // Dead processes first: a gone pod's entry can be removed only once nothing charges it.
  report.reclaimed_bytes = ledger.reclaim_dead_processes();
  std::set<std::pair<std::string, int>> wanted;
  for (const EntrySpec& spec : desired) {
    wanted.emplace(spec.uid, spec.device);
    if (ledger.put_entry(spec).valid())
      ++report.entries_written;
    else
      ++report.entries_not_written;
  }
  for (int slot = 0; slot < kMaxEntries; ++slot) {
    const EntryRecord& entry = ledger.layout().entries[slot];
    if (entry.state != kSlotLive || wanted.count({entry.uid, entry.device}) > 0) continue;
    if (ledger.remove_entry(slot))
      ++report.entries_removed;
    else
      ++report.entries_kept_in_use;
  }
  return report;
}

}  // namespace tessera::gpumem
