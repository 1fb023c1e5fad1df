// What an allocation goes through before it reaches the driver: the charge, and on collision the
// pod's resolver (docs/gpu-memory.md §Resolvers):
//   wait     — sleep until a release on the device (a futex in the ledger), try again; refuse
//              after the timeout, so that no allocation waits forever on memory never freed;
//   priority — end the processes of lower-priority or idle pods that free enough (Ledger::evict_for),
//              then wait as above for their memory to come back;
//   swap     — other swap pods of no higher priority move allocations to host memory to make room
//              (Ledger::move_out_for; their processes' helper threads do it), and the allocation
//              waits as above for that room; when no pod can move out, or they do not within the
//              timeout, it is placed in host memory itself (kPlaceInHost: the caller allocates it
//              there and charges it with Ledger::charge_host), to move back when room frees. An
//              allocation that cannot be placed in host memory waits as `wait` does.
// Every wait also reclaims the charge of processes that died, so a crashed pod never blocks others.
#pragma once

#include <cstdint>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct GateOptions {
  std::int64_t wait_timeout_ns = std::int64_t{30} * 1000000000;
  // A sleeper wakes at least this often to look for dead processes, whose end releases nothing.
  std::int64_t poll_ns = std::int64_t{20} * 1000000;
};

enum class GateResult { kGranted, kOverLimit, kTimedOut, kStaleEntry, kPlaceInHost };

// `may_place_in_host`: the caller can allocate in host memory what collides (the swap resolver).
GateResult acquire(Ledger& ledger, EntryHandle entry, std::uint64_t bytes, const GateOptions& options,
                   bool may_place_in_host = false);

}  // namespace tessera::gpumem
