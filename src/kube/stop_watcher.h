// Makes a blocking httplib request stoppable. httplib reads block in poll() for up to the read
// timeout and cannot look at a flag; a watch is idle for minutes between events, so a short
// read timeout would end healthy watches. Instead a helper thread looks at `stop` every poll
// interval and, once it is set, calls `abort` (httplib's thread-safe ClientImpl::stop(), which
// shuts the socket down and so wakes the blocked read) — repeatedly, in case the request had
// not yet opened its connection the first time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::kube {

class StopWatcher {
 public:
  StopWatcher(const std::atomic<bool>& stop, std::function<void()> abort,
              std::chrono::milliseconds poll_interval = std::chrono::milliseconds(100));
  ~StopWatcher();  // the guarded operation is over: ends and joins the helper thread
  StopWatcher(const StopWatcher&) = delete;
  StopWatcher& operator=(const StopWatcher&) = delete;

 private:
  void run();

  const std::atomic<bool>& stop_;
  std::function<void()> abort_;
  std::chrono::milliseconds poll_interval_;
  std::mutex mutex_;
  std::condition_variable finished_changed_;
  bool finished_ = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace tessera::kube
