// The server's connection threads: one per open connection, started when a connection arrives
// and no thread is free, up to a cap; threads idle for a while go. httplib's fixed pool would
// let a few slow or idle clients hold every thread while the others wait in its queue.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::apiserver {

class ElasticThreadPool : public httplib::TaskQueue {
 public:
  // At most `max_threads` run at once (jobs beyond wait); `kept` idle ones stay for the next jobs.
  ElasticThreadPool(size_t max_threads, size_t kept, std::chrono::milliseconds idle_retirement);
  ~ElasticThreadPool() override;
  ElasticThreadPool(const ElasticThreadPool&) = delete;
  ElasticThreadPool& operator=(const ElasticThreadPool&) = delete;

  void enqueue(std::function<void()> job) override;
  // Runs the jobs still queued, then joins every thread.
  void shutdown() override;

 private:
  void work();
  void join_retired();

  const size_t max_threads_;
  const size_t kept_;
  const std::chrono::milliseconds idle_retirement_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::map<std::thread::id, std::thread> threads_;
  std::vector<std::thread::id> retired_;  // returned from work(), to be joined
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace tessera::apiserver
