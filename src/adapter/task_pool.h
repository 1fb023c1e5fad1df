// A fixed set of worker threads that run batches of independent tasks (API calls) and wait for
// the batch: bindings of thousands of pods overlap their round trips to the API server.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::adapter {

class TaskPool {
 public:
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Runs every task on the workers and returns when all have finished.
  void run_all(std::vector<std::function<void()>> tasks);
  // Queues a task and returns at once (events: nobody waits for them).
  void post(std::function<void()> task);
  size_t queued() const;

 private:
  void work();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tessera::adapter
