// The rules an allocation is charged by, as pure functions of the numbers in the ledger, so that
// each can be tested alone (docs/gpu-memory.md §Rules):
//   1. a pod's use (on the device and, with the swap resolver, in host memory) never passes its
//      limit (past it: CUDA_ERROR_OUT_OF_MEMORY);
//   2. a device's requests are reserved: use under the request is always granted;
//   3. use between request and limit is granted while the device has room, where room is the
//      capacity less the sum over entries of max(used, request);
//   4. otherwise the allocation collides, and the pod's resolver decides.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::gpumem {

enum class ChargeVerdict { kGrant, kOverLimit, kCollision };

struct ChargeDecision {
  ChargeVerdict verdict;
  std::uint64_t commit_increase = 0;  // what the device's committed sum grows by on a grant
  std::uint64_t shortfall = 0;        // on a collision: bytes the device lacks
};

struct EntryUse {
  std::uint64_t used = 0;  // on the device
  std::uint64_t request = 0;
  std::uint64_t limit = 0;
  std::uint64_t in_host = 0;  // the swap resolver's allocations placed in host memory: limited, not on the device
};

ChargeDecision decide_charge(std::uint64_t capacity, std::uint64_t committed, EntryUse entry, std::uint64_t bytes);

// How much the device's committed sum shrinks when an entry releases `bytes` (<= its use).
std::uint64_t commit_decrease(EntryUse entry, std::uint64_t bytes);

// A pod on the same device whose processes the priority resolver may end.
struct VictimCandidate {
  int entry = -1;
  std::int32_t priority = 0;
  bool idle = false;
  std::uint64_t used = 0;  // what ending its processes frees
};

// The entries whose processes end so that a pod of `priority` gets `shortfall` bytes: only pods of
// lower priority or idle ones; lowest priority first, idle before busy at equal priority, larger
// use first to end as few as possible; then any chosen one the rest already cover is spared. Empty
// when even all candidates would not free enough (ending some would then gain nothing).
std::vector<int> choose_victims(const std::vector<VictimCandidate>& candidates, std::int32_t priority,
                                std::uint64_t shortfall);

// The swap resolver's choice: the swap pods whose allocations move to host memory so that a swap
// pod of `priority` gets `shortfall` bytes (each candidate's `used` is what moving it out frees:
// its use above its request, since requests stay reserved). Never a pod of higher priority; idle
// ones first, then lowest priority, then larger use; the chosen ones the rest cover are spared.
// Empty when all candidates together would not free enough.
std::vector<int> choose_swap_outs(const std::vector<VictimCandidate>& candidates, std::int32_t priority,
                                  std::uint64_t shortfall);

}  // namespace tessera::gpumem
