// The interposer's state in one GPU process: the real driver, the ledger, the pod's settings, its
// entry per device and what it allocated. One per process — an LD_PRELOAD library has no caller
// to hand it to, so the exported CUDA functions (driver_hooks.cc) reach it through instance().
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "gpumem/allocation_gate.h"
#include "gpumem/cuda_driver_api.h"
#include "gpumem/interposer/allocation_table.h"
#include "gpumem/interposer/real_driver.h"
#include "gpumem/ledger.h"
#include "gpumem/pod_settings.h"

namespace tessera::gpumem {

// A charge taken before the driver is called; unmanaged when the pod has no ledger entry.
struct Charge {
  EntryHandle entry;
  bool in_host = false;  // the swap resolver's: the caller allocates in host memory instead
  bool movable = false;  // the swap resolver's: the caller allocates managed memory on the device
  int ordinal = -1;
  bool managed() const { return entry.valid(); }
};

class Interposer {
 public:
  static Interposer& instance();

  const RealDriver& driver() const { return driver_; }

  // The ordinal of the calling thread's current device, -1 without a context.
  int current_ordinal() const;
  // Charges `bytes` on the device of `ordinal`, running the pod's resolver on collision.
  // CUDA_SUCCESS (charged, or unmanaged) or CUDA_ERROR_OUT_OF_MEMORY. With `may_place_in_host`,
  // a swap pod's colliding allocation is charged to host memory instead (charge->in_host).
  CUresult charge(int ordinal, std::uint64_t bytes, Charge* charge, bool may_place_in_host = false);
  bool can_place_in_host() const {
    return driver_.mem_alloc_managed && driver_.mem_advise && driver_.mem_prefetch_async;
  }
  // Whether a stream-ordered free can end a managed allocation (after synchronising its stream).
  bool can_free_in_stream_order() const {
    return driver_.stream_synchronize != nullptr && driver_.stream_is_capturing != nullptr;
  }
  // Moves this process's allocations in host memory back to their device while it has room and
  // its pod has its turn (Ledger::move_to_device); when it has its turn but no room, asks the pods
  // whose time slice is over to move out (Ledger::rotate_for). What the caller may sleep on until
  // something changes: the device's release sequence as read before the attempt, and how long
  // until a slice ends.
  struct BringBack {
    int device = -1;  // -1: nothing waits in host memory (or another thread is moving)
    std::uint32_t release_seq = 0;
    std::int64_t wake_in_ns = 0;  // 0: no slice to wait for
  };
  BringBack bring_back();
  // Another swap pod asked for room: moves this process's movable allocations on the device to
  // host memory (prefetched there and synchronised before the device is credited). Runs on the
  // helper thread.
  void move_out();
  void uncharge(const Charge& charge, std::uint64_t bytes);
  // Adjusts a charge to what the driver actually allocated (cuMemAllocPitch rounds the pitch).
  CUresult recharge(const Charge& charge, std::uint64_t charged, std::uint64_t actual);
  void remember(std::uint64_t key, std::uint64_t bytes, const Charge& charge, bool vmm_handle);
  // A free takes its allocation's record before the driver frees it (the driver may hand the
  // same address to another thread at once), credits it after, or puts it back if the free failed.
  std::optional<Allocation> take(std::uint64_t key, bool vmm_handle);
  void settle_free(const std::optional<Allocation>& allocation, std::uint64_t key, bool vmm_handle, CUresult result);
  // The pod's view for cuMemGetInfo; false when the device is unmanaged.
  bool pod_memory_view(int ordinal, std::size_t* free, std::size_t* total);

 private:
  Interposer();
  EntryHandle entry_for(int ordinal);
  bool register_process();
  void after_fork_in_child();
  static void start_helper_thread(std::atomic<std::uint32_t>* word);
  // One round of the helper thread: acts on what other pods asked, or while allocations wait in
  // host memory brings them back, and sleeps until something may have changed.
  void help(std::atomic<std::uint32_t>& requests);
  // Runs `move` with `allocation`'s context current on the calling thread, then restores its own.
  template <typename Move>
  void in_context(const Allocation& allocation, Move move);

  RealDriver driver_;
  PodSettings settings_;
  std::unique_ptr<Ledger> ledger_;
  GateOptions gate_;
  std::mutex setup_mutex_;  // entry creation and process registration
  std::array<EntryHandle, kMaxDevices> entries_{};
  std::array<std::atomic<bool>, kMaxDevices> entry_known_{};
  std::atomic<bool> registered_{false};
  std::atomic<int> in_host_{0};  // allocations placed in host memory, not yet back
  std::mutex bring_back_mutex_;
  std::int64_t quiet_since_ns_ = 0;  // the helper thread: since when no release woke it
  AllocationTable allocations_;
  AllocationTable vmm_handles_;
};

}  // namespace tessera::gpumem
