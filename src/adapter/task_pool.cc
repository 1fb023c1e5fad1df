#include "adapter/task_pool.h"

#include <atomic>
#include <memory>

namespace tessera::adapter {

TaskPool::TaskPool(int threads) {
  for (int i = 0; i < std::max(threads, 1); ++i) workers_.emplace_back([this] { work(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void TaskPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to do
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void TaskPool::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

size_t TaskPool::queued() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

void TaskPool::run_all(std::vector<std::function<void()>> tasks) {
  if (tasks.empty()) return;
  struct Batch {
    std::mutex mutex;
    std::condition_variable done;
    size_t left = 0;
  };
  auto batch = std::make_shared<Batch>();
  batch->left = tasks.size();
  for (auto& task : tasks) {
    post([batch, task = std::move(task)] {
      task();
      std::lock_guard lock(batch->mutex);
      if (--batch->left == 0) batch->done.notify_all();
    });
  }
  std::unique_lock lock(batch->mutex);
  batch->done.wait(lock, [&] { return batch->left == 0; });
}

}  // namespace tessera::adapter
