#include "gpumem/interposer/interposer.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpumem/futex.h"

namespace tessera::gpumem {

Interposer& Interposer::instance() {
  // Never destroyed: CUDA calls from other libraries' destructors may come after ours would run.
  static Interposer* const interposer = new Interposer();
  return *interposer;
}

Interposer::Interposer() : driver_(load_real_driver()), settings_(read_pod_settings(std::getenv)) {
  for (const std::string& problem : settings_.problems) std::fprintf(stderr, "tessera-gpumem: %s\n", problem.c_str());
  gate_.wait_timeout_ns = settings_.wait_timeout_ns;
  if (settings_.uid.empty() && settings_.limit) settings_.uid = "process-" + std::to_string(getpid());
  if (!driver_.loaded || settings_.uid.empty()) return;  // nothing to govern: every call passes through
  std::string error;
  ledger_ = Ledger::open(settings_.ledger_path, &error);
  if (!ledger_) {
    std::fprintf(stderr, "tessera-gpumem: %s; GPU memory of this process is not governed\n", error.c_str());
    return;
  }
  pthread_atfork(nullptr, nullptr, [] { Interposer::instance().after_fork_in_child(); });
}

int Interposer::current_ordinal() const {
  CUdevice device = -1;
  if (driver_.ctx_get_device == nullptr || driver_.ctx_get_device(&device) != CUDA_SUCCESS) return -1;
  return device;
}

EntryHandle Interposer::entry_for(int ordinal) {
  const int device = node_device(settings_, ordinal);
  if (!ledger_ || device < 0 || device >= kMaxDevices) return {};
  if (entry_known_[device].load(std::memory_order_acquire)) return entries_[device];
  std::lock_guard lock(setup_mutex_);
  if (entry_known_[device].load(std::memory_order_relaxed)) return entries_[device];
  std::size_t total = 0;
  if (settings_.device_memory > 0) {
    ledger_->set_capacity(device, settings_.device_memory, false);
  } else if (driver_.device_total_mem != nullptr && driver_.device_total_mem(&total, ordinal) == CUDA_SUCCESS) {
    ledger_->set_capacity(device, total, false);
  }
  EntryHandle entry = ledger_->find_entry(settings_.uid, device);
  if (!entry.valid() && settings_.limit) {
    EntrySpec spec;
    spec.uid = settings_.uid;
    spec.name = settings_.name;
    spec.device = device;
    spec.priority = settings_.priority;
    spec.resolver = settings_.resolver;
    spec.request = settings_.request;
    spec.limit = *settings_.limit;
    spec.swap_slice_ns = settings_.swap_slice_ns;
    entry = ledger_->put_entry(spec);
    if (!entry.valid())
      std::fprintf(stderr, "tessera-gpumem: the ledger's entry table is full; device %d is not governed\n", device);
  }
  ledger_->set_swap_slice(entry, settings_.swap_slice_ns);  // the agent does not know it
  entries_[device] = entry;
  entry_known_[device].store(true, std::memory_order_release);
  return entry;
}

bool Interposer::register_process() {
  if (registered_.load(std::memory_order_acquire)) return true;
  std::lock_guard lock(setup_mutex_);
  if (registered_.load(std::memory_order_relaxed)) return true;
  if (ledger_->register_process(settings_.uid, getpid()) < 0) {
    std::fprintf(stderr, "tessera-gpumem: the ledger's process table is full\n");
    return false;
  }
  start_helper_thread(ledger_->end_request_word());
  registered_.store(true, std::memory_order_release);
  return true;
}

void Interposer::start_helper_thread(std::atomic<std::uint32_t>* word) {
  // Other pods' allocations ask this process for things through a futex word of its ledger slot:
  // to end (the priority resolver) or to move its allocations to host memory (the swap resolver).
  // It acts itself: the asking process may live in another PID namespace and could not signal it,
  // and only this process can move its own managed memory. While allocations of it wait in host
  // memory, the thread also looks for room to bring them back, as the program may not call again.
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, 256 * 1024);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);  // the helper takes none of the program's signals
  pthread_t thread;
  pthread_create(
      &thread, &attributes,
      [](void* argument) -> void* {
        auto* requests = static_cast<std::atomic<std::uint32_t>*>(argument);
        for (;;) Interposer::instance().help(*requests);
        return nullptr;
      },
      word);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attributes);
}

void Interposer::help(std::atomic<std::uint32_t>& requests) {
  // A sleeper that no release woke for this long looks for dead processes: a process that dies
  // releases nothing, and the table scan is too costly to run on every wake.
  constexpr std::int64_t kQuietNs = 1000000000;
  const std::uint32_t asked = requests.load();
  if ((asked & kRequestEnd) != 0) {
    std::fprintf(stderr, "tessera-gpumem: ending: a pod of higher priority needs this GPU's memory\n");
    kill(getpid(), SIGKILL);
  }
  if ((asked & kRequestMoveOut) != 0) {
    requests.fetch_and(~kRequestMoveOut);
    move_out();
    return;
  }
  if (in_host_.load() == 0) {
    futex_wait(requests, asked, kQuietNs);  // only another pod's request wakes it
    return;
  }
  const BringBack state = bring_back();
  if (state.device < 0) {
    futex_wait(requests, asked, kQuietNs / 50);  // a program thread is moving: look again soon
    return;
  }
  // Requests are set before the device's sequence is bumped (Ledger::signal_processes): one set
  // after the sequence was read wakes the sleep below; one set before is seen here.
  if ((requests.load() & (kRequestEnd | kRequestMoveOut)) != 0) return;
  const std::int64_t now = monotonic_ns();
  if (quiet_since_ns_ == 0) quiet_since_ns_ = now;
  std::int64_t sleep = quiet_since_ns_ + kQuietNs - now;
  if (state.wake_in_ns > 0 && state.wake_in_ns < sleep) sleep = state.wake_in_ns;
  ledger_->wait_for_release(state.device, state.release_seq, sleep);
  if (ledger_->release_seq(state.device) != state.release_seq) {
    quiet_since_ns_ = 0;
  } else if (monotonic_ns() - quiet_since_ns_ >= kQuietNs) {
    ledger_->reclaim_dead_processes();
    quiet_since_ns_ = 0;
  }
}

template <typename Move>
void Interposer::in_context(const Allocation& allocation, Move move) {
  CUcontext own = nullptr;
  const bool switch_context = driver_.ctx_get_current != nullptr && driver_.ctx_set_current != nullptr &&
                              driver_.ctx_get_current(&own) == CUDA_SUCCESS && own != allocation.context;
  if (switch_context) driver_.ctx_set_current(allocation.context);
  move();
  if (switch_context) driver_.ctx_set_current(own);
}

void Interposer::move_out() {
  std::lock_guard lock(bring_back_mutex_);  // never at the same time as a move back
  std::array<bool, kMaxDevices> moved_from{};  // per device: something of this process moved out
  allocations_.keep_if([&](std::uint64_t pointer, Allocation& allocation) {
    if (!allocation.movable || allocation.in_host) return true;
    CUresult moved = CUDA_ERROR_NOT_FOUND;
    in_context(allocation, [&] {
      // Host memory becomes its place, and its pages leave the device before the device is
      // credited: the room another pod is granted must really be free.
      driver_.mem_advise(pointer, allocation.bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU);
      moved = driver_.mem_prefetch_async(pointer, allocation.bytes, CU_DEVICE_CPU, nullptr);
      if (moved == CUDA_SUCCESS && driver_.ctx_synchronize != nullptr) moved = driver_.ctx_synchronize();
    });
    if (moved != CUDA_SUCCESS || !ledger_->move_to_host(allocation.entry, allocation.bytes, monotonic_ns())) {
      return true;
    }
    allocation.in_host = true;
    in_host_.fetch_add(1);
    if (allocation.entry.device >= 0 && allocation.entry.device < kMaxDevices)
      moved_from[allocation.entry.device] = true;
    return true;
  });
  for (int device = 0; device < kMaxDevices; ++device) {
    if (entry_known_[device].load() && entries_[device].valid()) {
      ledger_->finish_move_out(entries_[device], moved_from[device]);
    }
  }
}

void Interposer::after_fork_in_child() {
  // The child is a new process: it registers (and gets its own watcher) on its first allocation.
  if (ledger_) ledger_->forget_process_after_fork();
  registered_.store(false);
}

CUresult Interposer::charge(int ordinal, std::uint64_t bytes, Charge* charge, bool may_place_in_host) {
  *charge = {};
  EntryHandle entry = entry_for(ordinal);
  if (!entry.valid() || !register_process()) return CUDA_SUCCESS;
  may_place_in_host = may_place_in_host && can_place_in_host();
  GateResult result = acquire(*ledger_, entry, bytes, gate_, may_place_in_host);
  if (result == GateResult::kStaleEntry) {
    entry_known_[entry.device].store(false);
    entry = entry_for(ordinal);
    if (!entry.valid()) return CUDA_SUCCESS;
    result = acquire(*ledger_, entry, bytes, gate_, may_place_in_host);
  }
  if (result == GateResult::kPlaceInHost) {
    if (!ledger_->charge_host(entry, bytes, monotonic_ns())) return CUDA_ERROR_OUT_OF_MEMORY;
    charge->in_host = true;
  } else if (result != GateResult::kGranted) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    charge->movable = may_place_in_host && ledger_->layout().entries[entry.slot].resolver == Resolver::kSwap;
  }
  charge->entry = entry;
  charge->ordinal = ordinal;
  return CUDA_SUCCESS;
}

void Interposer::uncharge(const Charge& charge, std::uint64_t bytes) {
  if (!charge.managed()) return;
  if (charge.in_host) {
    ledger_->release_host(charge.entry, bytes, monotonic_ns());
  } else {
    ledger_->release(charge.entry, bytes, monotonic_ns());
  }
}

Interposer::BringBack Interposer::bring_back() {
  BringBack state;
  if (in_host_.load(std::memory_order_relaxed) == 0) return state;
  std::unique_lock lock(bring_back_mutex_, std::try_to_lock);  // one thread moves; the others go on
  if (!lock.owns_lock()) return state;
  EntryHandle refused;
  std::uint64_t shortfall = 0;
  allocations_.keep_if([&](std::uint64_t pointer, Allocation& allocation) {
    if (!allocation.in_host || refused.valid()) return true;
    const ChargeOutcome outcome = ledger_->move_to_device(allocation.entry, allocation.bytes, monotonic_ns());
    if (outcome.decision.verdict != ChargeVerdict::kGrant) {
      refused = allocation.entry;
      shortfall = outcome.decision.shortfall;
      state.device = allocation.entry.device;
      state.release_seq = outcome.release_seq;
      return true;
    }
    // Preferred on the device again, and moved there now rather than page by page on first touch.
    in_context(allocation, [&] {
      driver_.mem_advise(pointer, allocation.bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, allocation.ordinal);
      driver_.mem_prefetch_async(pointer, allocation.bytes, allocation.ordinal, nullptr);
    });
    allocation.in_host = false;
    in_host_.fetch_sub(1);
    return true;
  });
  // No room: when it is this pod's turn, the pods whose slice is over make room (rotate_for asks
  // nothing of a pod that is not at the head of the line).
  if (refused.valid()) state.wake_in_ns = ledger_->rotate_for(refused, shortfall, monotonic_ns()).wake_in_ns;
  return state;
}

CUresult Interposer::recharge(const Charge& charge, std::uint64_t charged, std::uint64_t actual) {
  if (!charge.managed() || actual == charged) return CUDA_SUCCESS;
  if (actual < charged) {
    uncharge(charge, charged - actual);
    return CUDA_SUCCESS;
  }
  return acquire(*ledger_, charge.entry, actual - charged, gate_) == GateResult::kGranted ? CUDA_SUCCESS
                                                                                          : CUDA_ERROR_OUT_OF_MEMORY;
}

void Interposer::remember(std::uint64_t key, std::uint64_t bytes, const Charge& charge, bool vmm_handle) {
  if (!charge.managed()) return;
  Allocation allocation{bytes, charge.entry, charge.in_host, charge.ordinal, charge.in_host || charge.movable};
  if (allocation.movable && driver_.ctx_get_current != nullptr) driver_.ctx_get_current(&allocation.context);
  (vmm_handle ? vmm_handles_ : allocations_).insert(key, allocation);
  // The helper thread sleeps on its request word while nothing waits in host memory: the first
  // allocation placed there wakes it, to take its place in line.
  std::atomic<std::uint32_t>* word = ledger_->end_request_word();  // set: charging registered it
  if (charge.in_host && in_host_.fetch_add(1) == 0 && word != nullptr) futex_wake_all(*word);
  // Charged on the device while its pod was asked to move out, and recorded after the helper
  // thread answered: it asks again, or the allocation would keep room the pod was to give up.
  if (charge.movable && word != nullptr && ledger_->move_out_requested(charge.entry)) {
    word->fetch_or(kRequestMoveOut);
    futex_wake_all(*word);
  }
}

std::optional<Allocation> Interposer::take(std::uint64_t key, bool vmm_handle) {
  return (vmm_handle ? vmm_handles_ : allocations_).take(key);
}

void Interposer::settle_free(const std::optional<Allocation>& allocation, std::uint64_t key, bool vmm_handle,
                             CUresult result) {
  if (!allocation) return;
  if (result == CUDA_SUCCESS) {
    if (allocation->in_host) {
      ledger_->release_host(allocation->entry, allocation->bytes, monotonic_ns());
      in_host_.fetch_sub(1);
    } else {
      ledger_->release(allocation->entry, allocation->bytes, monotonic_ns());
    }
    bring_back();  // the room this free made may take back what waits in host memory
  } else {
    (vmm_handle ? vmm_handles_ : allocations_).insert(key, *allocation);
  }
}

bool Interposer::pod_memory_view(int ordinal, std::size_t* free, std::size_t* total) {
  const EntryHandle entry = entry_for(ordinal);
  if (!entry.valid()) return false;
  bring_back();  // frameworks ask often: a chance to take back the device room that freed
  const Ledger::View view = ledger_->view(entry);
  *total = view.limit;
  if (view.available < *free) *free = view.available;
  if (*free > *total) *free = *total;
  return true;
}

}  // namespace tessera::gpumem
