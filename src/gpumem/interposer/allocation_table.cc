#include "gpumem/interposer/allocation_table.h"

namespace tessera::gpumem {

void AllocationTable::insert(std::uint64_t key, Allocation allocation) {
  Shard& target = shard(key);
  std::lock_guard lock(target.mutex);
  target.allocations[key] = allocation;
}

std::optional<Allocation> AllocationTable::take(std::uint64_t key) {
  Shard& target = shard(key);
  std::lock_guard lock(target.mutex);
  auto found = target.allocations.find(key);
  if (found == target.allocations.end()) return std::nullopt;
  Allocation allocation = found->second;
  target.allocations.erase(found);
  return allocation;
}

}  // namespace tessera::gpumem
