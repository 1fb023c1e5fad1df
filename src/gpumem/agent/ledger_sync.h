// Brings the ledger in line with the pods bound to the node: every entry they ask for written (a
// process of the pod may have made it first from its environment; the pod's annotations win),
// entries of pods that are gone removed once no process uses them, device capacities set, and the
// charge of processes that ended without freeing reclaimed.
#pragma once

#include <cstdint>
#include <vector>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct SyncReport {
  int entries_written = 0;
  int entries_removed = 0;
  int entries_kept_in_use = 0;  // of pods that are gone, still used by a live process
  int entries_not_written = 0;  // the entry table was full
  std::uint64_t reclaimed_bytes = 0;
};

// `capacities[d]`: device d's memory in bytes (0: leave what the ledger has).
SyncReport sync_ledger(Ledger& ledger, const std::vector<EntrySpec>& desired,
                       const std::vector<std::uint64_t>& capacities);

}  // namespace tessera::gpumem
