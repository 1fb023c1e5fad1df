// What this process has allocated through the interposer, by device pointer (or VMM handle), so
// that a free credits exactly what its allocation charged. Sharded by key: frees and allocations
// of different threads rarely meet on one lock.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "gpumem/cuda_driver_api.h"
#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct Allocation {
  std::uint64_t bytes = 0;
  EntryHandle entry;
  bool in_host = false;  // placed in host memory by the swap resolver
  int ordinal = -1;      // the process's device it belongs to
  // A swap pod's cuMemAlloc, made as managed memory so that it can move to host memory and back
  // at the same address; moved in `context`, the one it was allocated in.
  bool movable = false;
  CUcontext context = nullptr;
};

class AllocationTable {
 public:
  void insert(std::uint64_t key, Allocation allocation);
  std::optional<Allocation> take(std::uint64_t key);
  // Calls `visit(key, allocation)` on each allocation, one shard locked at a time; an allocation
  // for which it returns false is removed.
  template <typename Visit>
  void keep_if(Visit visit) {
    for (Shard& each : shards_) {
      std::lock_guard lock(each.mutex);
      for (auto it = each.allocations.begin(); it != each.allocations.end();) {
        it = visit(it->first, it->second) ? std::next(it) : each.allocations.erase(it);
      }
    }
  }

 private:
  static constexpr std::size_t kShards = 64;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::uint64_t, Allocation> allocations;
  };
  Shard& shard(std::uint64_t key) { return shards_[(key >> 8 ^ key >> 20) % kShards]; }
  std::array<Shard, kShards> shards_;
};

}  // namespace tessera::gpumem
