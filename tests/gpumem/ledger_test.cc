#include "gpumem/ledger.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpumem/allocation_gate.h"
#include "gpumem_test_support.h"

namespace tessera::gpumem {
namespace {

using testing::kGiB;

// A ledger file of its own per test, removed after.
class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-ledger-test-XXXXXX";
    const int fd = mkstemp(pattern);
    ASSERT_GE(fd, 0);
    close(fd);
    unlink(pattern);  // Ledger::open creates and initialises it
    path_ = pattern;
  }
  void TearDown() override { unlink(path_.c_str()); }

  // Each Ledger object registers as a process of its own (its own liveness lock), as a separate
  // process would.
  std::unique_ptr<Ledger> open_as_process(const std::string& uid) {
    std::string error;
    auto ledger = Ledger::open(path_, &error);
    EXPECT_TRUE(ledger) << error;
    EXPECT_GE(ledger->register_process(uid, getpid()), 0);
    return ledger;
  }

  static EntrySpec spec(const std::string& uid, std::uint64_t request, std::uint64_t limit, std::int32_t priority = 0) {
    EntrySpec entry;
    entry.uid = uid;
    entry.request = request;
    entry.limit = limit;
    entry.priority = priority;
    return entry;
  }

  // A 10 GiB device that a holder has filled to 8 GiB, and a waiter with nothing yet.
  struct FullDevice {
    std::unique_ptr<Ledger> holder;
    std::unique_ptr<Ledger> waiter;
    EntryHandle held;
    EntryHandle wanted;
  };
  FullDevice fill_device() {
    FullDevice full{open_as_process("holder"), open_as_process("waiter"), {}, {}};
    full.holder->set_capacity(0, 10 * kGiB, false);
    full.held = full.holder->put_entry(spec("holder", 0, 8 * kGiB));
    full.wanted = full.waiter->put_entry(spec("waiter", 0, 8 * kGiB));
    EXPECT_EQ(full.holder->charge(full.held, 8 * kGiB, monotonic_ns()).decision.verdict, ChargeVerdict::kGrant);
    return full;
  }

  std::string path_;
};

ChargeVerdict verdict(Ledger& ledger, EntryHandle entry, std::uint64_t bytes) {
  return ledger.charge(entry, bytes, monotonic_ns()).decision.verdict;
}

TEST_F(LedgerTest, RequestsAreReservedAndBurstsShareWhatIsLeft) {
  auto a = open_as_process("a");
  auto b = open_as_process("b");
  a->set_capacity(0, 10 * kGiB, false);
  const EntryHandle entry_a = a->put_entry(spec("a", 4 * kGiB, 8 * kGiB));
  const EntryHandle entry_b = b->put_entry(spec("b", 4 * kGiB, 8 * kGiB));
  EXPECT_EQ(a->layout().devices[0].committed, 8 * kGiB);
  EXPECT_EQ(verdict(*a, entry_a, 6 * kGiB), ChargeVerdict::kGrant);      // 4 reserved + 2 of the 2 left
  EXPECT_EQ(verdict(*b, entry_b, 1 * kGiB), ChargeVerdict::kGrant);      // under b's request: always
  EXPECT_EQ(verdict(*b, entry_b, 4 * kGiB), ChargeVerdict::kCollision);  // 1 past the request, no room
  EXPECT_EQ(verdict(*a, entry_a, 3 * kGiB), ChargeVerdict::kOverLimit);
  EXPECT_EQ(verdict(*b, entry_b, 3 * kGiB), ChargeVerdict::kGrant);  // exactly b's request
  a->release(entry_a, 1 * kGiB, monotonic_ns());
  EXPECT_EQ(verdict(*b, entry_b, 1 * kGiB), ChargeVerdict::kGrant);
  EXPECT_EQ(a->layout().devices[0].committed, 10 * kGiB);
  EXPECT_EQ(a->layout().devices[0].used, 10 * kGiB);
}

TEST_F(LedgerTest, AnEntryInUseStaysAndAnUpdateKeepsTheCommittedSumRight) {
  auto a = open_as_process("a");
  a->set_capacity(0, 10 * kGiB, false);
  EntryHandle entry = a->put_entry(spec("a", 2 * kGiB, 8 * kGiB));
  ASSERT_EQ(verdict(*a, entry, 3 * kGiB), ChargeVerdict::kGrant);
  EXPECT_FALSE(a->remove_entry(entry.slot));
  const EntryHandle updated = a->put_entry(spec("a", 5 * kGiB, 8 * kGiB));
  EXPECT_EQ(updated.slot, entry.slot);
  EXPECT_EQ(updated.generation, entry.generation);
  EXPECT_EQ(a->layout().devices[0].committed, 5 * kGiB);
  a->release(entry, 3 * kGiB, monotonic_ns());
  EXPECT_EQ(a->layout().devices[0].committed, 5 * kGiB);
}

TEST_F(LedgerTest, ThreadsOfManyProcessesChargingAtOnceNeverOvershootAndLoseNoRelease) {
  constexpr int kProcesses = 16;
  const std::uint64_t capacity = 64 * kGiB;
  std::vector<std::unique_ptr<Ledger>> processes;
  std::vector<EntryHandle> entries;
  for (int i = 0; i < kProcesses; ++i) {
    processes.push_back(open_as_process("pod-" + std::to_string(i)));
    processes.back()->set_capacity(0, capacity, false);
    entries.push_back(processes.back()->put_entry(spec("pod-" + std::to_string(i), kGiB, capacity / 2)));
  }
  std::atomic<std::uint64_t> grants{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937_64 random(i);
      std::vector<std::uint64_t> held;
      for (int step = 0; step < 5000; ++step) {
        if (held.empty() || random() % 2 == 0) {
          const std::uint64_t bytes = 1 + random() % (4 * kGiB);
          if (verdict(*processes[i], entries[i], bytes) == ChargeVerdict::kGrant) {
            held.push_back(bytes);
            grants.fetch_add(1);
          }
        } else {
          processes[i]->release(entries[i], held.back(), monotonic_ns());
          held.pop_back();
        }
      }
      for (std::uint64_t bytes : held) processes[i]->release(entries[i], bytes, monotonic_ns());
    });
  }
  for (std::thread& thread : threads) thread.join();
  const DeviceRecord& device = processes[0]->layout().devices[0];
  EXPECT_GT(grants.load(), 0u);
  EXPECT_LE(device.peak_used, capacity);
  EXPECT_EQ(device.used, 0u);
  EXPECT_EQ(device.committed, kProcesses * kGiB);  // the requests, still reserved
  for (const EntryHandle& entry : entries) EXPECT_EQ(processes[0]->layout().entries[entry.slot].used, 0u);
}

TEST_F(LedgerTest, AProcessThatEndsHoldingMemoryIsReclaimedByAnyOther) {
  auto parent = open_as_process("survivor");
  parent->set_capacity(0, 10 * kGiB, false);
  parent->put_entry(spec("crashing", 0, 8 * kGiB));
  int ready[2], finish[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(finish), 0);
  const pid_t child = fork();
  if (child == 0) {
    std::string error;
    auto ledger = Ledger::open(path_, &error);
    const int slot = ledger ? ledger->register_process("crashing", getpid()) : -1;
    const bool charged =
        slot >= 0 && ledger->charge(ledger->find_entry("crashing", 0), 3 * kGiB, monotonic_ns()).decision.verdict ==
                         ChargeVerdict::kGrant;
    const char report[2] = {static_cast<char>(charged ? 'y' : 'n'), static_cast<char>(slot)};
    if (write(ready[1], report, 2) != 2) _exit(2);
    char go;
    if (read(finish[0], &go, 1) < 0) _exit(2);
    _exit(0);  // no release: the charge is left behind
  }
  char report[2] = {};
  ASSERT_EQ(read(ready[0], report, 2), 2);
  ASSERT_EQ(report[0], 'y');
  EXPECT_TRUE(parent->process_alive(report[1]));
  EXPECT_EQ(parent->reclaim_dead_processes(), 0u);  // alive: nothing to take back
  ASSERT_EQ(write(finish[1], "x", 1), 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_FALSE(parent->process_alive(report[1]));
  EXPECT_EQ(parent->reclaim_dead_processes(), 3 * kGiB);
  EXPECT_EQ(parent->layout().devices[0].used, 0u);
  EXPECT_EQ(parent->layout().devices[0].committed, 0u);
  EXPECT_EQ(parent->layout().processes[static_cast<int>(report[1])].state, kSlotFree);
}

TEST_F(LedgerTest, AProcessThatDiesInsideTheDeviceLockLeavesItUsableAndItsSumsRebuilt) {
  auto parent = open_as_process("a");
  parent->set_capacity(0, 10 * kGiB, false);
  const EntryHandle entry = parent->put_entry(spec("a", 0, 8 * kGiB));
  ASSERT_EQ(verdict(*parent, entry, 2 * kGiB), ChargeVerdict::kGrant);
  const pid_t child = fork();
  if (child == 0) {
    std::string error;
    auto ledger = Ledger::open(path_, &error);
    pthread_mutex_lock(&ledger->layout().devices[0].lock);
    ledger->layout().devices[0].used = 123;  // half-way through an update
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(verdict(*parent, entry, 1 * kGiB), ChargeVerdict::kGrant);
  EXPECT_EQ(parent->layout().devices[0].used, 3 * kGiB);
  EXPECT_EQ(parent->layout().devices[0].committed, 3 * kGiB);
}

TEST_F(LedgerTest, AWaitingAllocationIsGrantedByTheReleaseThatMakesRoom) {
  FullDevice full = fill_device();
  auto& [holder, waiter, held, wanted] = full;
  GateOptions options;
  options.wait_timeout_ns = std::int64_t{3600} * 1000000000;  // only the release can end the wait
  options.poll_ns = std::int64_t{3600} * 1000000000;
  GateResult result = GateResult::kTimedOut;
  std::thread waiting([&] { result = acquire(*waiter, wanted, 5 * kGiB, options); });
  while (__atomic_load_n(&waiter->layout().entries[wanted.slot].waits, __ATOMIC_SEQ_CST) == 0)
    std::this_thread::yield();
  holder->release(held, 8 * kGiB, monotonic_ns());
  waiting.join();
  EXPECT_EQ(result, GateResult::kGranted);
  EXPECT_EQ(waiter->layout().entries[wanted.slot].used, 5 * kGiB);
}

TEST_F(LedgerTest, AWaitThatNoReleaseEndsIsRefusedAfterItsTimeout) {
  FullDevice full = fill_device();
  auto& [holder, waiter, held, wanted] = full;
  GateOptions options;
  options.wait_timeout_ns = 50 * 1000000;
  EXPECT_EQ(acquire(*waiter, wanted, 5 * kGiB, options), GateResult::kTimedOut);
  EXPECT_EQ(waiter->layout().entries[wanted.slot].waits, 1u);
  EXPECT_EQ(waiter->layout().entries[wanted.slot].wait_ooms, 1u);
  EXPECT_EQ(waiter->layout().devices[0].used, 8 * kGiB);
}

TEST_F(LedgerTest, ASwapPodsHostMemoryCountsAgainstItsLimitAndMovesToTheDeviceOnlyWithRoom) {
  FullDevice full = fill_device();  // 8 of 10 GiB used by the holder
  auto& [holder, waiter, held, wanted] = full;
  ASSERT_TRUE(waiter->charge_host(wanted, 5 * kGiB, monotonic_ns()));
  EXPECT_FALSE(waiter->charge_host(wanted, 4 * kGiB, monotonic_ns()));  // 9 GiB past its 8 GiB limit
  EXPECT_EQ(verdict(*waiter, wanted, 4 * kGiB), ChargeVerdict::kOverLimit);
  EXPECT_EQ(waiter->move_to_device(wanted, 5 * kGiB, monotonic_ns()).decision.verdict, ChargeVerdict::kCollision);
  holder->release(held, 4 * kGiB, monotonic_ns());
  EXPECT_EQ(waiter->move_to_device(wanted, 5 * kGiB, monotonic_ns()).decision.verdict, ChargeVerdict::kGrant);
  const EntryRecord& entry = waiter->layout().entries[wanted.slot];
  EXPECT_EQ(entry.in_host, 0u);
  EXPECT_EQ(entry.used, 5 * kGiB);
  EXPECT_EQ(waiter->layout().devices[0].used, 9 * kGiB);
  EXPECT_EQ(waiter->layout().devices[0].committed, 9 * kGiB);
  ASSERT_TRUE(waiter->charge_host(wanted, 3 * kGiB, monotonic_ns()));
  waiter.reset();  // ends: what it held on the device and in host memory both come back
  EXPECT_EQ(holder->reclaim_dead_processes(), 8 * kGiB);
  EXPECT_EQ(holder->layout().entries[wanted.slot].in_host, 0u);
  EXPECT_EQ(holder->layout().devices[0].used, 4 * kGiB);
}

TEST_F(LedgerTest, ThePriorityResolverMarksExactlyTheLowerPriorityPodsThatFreeEnough) {
  auto low = open_as_process("low");
  auto high = open_as_process("high");
  auto asking = open_as_process("asking");
  low->set_capacity(0, 10 * kGiB, false);
  const EntryHandle low_entry = low->put_entry(spec("low", 0, 8 * kGiB, 1));
  const EntryHandle high_entry = high->put_entry(spec("high", 0, 8 * kGiB, 500));
  const EntryHandle asking_entry = asking->put_entry(spec("asking", 0, 8 * kGiB, 100));
  ASSERT_EQ(verdict(*low, low_entry, 4 * kGiB), ChargeVerdict::kGrant);
  ASSERT_EQ(verdict(*high, high_entry, 4 * kGiB), ChargeVerdict::kGrant);
  const ChargeOutcome outcome = asking->charge(asking_entry, 4 * kGiB, monotonic_ns());
  ASSERT_EQ(outcome.decision.verdict, ChargeVerdict::kCollision);
  EXPECT_EQ(asking->evict_for(asking_entry, outcome.decision.shortfall, monotonic_ns()),
            (std::vector<int>{low_entry.slot}));
  EXPECT_EQ(low->end_request_word()->load(), 1u);
  EXPECT_EQ(high->end_request_word()->load(), 0u);
  EXPECT_EQ(asking->end_request_word()->load(), 0u);
  EXPECT_EQ(low->layout().entries[low_entry.slot].evictions, 1u);
  // Asked once: a second collision does not end more while the first victim's memory is coming back.
  EXPECT_TRUE(asking->evict_for(asking_entry, outcome.decision.shortfall, monotonic_ns()).empty());
}

// The time slice on a test clock (the times are the ledger's arguments, not the machine's): a swap
// pod keeps the device room it got until its slice is over, then the pod at the head of the line
// has it moved out; the others in line ask nothing, and a pod of higher priority is never moved
// out for a lower one.
TEST_F(LedgerTest, ASwapPodKeepsItsRoomForItsSliceThenTheHeadOfTheLineHasItMovedOut) {
  auto resident = open_as_process("resident");
  auto first = open_as_process("first");
  auto second = open_as_process("second");
  resident->set_capacity(0, 10 * kGiB, false);
  auto swap_spec = [](const std::string& uid, std::int32_t priority) {
    EntrySpec entry = spec(uid, 0, 8 * kGiB, priority);
    entry.resolver = Resolver::kSwap;
    entry.swap_slice_ns = 1000;
    return entry;
  };
  const EntryHandle resident_entry = resident->put_entry(swap_spec("resident", 0));
  const EntryHandle first_entry = first->put_entry(swap_spec("first", 0));
  const EntryHandle second_entry = second->put_entry(swap_spec("second", 0));
  ASSERT_EQ(resident->charge(resident_entry, 8 * kGiB, 1000).decision.verdict, ChargeVerdict::kGrant);
  ASSERT_TRUE(first->charge_host(first_entry, 6 * kGiB, 1100));  // in line from 1100
  ASSERT_TRUE(second->charge_host(second_entry, 6 * kGiB, 1200));
  const std::uint32_t asked_before = resident->end_request_word()->load();

  const Ledger::Rotation early = first->rotate_for(first_entry, 4 * kGiB, 1500);
  EXPECT_TRUE(early.moving_out.empty());
  EXPECT_EQ(early.wake_in_ns, 500);  // the resident's slice ends at 2000
  EXPECT_TRUE(second->rotate_for(second_entry, 4 * kGiB, 2500).moving_out.empty());  // not its turn
  EXPECT_EQ(resident->end_request_word()->load(), asked_before);

  const Ledger::Rotation due = first->rotate_for(first_entry, 4 * kGiB, 2000);
  EXPECT_EQ(due.moving_out, std::vector<int>{resident_entry.slot});
  EXPECT_NE(resident->end_request_word()->load() & kRequestMoveOut, 0u);
  EXPECT_TRUE(first->rotate_for(first_entry, 4 * kGiB, 2100).moving_out.empty());  // asked once

  // The resident moves out; `first` moves in and its slice starts; `second` is next in line.
  ASSERT_TRUE(resident->move_to_host(resident_entry, 8 * kGiB, 2200));
  EXPECT_FALSE(resident->finish_move_out(resident_entry, true));
  EXPECT_EQ(second->move_to_device(second_entry, 6 * kGiB, 2300).decision.verdict, ChargeVerdict::kCollision);
  EXPECT_EQ(first->move_to_device(first_entry, 6 * kGiB, 2300).decision.verdict, ChargeVerdict::kGrant);
  EXPECT_EQ(second->rotate_for(second_entry, 4 * kGiB, 3299).wake_in_ns, 1);
  EXPECT_EQ(second->rotate_for(second_entry, 4 * kGiB, 3300).moving_out, std::vector<int>{first_entry.slot});

  // A pod of higher priority keeps the device past its slice; a waiter of lower priority waits for
  // a free, with no slice end to wake for.
  ASSERT_TRUE(first->move_to_host(first_entry, 6 * kGiB, 3400));
  first->finish_move_out(first_entry, true);
  EntrySpec higher = swap_spec("second", 9);
  second->put_entry(higher);
  EXPECT_EQ(second->move_to_device(second_entry, 6 * kGiB, 3500).decision.verdict, ChargeVerdict::kGrant);
  const Ledger::Rotation lower = resident->rotate_for(resident_entry, 4 * kGiB, 9000);
  EXPECT_TRUE(lower.moving_out.empty());
  EXPECT_EQ(lower.wake_in_ns, 0);
}

}  // namespace
}  // namespace tessera::gpumem
