#include "apiserver/elastic_thread_pool.h"

#include <signal.h>

namespace tessera::apiserver {

ElasticThreadPool::ElasticThreadPool(size_t max_threads, size_t kept, std::chrono::milliseconds idle_retirement)
    : max_threads_(std::max<size_t>(1, max_threads)), kept_(kept), idle_retirement_(idle_retirement) {}

ElasticThreadPool::~ElasticThreadPool() { shutdown(); }

void ElasticThreadPool::enqueue(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  join_retired();
  jobs_.push_back(std::move(job));
  if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
    std::thread thread([this] { work(); });
    const std::thread::id id = thread.get_id();
    threads_.emplace(id, std::move(thread));
  }
  wake_.notify_one();
}

void ElasticThreadPool::shutdown() {
  std::map<std::thread::id, std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
    retired_.clear();
  }
  wake_.notify_all();
  for (auto& [id, thread] : threads) {
    if (thread.joinable()) thread.join();
  }
}

// Called with mutex_ held. A retired thread left work() before it released the lock: joining it
// only waits for it to return.
void ElasticThreadPool::join_retired() {
  for (const std::thread::id& id : retired_) {
    auto found = threads_.find(id);
    if (found == threads_.end()) continue;
    found->second.join();
    threads_.erase(found);
  }
  retired_.clear();
}

void ElasticThreadPool::work() {
  // A write to a connection the client closed fails with EPIPE on this thread instead of raising
  // SIGPIPE, which would end the process (OpenSSL writes with plain write()).
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);

  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    const bool woken = wake_.wait_for(lock, idle_retirement_, [this] { return stopping_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) {
      if (stopping_) return;
      if (!woken && threads_.size() - retired_.size() > kept_) {
        retired_.push_back(std::this_thread::get_id());
        return;
      }
      continue;
    }
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace tessera::apiserver
