// Futex waits and wakes on a 32-bit word in memory shared between processes (the ledger file is
// mapped by many; the kernel keys a shared futex by the file and offset, so every mapping meets).
#pragma once

#include <atomic>
#include <cstdint>

namespace tessera::gpumem {

// Sleeps while *word == expected, at most timeout_ns; returns on a wake, a timeout or a change.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns);
void futex_wake_all(std::atomic<std::uint32_t>& word);

}  // namespace tessera::gpumem
