// What this process has allocated through the interposer, by device pointer (or VMM handle), so
// that a free credits exactly what its allocation charged. Sharded by key: frees and allocations
// of different threads rarely meet on one lock.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

struct Allocation {
  std::uint64_t bytes = 0;
  EntryHandle entry;
};

class AllocationTable {
 public:
  void insert(std::uint64_t key, Allocation allocation);
  std::optional<Allocation> take(std::uint64_t key);

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
