// Runs independent jobs (policy x seed replays) on a few threads; results keep job order.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace tessera {

template <typename T>
std::vector<T> run_in_parallel(size_t jobs, int threads, const std::function<T(size_t)>& job) {
  std::vector<std::optional<T>> slots(jobs);
  unsigned workers = threads > 0 ? static_cast<unsigned>(threads) : std::max(1U, std::thread::hardware_concurrency());
  workers = std::min<unsigned>(workers, static_cast<unsigned>(std::max<size_t>(jobs, 1)));
  std::atomic<size_t> next{0};
  {
    std::vector<std::jthread> pool;  // joined at the end of this scope
    for (unsigned w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < jobs; i = next++) slots[i].emplace(job(i));
      });
    }
  }
  std::vector<T> results;
  results.reserve(jobs);
  for (auto& slot : slots) results.push_back(std::move(*slot));
  return results;
}

}  // namespace tessera
