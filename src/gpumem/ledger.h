// The node's GPU memory ledger (ledger_layout.h) mapped into this process, and the operations on
// it that keep its rules (charge_rules.h) under concurrency: a robust process-shared mutex per
// device guards its numbers, a table lock guards slot allocation, and a process's liveness is an
// open-file-description lock that the kernel drops when it ends. Used by the interposer in every
// GPU process and by the node agent; depends on libc and pthreads only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpumem/charge_rules.h"
#include "gpumem/ledger_layout.h"

namespace tessera::gpumem {

struct EntrySpec {
  std::string uid;
  std::string name;
  int device = 0;
  std::int32_t priority = 0;
  Resolver resolver = Resolver::kWait;
  std::uint64_t request = 0;
  std::uint64_t limit = 0;
  // The swap time slice; negative: the default for a new entry, and unchanged for an existing one
  // (the node agent does not know it; the pod's processes set it, set_swap_slice).
  std::int64_t swap_slice_ns = -1;
};

// An entry as cached by a process: the slot and the generation it had, so a reused slot is noticed.
struct EntryHandle {
  int slot = -1;
  std::uint32_t generation = 0;
  int device = -1;
  bool valid() const { return slot >= 0; }
};

struct ChargeOutcome {
  ChargeDecision decision;
  bool stale_entry = false;       // the entry was removed or reused since the handle was taken
  std::uint32_t release_seq = 0;  // the device's release sequence when the decision was made
};

class Ledger {
 public:
  // Maps the ledger at `path`, creating and initialising the file when it is absent or empty.
  // Null with `error` set when it cannot (names the path and the reason).
  static std::unique_ptr<Ledger> open(const std::string& path, std::string* error);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  LedgerLayout& layout() { return *layout_; }
  const std::string& path() const { return path_; }

  // Sets a device's capacity when it has none yet, or always when `overwrite`.
  void set_capacity(int device, std::uint64_t bytes, bool overwrite);

  EntryHandle find_entry(const std::string& uid, int device);
  // Creates the (uid, device) entry or updates its request, limit, priority and resolver.
  // Invalid when the table is full.
  EntryHandle put_entry(const EntrySpec& spec);
  void set_swap_slice(EntryHandle entry, std::int64_t slice_ns);
  // Frees an entry that nothing uses any more; false while a live process still charges it.
  bool remove_entry(int slot);

  // Claims a process slot for this process and takes its liveness lock. -1 when full.
  int register_process(const std::string& uid, int pid);
  // After fork(): the child is not the process that registered.
  void forget_process_after_fork();
  int process_slot() const { return process_slot_; }

  // Charges `bytes` to the entry and this process when the rules grant it.
  ChargeOutcome charge(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);
  void release(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);

  // The swap resolver: an allocation that collides is placed in host memory, charged against the
  // pod's limit but not the device (false: past the limit); it moves back to the device when the
  // device has room for it again (move_to_device charges it there as a new allocation would be).
  bool charge_host(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);
  void release_host(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);
  // Moving back takes turns: refused (a collision) while another swap pod on the device has
  // waited for room longer (EntryRecord::waiting_since_ns).
  ChargeOutcome move_to_device(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);
  // The swap resolver making room: picks the swap pods on the entry's device whose allocations
  // move to host memory so that it gets `shortfall` bytes (choose_swap_outs), marks the entry as
  // waiting for its turn, and asks the chosen pods' processes to move out. The chosen slots; none
  // when another swap pod on the device has waited longer (the entry waits behind it).
  std::vector<int> move_out_for(EntryHandle entry, std::uint64_t shortfall, std::int64_t now_ns);
  // The swap resolver's time slice: when the entry waits for device room and has its turn, asks
  // the swap pods on the device that have held room above their request for their whole slice
  // (and are of no higher priority) to move out, as move_out_for does. `wake_in_ns`: how long
  // until the next such slice ends (0 when none runs), so that the waiter looks again then.
  struct Rotation {
    std::vector<int> moving_out;
    std::int64_t wake_in_ns = 0;
  };
  Rotation rotate_for(EntryHandle entry, std::uint64_t shortfall, std::int64_t now_ns);
  // An allocation of this process moved from the device to host memory: credited on the device,
  // charged in host memory. False when the entry is stale.
  bool move_to_host(EntryHandle entry, std::uint64_t bytes, std::int64_t now_ns);
  // The process moved out what it could for a move_out_for request (`moved`: something); true
  // while the entry still uses more than its request on the device (another of its processes, or
  // an allocation of this one not yet recorded, may hold the rest).
  bool finish_move_out(EntryHandle entry, bool moved);
  // Whether the entry's processes are asked to move out (an allocation recorded after its
  // process's helper thread answered the request must follow).
  bool move_out_requested(EntryHandle entry);
  // The entry no longer waits for a turn (its allocation was placed elsewhere or refused).
  void stop_waiting(EntryHandle entry);

  // What cuMemGetInfo shows the entry's pod: its limit as the total, and as free what it could
  // still be granted now (within its limit, its unused request and the device's room).
  struct View {
    std::uint64_t limit = 0;
    std::uint64_t available = 0;
  };
  View view(EntryHandle entry);

  // Sleeps until a release on `device` after the sequence `seen` (a ChargeOutcome's, taken under
  // the device lock, so no release between the decision and the sleep is missed), or `timeout_ns`.
  // Also woken when another pod asks a process charging the device for something (signal_processes):
  // a process whose allocations wait in host memory sleeps here, not on its own request word.
  void wait_for_release(int device, std::uint32_t seen, std::int64_t timeout_ns);
  std::uint32_t release_seq(int device) const { return layout_->devices[device].release_seq.load(); }
  // Counts an allocation that starts waiting, or one refused after waiting its whole timeout.
  void count_wait(EntryHandle entry, bool timed_out);

  // The priority resolver: picks the entries on the entry's device whose processes end so that
  // it gets `shortfall` bytes, marks them and asks their processes to end. The chosen slots.
  std::vector<int> evict_for(EntryHandle entry, std::uint64_t shortfall, std::int64_t now_ns);
  // The kRequest* bits other pods set for this process (the futex word its helper thread sleeps on).
  std::atomic<std::uint32_t>* end_request_word();

  bool process_alive(int slot) const;
  // Credits back what dead processes held; the bytes reclaimed.
  std::uint64_t reclaim_dead_processes();

 private:
  Ledger(std::string path, int fd, LedgerLayout* layout);
  void release_locked(int slot, int process, int device, std::uint64_t bytes, std::int64_t now_ns);
  void release_host_locked(int slot, int process, int device, std::uint64_t bytes);
  // The swap pods move_out_for and rotate_for choose for `requester`, marked; under the device lock.
  std::vector<int> choose_movers(const EntryRecord& requester, int device, std::uint64_t shortfall, std::int64_t now_ns,
                                 bool past_slice_only, std::int64_t* next_slice_end_ns);
  // Sets `request` in the helper-thread word of every live process charging one of `slots` on `device`.
  void signal_processes(int device, const std::vector<int>& slots, std::uint32_t request);
  // The entry behind a handle, under its device's lock held by the caller; null when stale.
  EntryRecord* live_entry(EntryHandle handle);

  std::string path_;
  int fd_ = -1;       // mapping and liveness queries
  int lock_fd_ = -1;  // holds this process's liveness lock (a separate open file description)
  int process_slot_ = -1;
  LedgerLayout* layout_ = nullptr;
};

// Locks a robust mutex of the ledger; when its holder died inside, `repair` runs first.
class LedgerLock {
 public:
  LedgerLock(pthread_mutex_t& mutex, void (*repair)(LedgerLayout&, int), LedgerLayout& layout, int device);
  ~LedgerLock();
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

 private:
  pthread_mutex_t& mutex_;
};

std::int64_t monotonic_ns();
const char* resolver_name(Resolver resolver);
// "wait", "priority" or "swap"; false for anything else.
bool parse_resolver(const std::string& text, Resolver* resolver);

}  // namespace tessera::gpumem
