#include "gpumem/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "gpumem/futex.h"

namespace tessera::gpumem {
namespace {

constexpr std::int64_t kDefaultIdleAfterNs = std::int64_t{600} * 1000000000;

void init_robust_mutex(pthread_mutex_t& mutex) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&mutex, &attributes);
  pthread_mutexattr_destroy(&attributes);
}

void initialise(LedgerLayout& layout) {
  std::memset(static_cast<void*>(&layout), 0, sizeof(layout));
  layout.magic = kLedgerMagic;
  layout.version = kLedgerVersion;
  layout.idle_after_ns = kDefaultIdleAfterNs;
  init_robust_mutex(layout.table_lock);
  for (DeviceRecord& device : layout.devices) init_robust_mutex(device.lock);
  for (ProcessRecord& process : layout.processes) {
    for (std::int32_t& entry : process.entry_of) entry = -1;
  }
  std::atomic_thread_fence(std::memory_order_release);
  layout.ready = 1;
}

// A holder died inside a device's critical section: the processes' own counts are written first,
// so the entries' and the device's sums are rebuilt from them.
void repair_device(LedgerLayout& layout, int device) {
  DeviceRecord& record = layout.devices[device];
  record.used = 0;
  record.committed = 0;
  for (int slot = 0; slot < kMaxEntries; ++slot) {
    EntryRecord& entry = layout.entries[slot];
    if (entry.state != kSlotLive || entry.device != device) continue;
    entry.used = 0;
    entry.in_host = 0;
    for (const ProcessRecord& process : layout.processes) {
      if (process.state == kSlotLive && process.entry_of[device] == slot) {
        entry.used += process.used[device];
        entry.in_host += process.in_host[device];
      }
    }
    record.used += entry.used;
    record.committed += entry.used > entry.request ? entry.used : entry.request;
  }
}

void repair_nothing(LedgerLayout&, int) {}

void copy_text(char* target, std::size_t capacity, const std::string& text) {
  std::size_t length = text.size() < capacity - 1 ? text.size() : capacity - 1;
  std::memcpy(target, text.data(), length);
  target[length] = '\0';
}

bool valid_device(int device) { return device >= 0 && device < kMaxDevices; }

// Wakes whoever sleeps on the device's release sequence: allocations waiting for room, and the
// helper threads of swap pods waiting in line (a release, or the line moving on).
void wake_sleepers(DeviceRecord& device) {
  device.release_seq.fetch_add(1);
  if (device.waiting.load() > 0) futex_wake_all(device.release_seq);
}

// An entry that waited for device room no longer does: the next swap pod in line has its turn,
// and may sleep until something tells it so.
void end_wait(DeviceRecord& device, EntryRecord& entry) {
  if (entry.waiting_since_ns == 0) return;
  entry.waiting_since_ns = 0;
  wake_sleepers(device);
}

// The swap resolver's rotation: an entry moves allocations back to the device only when no other
// swap entry on the device has waited for room longer (ties: lower slot first), so pods that were
// moved out come back in the order they left and a pod that made room is served before them.
bool has_turn(const LedgerLayout& layout, int slot) {
  const EntryRecord& self = layout.entries[slot];
  for (int other = 0; other < kMaxEntries; ++other) {
    const EntryRecord& entry = layout.entries[other];
    if (other == slot || entry.state != kSlotLive || entry.device != self.device || entry.resolver != Resolver::kSwap ||
        entry.waiting_since_ns == 0) {
      continue;
    }
    if (self.waiting_since_ns == 0 || entry.waiting_since_ns < self.waiting_since_ns ||
        (entry.waiting_since_ns == self.waiting_since_ns && other < slot)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::int64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

const char* resolver_name(Resolver resolver) {
  switch (resolver) {
    case Resolver::kPriority:
      return "priority";
    case Resolver::kSwap:
      return "swap";
    case Resolver::kWait:
      break;
  }
  return "wait";
}

bool parse_resolver(const std::string& text, Resolver* resolver) {
  if (text == "wait")
    *resolver = Resolver::kWait;
  else if (text == "priority")
    *resolver = Resolver::kPriority;
  else if (text == "swap")
    *resolver = Resolver::kSwap;
  else
    return false;
  return true;
}

LedgerLock::LedgerLock(pthread_mutex_t& mutex, void (*repair)(LedgerLayout&, int), LedgerLayout& layout, int device)
    : mutex_(mutex) {
  if (pthread_mutex_lock(&mutex_) == EOWNERDEAD) {
    repair(layout, device);
    pthread_mutex_consistent(&mutex_);
  }
}

LedgerLock::~LedgerLock() { pthread_mutex_unlock(&mutex_); }

std::unique_ptr<Ledger> Ledger::open(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "ledger " + path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  fchmod(fd, 0666);    // processes of every container on the node, whatever their user, charge it
  flock(fd, LOCK_EX);  // one creator initialises; the others wait for it
  struct stat info;
  if (fstat(fd, &info) != 0 ||
      (static_cast<std::size_t>(info.st_size) < sizeof(LedgerLayout) && ftruncate(fd, sizeof(LedgerLayout)) != 0)) {
    *error = "ledger " + path + ": cannot size it to " + std::to_string(sizeof(LedgerLayout)) +
             " bytes: " + std::strerror(errno);
    flock(fd, LOCK_UN);
    ::close(fd);
    return nullptr;
  }
  void* mapping = mmap(nullptr, sizeof(LedgerLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    *error = "ledger " + path + ": cannot map it: " + std::strerror(errno);
    flock(fd, LOCK_UN);
    ::close(fd);
    return nullptr;
  }
  auto* layout = static_cast<LedgerLayout*>(mapping);
  if (layout->magic != kLedgerMagic || layout->ready != 1) {
    initialise(*layout);
  } else if (layout->version != kLedgerVersion) {
    *error = "ledger " + path + ": version " + std::to_string(layout->version) + ", this library reads version " +
             std::to_string(kLedgerVersion) + " (restart the node agent and the pods with matching versions)";
    munmap(mapping, sizeof(LedgerLayout));
    flock(fd, LOCK_UN);
    ::close(fd);
    return nullptr;
  }
  flock(fd, LOCK_UN);
  return std::unique_ptr<Ledger>(new Ledger(path, fd, layout));
}

Ledger::Ledger(std::string path, int fd, LedgerLayout* layout) : path_(std::move(path)), fd_(fd), layout_(layout) {}

Ledger::~Ledger() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  munmap(layout_, sizeof(LedgerLayout));
  ::close(fd_);
}

void Ledger::set_capacity(int device, std::uint64_t bytes, bool overwrite) {
  if (!valid_device(device)) return;
  DeviceRecord& record = layout_->devices[device];
  LedgerLock lock(record.lock, repair_device, *layout_, device);
  if (record.capacity == 0 || overwrite) record.capacity = bytes;
}

EntryHandle Ledger::find_entry(const std::string& uid, int device) {
  LedgerLock lock(layout_->table_lock, repair_nothing, *layout_, 0);
  for (int slot = 0; slot < kMaxEntries; ++slot) {
    const EntryRecord& entry = layout_->entries[slot];
    if (entry.state == kSlotLive && entry.device == device && uid == entry.uid) {
      return {slot, entry.generation, device};
    }
  }
  return {};
}

EntryHandle Ledger::put_entry(const EntrySpec& spec) {
  if (!valid_device(spec.device) || spec.uid.empty()) return {};
  LedgerLock table(layout_->table_lock, repair_nothing, *layout_, 0);
  int found = -1;
  int free_slot = -1;
  for (int slot = 0; slot < kMaxEntries; ++slot) {
    const EntryRecord& entry = layout_->entries[slot];
    if (entry.state == kSlotLive && entry.device == spec.device && spec.uid == entry.uid) {
      found = slot;
      break;
    }
    if (entry.state == kSlotFree && free_slot < 0) free_slot = slot;
  }
  const int slot = found >= 0 ? found : free_slot;
  if (slot < 0) return {};
  DeviceRecord& device = layout_->devices[spec.device];
  LedgerLock lock(device.lock, repair_device, *layout_, spec.device);
  EntryRecord& entry = layout_->entries[slot];
  if (found < 0) {
    const std::uint32_t generation = entry.generation + 1;
    std::memset(static_cast<void*>(&entry), 0, sizeof(entry));
    entry.generation = generation;
    copy_text(entry.uid, sizeof(entry.uid), spec.uid);
    entry.device = spec.device;
    entry.last_active_ns = monotonic_ns();
    entry.swap_slice_ns = kDefaultSwapSliceNs;
    entry.state = kSlotLive;
  }
  if (spec.swap_slice_ns >= 0) entry.swap_slice_ns = spec.swap_slice_ns;
  device.committed -= entry.used > entry.request ? entry.used : entry.request;
  entry.request = spec.request;
  entry.limit = spec.limit;
  device.committed += entry.used > entry.request ? entry.used : entry.request;
  entry.priority = spec.priority;
  entry.resolver = spec.resolver;
  copy_text(entry.name, sizeof(entry.name), spec.name.empty() ? spec.uid : spec.name);
  return {slot, entry.generation, spec.device};
}

void Ledger::set_swap_slice(EntryHandle handle, std::int64_t slice_ns) {
  if (!handle.valid() || !valid_device(handle.device) || slice_ns < 0) return;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  if (EntryRecord* entry = live_entry(handle)) entry->swap_slice_ns = slice_ns;
}

bool Ledger::remove_entry(int slot) {
  if (slot < 0 || slot >= kMaxEntries) return false;
  LedgerLock table(layout_->table_lock, repair_nothing, *layout_, 0);
  EntryRecord& entry = layout_->entries[slot];
  if (entry.state != kSlotLive) return true;
  for (const ProcessRecord& process : layout_->processes) {
    if (process.state == kSlotLive && process.entry_of[entry.device] == slot) return false;
  }
  DeviceRecord& device = layout_->devices[entry.device];
  LedgerLock lock(device.lock, repair_device, *layout_, entry.device);
  if (entry.used > 0 || entry.in_host > 0) return false;
  device.committed -= entry.request;
  entry.state = kSlotFree;
  return true;
}

int Ledger::register_process(const std::string& uid, int pid) {
  if (process_slot_ >= 0) return process_slot_;
  if (lock_fd_ < 0) lock_fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (lock_fd_ < 0) return -1;
  LedgerLock table(layout_->table_lock, repair_nothing, *layout_, 0);
  for (int slot = 0; slot < kMaxProcesses; ++slot) {
    ProcessRecord& process = layout_->processes[slot];
    if (process.state != kSlotFree) continue;
    struct flock hold {};
    hold.l_type = F_WRLCK;
    hold.l_whence = SEEK_SET;
    hold.l_start = kProcessLockOffset + slot;
    hold.l_len = 1;
    if (fcntl(lock_fd_, F_OFD_SETLK, &hold) != 0) continue;  // held: an ending process not reclaimed yet
    process.pid = pid;
    copy_text(process.uid, sizeof(process.uid), uid);
    process.end_requested.store(0);
    for (int device = 0; device < kMaxDevices; ++device) {
      process.entry_of[device] = -1;
      process.used[device] = 0;
      process.in_host[device] = 0;
    }
    process.state = kSlotLive;  // last: a slot is live only once its lock is held
    process_slot_ = slot;
    return slot;
  }
  return -1;
}

void Ledger::forget_process_after_fork() {
  // The parent's lock stays held through its own descriptor; the child's copy must not keep it.
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
  process_slot_ = -1;
}

ChargeOutcome Ledger::charge(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return {{ChargeVerdict::kOverLimit}, true};
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord& entry = layout_->entries[handle.slot];
  ChargeOutcome outcome{};
  outcome.release_seq = device.release_seq.load();
  if (entry.state != kSlotLive || entry.generation != handle.generation) {
    outcome.stale_entry = true;
    return outcome;
  }
  outcome.decision =
      decide_charge(device.capacity, device.committed, {entry.used, entry.request, entry.limit, entry.in_host}, bytes);
  if (outcome.decision.verdict == ChargeVerdict::kOverLimit) {
    ++entry.limit_ooms;
  } else if (outcome.decision.verdict == ChargeVerdict::kGrant) {
    ProcessRecord& process = layout_->processes[process_slot_];
    process.entry_of[handle.device] = handle.slot;
    process.used[handle.device] += bytes;  // first: repair_device rebuilds the sums from these
    entry.used += bytes;
    if (entry.used > entry.peak_used) entry.peak_used = entry.used;
    entry.last_active_ns = now_ns;
    ++entry.grants;
    // Its slice runs from when it got room after waiting (or first got room at all).
    if (entry.waiting_since_ns != 0 || entry.resident_since_ns == 0) entry.resident_since_ns = now_ns;
    if (entry.in_host == 0) end_wait(device, entry);  // served: its turn is over
    device.used += bytes;
    if (device.used > device.peak_used) device.peak_used = device.used;
    device.committed += outcome.decision.commit_increase;
  }
  return outcome;
}

EntryRecord* Ledger::live_entry(EntryHandle handle) {
  EntryRecord& entry = layout_->entries[handle.slot];
  return entry.state == kSlotLive && entry.generation == handle.generation ? &entry : nullptr;
}

bool Ledger::charge_host(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return false;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord* entry = live_entry(handle);
  if (entry == nullptr) return false;
  if (bytes > entry->limit || entry->used + entry->in_host > entry->limit - bytes) {
    ++entry->limit_ooms;
    return false;
  }
  ProcessRecord& process = layout_->processes[process_slot_];
  process.entry_of[handle.device] = handle.slot;
  process.in_host[handle.device] += bytes;  // first: repair_device rebuilds the sums from these
  entry->in_host += bytes;
  entry->last_active_ns = now_ns;
  if (entry->waiting_since_ns == 0) entry->waiting_since_ns = now_ns;
  ++entry->swap_outs;
  return true;
}

void Ledger::release_host(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  release_host_locked(handle.slot, process_slot_, handle.device, bytes);
  layout_->entries[handle.slot].last_active_ns = now_ns;
}

void Ledger::release_host_locked(int slot, int process_slot, int device, std::uint64_t bytes) {
  EntryRecord& entry = layout_->entries[slot];
  ProcessRecord& process = layout_->processes[process_slot];
  if (bytes > process.in_host[device]) bytes = process.in_host[device];
  if (bytes > entry.in_host) bytes = entry.in_host;
  process.in_host[device] -= bytes;
  entry.in_host -= bytes;
  if (entry.in_host == 0) end_wait(layout_->devices[device], entry);
}

ChargeOutcome Ledger::move_to_device(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return {{ChargeVerdict::kOverLimit}, true};
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  ChargeOutcome outcome{};
  outcome.release_seq = device.release_seq.load();
  EntryRecord* entry = live_entry(handle);
  if (entry == nullptr) {
    outcome.stale_entry = true;
    return outcome;
  }
  if (!has_turn(*layout_, handle.slot)) {
    outcome.decision = {ChargeVerdict::kCollision, 0, bytes};
    return outcome;
  }
  // The bytes leave host memory as they reach the device: the limit sees them once.
  const std::uint64_t staying = entry->in_host > bytes ? entry->in_host - bytes : 0;
  outcome.decision =
      decide_charge(device.capacity, device.committed, {entry->used, entry->request, entry->limit, staying}, bytes);
  if (outcome.decision.verdict != ChargeVerdict::kGrant) return outcome;
  release_host_locked(handle.slot, process_slot_, handle.device, bytes);
  ProcessRecord& process = layout_->processes[process_slot_];
  process.used[handle.device] += bytes;
  entry->used += bytes;
  if (entry->used > entry->peak_used) entry->peak_used = entry->used;
  entry->last_active_ns = now_ns;
  entry->resident_since_ns = now_ns;  // its slice starts again
  ++entry->swap_ins;
  device.used += bytes;
  if (device.used > device.peak_used) device.peak_used = device.used;
  device.committed += outcome.decision.commit_increase;
  return outcome;
}

std::vector<int> Ledger::choose_movers(const EntryRecord& requester, int device, std::uint64_t shortfall,
                                       std::int64_t now_ns, bool past_slice_only, std::int64_t* next_slice_end_ns) {
  std::vector<VictimCandidate> candidates;
  for (int slot = 0; slot < kMaxEntries; ++slot) {
    const EntryRecord& entry = layout_->entries[slot];
    if (entry.state != kSlotLive || entry.device != device || entry.resolver != Resolver::kSwap ||
        entry.move_out_requested != 0 || entry.used <= entry.request || std::strcmp(entry.uid, requester.uid) == 0) {
      continue;
    }
    if (past_slice_only) {
      const std::int64_t slice_end = entry.resident_since_ns + entry.swap_slice_ns;
      if (slice_end > now_ns) {
        if (entry.priority <= requester.priority && (*next_slice_end_ns == 0 || slice_end < *next_slice_end_ns)) {
          *next_slice_end_ns = slice_end;
        }
        continue;
      }
    }
    const bool idle = now_ns - entry.last_active_ns > layout_->idle_after_ns;
    candidates.push_back({slot, entry.priority, idle, entry.used - entry.request});
  }
  std::vector<int> chosen = choose_swap_outs(candidates, requester.priority, shortfall);
  for (int slot : chosen) layout_->entries[slot].move_out_requested = 1;
  return chosen;
}

std::vector<int> Ledger::move_out_for(EntryHandle handle, std::uint64_t shortfall, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device)) return {};
  std::vector<int> chosen;
  {
    DeviceRecord& device = layout_->devices[handle.device];
    LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
    EntryRecord* requester = live_entry(handle);
    if (requester == nullptr) return {};
    if (requester->waiting_since_ns == 0) requester->waiting_since_ns = now_ns;
    // Behind swap pods that already wait, it takes its place in line: the room is theirs first.
    if (!has_turn(*layout_, handle.slot)) return {};
    std::int64_t unused = 0;
    chosen = choose_movers(*requester, handle.device, shortfall, now_ns, false, &unused);
  }
  signal_processes(handle.device, chosen, kRequestMoveOut);
  return chosen;
}

Ledger::Rotation Ledger::rotate_for(EntryHandle handle, std::uint64_t shortfall, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device)) return {};
  Rotation rotation;
  {
    DeviceRecord& device = layout_->devices[handle.device];
    LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
    EntryRecord* requester = live_entry(handle);
    // Only the head of the line asks: the others would move pods out for room they may not take.
    if (requester == nullptr || requester->waiting_since_ns == 0 || !has_turn(*layout_, handle.slot)) return {};
    std::int64_t next_slice_end = 0;
    rotation.moving_out = choose_movers(*requester, handle.device, shortfall, now_ns, true, &next_slice_end);
    if (rotation.moving_out.empty() && next_slice_end > 0) rotation.wake_in_ns = next_slice_end - now_ns;
  }
  signal_processes(handle.device, rotation.moving_out, kRequestMoveOut);
  return rotation;
}

bool Ledger::move_to_host(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return false;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord* entry = live_entry(handle);
  if (entry == nullptr) return false;
  ProcessRecord& process = layout_->processes[process_slot_];
  process.in_host[handle.device] += bytes;  // before the release: the limit never sees the bytes twice
  entry->in_host += bytes;
  if (entry->waiting_since_ns == 0) entry->waiting_since_ns = now_ns;
  ++entry->swap_outs;
  release_locked(handle.slot, process_slot_, handle.device, bytes, now_ns);
  return true;
}

bool Ledger::move_out_requested(EntryHandle handle) {
  if (!handle.valid() || !valid_device(handle.device)) return false;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  const EntryRecord* entry = live_entry(handle);
  return entry != nullptr && entry->move_out_requested != 0;
}

bool Ledger::finish_move_out(EntryHandle handle, bool moved) {
  if (!handle.valid() || !valid_device(handle.device)) return false;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord* entry = live_entry(handle);
  if (entry == nullptr) return false;
  if (moved) ++entry->moved_out;
  if (entry->move_out_requested != 0 && entry->used > entry->request) return true;
  entry->move_out_requested = 0;
  return false;
}

void Ledger::stop_waiting(EntryHandle handle) {
  if (!handle.valid() || !valid_device(handle.device)) return;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord* entry = live_entry(handle);
  if (entry != nullptr && entry->in_host == 0) end_wait(device, *entry);
}

void Ledger::release(EntryHandle handle, std::uint64_t bytes, std::int64_t now_ns) {
  if (!handle.valid() || !valid_device(handle.device) || process_slot_ < 0) return;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  release_locked(handle.slot, process_slot_, handle.device, bytes, now_ns);
}

void Ledger::release_locked(int slot, int process_slot, int device_index, std::uint64_t bytes, std::int64_t now_ns) {
  DeviceRecord& device = layout_->devices[device_index];
  EntryRecord& entry = layout_->entries[slot];
  ProcessRecord& process = layout_->processes[process_slot];
  if (bytes > process.used[device_index]) bytes = process.used[device_index];
  if (bytes > entry.used) bytes = entry.used;
  process.used[device_index] -= bytes;
  device.committed -= commit_decrease({entry.used, entry.request, entry.limit}, bytes);
  entry.used -= bytes;
  device.used -= bytes;
  if (entry.used == 0) entry.evict_requested = 0;
  if (entry.used <= entry.request) entry.move_out_requested = 0;  // nothing left to move out
  entry.last_active_ns = now_ns;
  wake_sleepers(device);
}

Ledger::View Ledger::view(EntryHandle handle) {
  if (!handle.valid()) return {};
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  const EntryRecord& entry = layout_->entries[handle.slot];
  const std::uint64_t held = entry.used + entry.in_host;
  const std::uint64_t headroom = entry.limit > held ? entry.limit - held : 0;
  const std::uint64_t reserved = entry.request > entry.used ? entry.request - entry.used : 0;
  const std::uint64_t room = (device.capacity > device.committed ? device.capacity - device.committed : 0) + reserved;
  return {entry.limit, headroom < room ? headroom : room};
}

void Ledger::wait_for_release(int device_index, std::uint32_t seen, std::int64_t timeout_ns) {
  DeviceRecord& device = layout_->devices[device_index];
  device.waiting.fetch_add(1);
  futex_wait(device.release_seq, seen, timeout_ns);
  device.waiting.fetch_sub(1);
}

void Ledger::count_wait(EntryHandle handle, bool timed_out) {
  if (!handle.valid()) return;
  DeviceRecord& device = layout_->devices[handle.device];
  LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
  EntryRecord& entry = layout_->entries[handle.slot];
  if (entry.generation != handle.generation) return;
  ++(timed_out ? entry.wait_ooms : entry.waits);
}

std::vector<int> Ledger::evict_for(EntryHandle handle, std::uint64_t shortfall, std::int64_t now_ns) {
  std::vector<int> victims;
  {
    DeviceRecord& device = layout_->devices[handle.device];
    LedgerLock lock(device.lock, repair_device, *layout_, handle.device);
    const EntryRecord& requester = layout_->entries[handle.slot];
    std::vector<VictimCandidate> candidates;
    for (int slot = 0; slot < kMaxEntries; ++slot) {
      const EntryRecord& entry = layout_->entries[slot];
      if (entry.state != kSlotLive || entry.device != handle.device || slot == handle.slot ||
          entry.evict_requested != 0 || std::strcmp(entry.uid, requester.uid) == 0) {
        continue;
      }
      const bool idle = now_ns - entry.last_active_ns > layout_->idle_after_ns;
      candidates.push_back({slot, entry.priority, idle, entry.used});
    }
    victims = choose_victims(candidates, requester.priority, shortfall);
    for (int slot : victims) {
      layout_->entries[slot].evict_requested = 1;
      ++layout_->entries[slot].evictions;
    }
  }
  signal_processes(handle.device, victims, kRequestEnd);
  return victims;
}

void Ledger::signal_processes(int device, const std::vector<int>& slots, std::uint32_t request) {
  if (slots.empty()) return;
  LedgerLock table(layout_->table_lock, repair_nothing, *layout_, 0);
  for (ProcessRecord& process : layout_->processes) {
    if (process.state != kSlotLive || process.used[device] == 0) continue;
    for (int slot : slots) {
      if (process.entry_of[device] == slot) {
        process.end_requested.fetch_or(request);
        futex_wake_all(process.end_requested);
      }
    }
  }
  // A process whose allocations wait in host memory sleeps on the device's release sequence.
  wake_sleepers(layout_->devices[device]);
}

std::atomic<std::uint32_t>* Ledger::end_request_word() {
  return process_slot_ < 0 ? nullptr : &layout_->processes[process_slot_].end_requested;
}

bool Ledger::process_alive(int slot) const {
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = kProcessLockOffset + slot;
  probe.l_len = 1;
  if (fcntl(fd_, F_OFD_GETLK, &probe) != 0) return true;  // cannot tell: never reclaim on doubt
  return probe.l_type != F_UNLCK;
}

std::uint64_t Ledger::reclaim_dead_processes() {
  std::uint64_t reclaimed = 0;
  const std::int64_t now = monotonic_ns();
  LedgerLock table(layout_->table_lock, repair_nothing, *layout_, 0);
  for (int slot = 0; slot < kMaxProcesses; ++slot) {
    ProcessRecord& process = layout_->processes[slot];
    if (process.state != kSlotLive || slot == process_slot_ || process_alive(slot)) continue;
    for (int device = 0; device < kMaxDevices; ++device) {
      if (process.entry_of[device] < 0) continue;
      DeviceRecord& record = layout_->devices[device];
      LedgerLock lock(record.lock, repair_device, *layout_, device);
      reclaimed += process.used[device] + process.in_host[device];
      release_host_locked(process.entry_of[device], slot, device, process.in_host[device]);
      release_locked(process.entry_of[device], slot, device, process.used[device], now);
      EntryRecord& entry = layout_->entries[process.entry_of[device]];
      if (entry.in_host == 0) end_wait(record, entry);  // a waiter that died holds no turn
      process.entry_of[device] = -1;
    }
    process.state = kSlotFree;
  }
  return reclaimed;
}

}  // namespace tessera::gpumem
