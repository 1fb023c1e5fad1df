// What an allocation goes through before it reaches the driver: the charge, and on collision the
// pod's resolver (docs/gpu-memory.md §Resolvers):
//   wait     — sleep until a release on the device (a futex in the ledger), try again; refuse
//              after the timeout, so that no allocation waits forever on memory never freed;
//   priority — end the processes of lower-priority or idle pods that free enough (Ledger::evict_for),
//              then wait as above for their memory to come back;
//   swap     — not implemented: waits as `wait` does (docs/gpu-memory.md says what it needs).
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

enum class GateResult { kGranted, kOverLimit, kTimedOut, kStaleEntry };

GateResult acquire(Ledger& ledger, EntryHandle entry, std::uint64_t bytes, const GateOptions& options);

}  // namespace tessera::gpumem
