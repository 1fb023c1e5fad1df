#include "kube/stop_watcher.h"

namespace tessera::kube {

StopWatcher::StopWatcher(const std::atomic<bool>& stop, std::function<void()> abort,
                         std::chrono::milliseconds poll_interval)
    : stop_(stop), abort_(std::move(abort)), poll_interval_(poll_interval), thread_([this] { run(); }) {}

StopWatcher::~StopWatcher() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  finished_changed_.notify_all();
  thread_.join();
}

void StopWatcher::run() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    if (stop_.load()) {
      lock.unlock();
      abort_();
      lock.lock();
      if (finished_) break;
    }
    finished_changed_.wait_for(lock, poll_interval_, [this] { return finished_; });
  }
}

}  // namespace tessera::kube
