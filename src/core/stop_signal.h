// SIGINT and SIGTERM as a stop flag for long-running commands (the scheduler, the dev cluster):
// the signals are blocked in every thread and one thread waits for them, so nothing runs in a
// signal handler and no global state is needed.
#pragma once

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <thread>

namespace tessera {

class StopSignal {
 public:
  // Call before starting any other thread, so that they inherit the blocked mask.
  StopSignal() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    waiter_ = std::thread([this] {
      int received = 0;
      sigwait(&signals_, &received);
      stop_ = true;
    });
  }
  ~StopSignal() {
    if (!stop_) pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes the waiter
    waiter_.join();
    pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
  }
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  const std::atomic<bool>& flag() const { return stop_; }
  bool stopped() const { return stop_; }

 private:
  sigset_t signals_{};
  std::atomic<bool> stop_ = false;
  std::thread waiter_;
};

}  // namespace tessera
