// The ledger of GPU memory on one node, as it lies in a shared file (mapped by the node agent and
// by every interposed process on the node): per device its capacity and what is committed on it,
// per (pod, device) entry the pod's request, limit, priority, resolver and use, per process what
// it holds. Plain data only — no pointers, no virtual functions — because processes in different
// containers map it at different addresses. docs/gpu-memory.md describes the rules it keeps.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace tessera::gpumem {

inline constexpr std::uint32_t kLedgerMagic = 0x314d4754;  // "TGM1"
inline constexpr std::uint32_t kLedgerVersion = 3;
inline constexpr int kMaxDevices = 16;
inline constexpr int kMaxEntries = 256;
inline constexpr int kMaxProcesses = 1024;
inline constexpr int kUidBytes = 64;
inline constexpr int kNameBytes = 128;
// Each live process holds an open-file-description lock on one byte of the ledger file at this
// offset plus its slot: the kernel drops it when the process ends, however it ends, and any
// process on the node (whatever its PID namespace) can test it.
inline constexpr std::int64_t kProcessLockOffset = std::int64_t{1} << 32;

enum class Resolver : std::uint32_t { kWait = 0, kPriority = 1, kSwap = 2 };

// What a (pod, device) entry may do on collision, and the numbers the agent reports for it.
struct EntryRecord {
  std::uint32_t state;       // kSlotFree or kSlotLive; changed under the table lock
  std::uint32_t generation;  // bumped each time the slot is reused, so cached indices can tell
  char uid[kUidBytes];       // the pod's UID (or a name given by TESSERA_POD_UID)
  char name[kNameBytes];     // "namespace/name", for metrics
  std::int32_t device;       // node device index
  std::int32_t priority;     // the pod's spec.priority
  Resolver resolver;
  std::uint32_t evict_requested;  // set when a higher-priority pod ends this one's processes
  std::uint64_t request;          // bytes always granted (reserved on the device)
  std::uint64_t limit;            // bytes never exceeded
  // The rest change under the device's lock.
  std::uint64_t used;
  std::uint64_t peak_used;
  std::int64_t last_active_ns;  // CLOCK_MONOTONIC of the last charge or release
  std::uint64_t grants;
  std::uint64_t waits;       // allocations that waited for memory
  std::uint64_t wait_ooms;   // allocations refused after waiting their whole timeout
  std::uint64_t limit_ooms;  // allocations refused for passing the limit
  std::uint64_t evictions;   // times this pod's processes were ended for another pod
  std::uint64_t in_host;     // swap resolver: bytes of allocations placed in host memory on collision
  std::uint64_t swap_outs;   // allocations placed in host memory
  std::uint64_t swap_ins;    // allocations moved back to the device
  // The swap resolver's turn: when the entry started waiting for device room (an allocation that
  // collided, or allocations moved to host memory); 0 when it waits for nothing. Allocations move
  // back to the device oldest waiter first.
  std::int64_t waiting_since_ns;
  std::uint32_t move_out_requested;  // another swap pod asked this one's processes to move out
  std::uint32_t moved_out;           // times its processes moved their allocations to host memory
  // The swap resolver's time slice: how long the entry may keep device room above its request
  // while other swap pods wait for it, counted from when it last got that room.
  std::int64_t swap_slice_ns;
  std::int64_t resident_since_ns;
};

// A swap pod's time slice when its pod names none (TESSERA_GPU_MEMORY_SWAP_SLICE_MS): long
// against the seconds a move of tens of GiB across the bus takes, short against a queue of users.
inline constexpr std::int64_t kDefaultSwapSliceNs = std::int64_t{10} * 1000000000;

struct DeviceRecord {
  pthread_mutex_t lock;    // robust and process-shared: a holder that dies does not wedge the node
  std::uint64_t capacity;  // bytes; 0 until the agent or the first process sets it
  // Sum over the device's entries of max(used, request): requests are reserved whether used or
  // not, so "under the request" never waits, and committed <= capacity means no overshoot.
  std::uint64_t committed;
  std::uint64_t used;
  std::uint64_t peak_used;
  std::atomic<std::uint32_t> release_seq;  // futex word: bumped on every release, waiters sleep on it
  std::atomic<std::uint32_t> waiting;      // allocations about to sleep or asleep on release_seq
};

struct ProcessRecord {
  std::uint32_t state;                       // kSlotFree or kSlotLive; under the table lock
  std::int32_t pid;                          // in the process's own PID namespace, for reports only
  char uid[kUidBytes];                       // the pod it charges
  std::atomic<std::uint32_t> end_requested;  // futex word of kRequest* bits for the process's helper thread
  std::uint32_t reserved;
  std::int32_t entry_of[kMaxDevices];  // entry slot charged per device, -1: none
  std::uint64_t used[kMaxDevices];     // bytes it holds per device (under that device's lock)
  std::uint64_t in_host[kMaxDevices];  // bytes its swap allocations for that device hold in host memory
};

// What a process's helper thread is asked to do (bits of ProcessRecord::end_requested).
inline constexpr std::uint32_t kRequestEnd = 1;      // the priority resolver: end the process
inline constexpr std::uint32_t kRequestMoveOut = 2;  // the swap resolver: move allocations to host memory

inline constexpr std::uint32_t kSlotFree = 0;
inline constexpr std::uint32_t kSlotLive = 1;

struct LedgerLayout {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t ready;  // 1 once the creator has initialised the locks
  std::uint32_t reserved;
  std::int64_t idle_after_ns;  // an entry with use and no charge or release for this long is idle
  pthread_mutex_t table_lock;  // slot allocation and reclaim; taken before any device lock
  DeviceRecord devices[kMaxDevices];
  EntryRecord entries[kMaxEntries];
  ProcessRecord processes[kMaxProcesses];
};

}  // namespace tessera::gpumem
