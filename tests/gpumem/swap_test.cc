// The swap resolver end to end: swap pods (separate processes, the interposer preloaded over the
// fake driver) time-share one device by moving each other's allocations to host memory and back.
// Each pod checks a pattern at both ends of its allocation (intact=1) after every move; the fake
// driver counts what lies on the device, so "no overshoot" is its own peak, not the ledger's word.
// Outcomes only: what another process does in its own time is awaited (eventually), never timed.
#include <gtest/gtest.h>

#include "gpumem_test_support.h"

namespace tessera::gpumem::testing {
namespace {

// A slice of an hour unless said: no slice ends within a test, however slow the machine.
Environment swap_pod(const std::string& uid, std::int32_t priority, const std::string& slice_ms = "3600000") {
  return with(pod(uid, kGiB), {{"TESSERA_GPU_MEMORY_RESOLVER", "swap"},
                               {"TESSERA_POD_PRIORITY", std::to_string(priority)},
                               {"TESSERA_GPU_MEMORY_SWAP_SLICE_MS", slice_ms}});
}

std::string check(Running& running) {
  EXPECT_EQ(write(running.input, "check\n", 6), 6);
  return FakeGpuNode::read_until(running, "intact=");
}

bool on_device(const EntryRecord* entry, std::uint64_t bytes) { return entry->used == bytes && entry->in_host == 0; }
bool in_host(const EntryRecord* entry, std::uint64_t bytes) { return entry->in_host == bytes && entry->used == 0; }

TEST(Swap, APodThatNeedsTheDeviceMovesAnotherSwapPodOutAndItComesBackIntactWhenRoomReturns) {
  FakeGpuNode node(kGiB);
  const std::string bytes = std::to_string(600 * kMiB);
  Running first = node.start(swap_pod("first", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(first, "held="), "held=1\n");
  auto ledger = node.ledger();
  const EntryRecord* first_entry = entry_of(*ledger, "first");
  EXPECT_TRUE(on_device(first_entry, 600 * kMiB));

  Running second = node.start(swap_pod("second", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(second, "held="), "held=1\n");  // after `first` moved out for it
  const EntryRecord* second_entry = entry_of(*ledger, "second");
  EXPECT_TRUE(on_device(second_entry, 600 * kMiB));
  EXPECT_TRUE(in_host(first_entry, 600 * kMiB));
  // Counted once the mover's helper thread has finished, which may be after `second` holds its room.
  EXPECT_TRUE(eventually([&] { return first_entry->moved_out == 1u; }));
  EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 600 * kMiB);  // only `second` on the device
  // Read from host memory at the same address; with no room yet it stays there.
  EXPECT_EQ(check(first), "intact=1\n");
  EXPECT_TRUE(in_host(first_entry, 600 * kMiB));

  EXPECT_EQ(check(second), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(second).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(first_entry, 600 * kMiB); }));  // its helper thread moved it back
  EXPECT_EQ(check(first), "intact=1\n");
  EXPECT_EQ(first_entry->swap_ins, 1u);
  EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
  EXPECT_EQ(FakeGpuNode::finish(first).exit_code, 0);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

TEST(Swap, APodOfHigherPriorityIsNeverMovedOutForALowerOne) {
  FakeGpuNode node(kGiB);
  Running high = node.start(swap_pod("high", 500), {"swap-hold", std::to_string(800 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(high, "held="), "held=1\n");
  Running low = node.start(swap_pod("low", 100), {"swap-hold", std::to_string(600 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(low, "held="), "held=1\n");  // placed in host memory itself
  auto ledger = node.ledger();
  const EntryRecord* high_entry = entry_of(*ledger, "high");
  EXPECT_TRUE(on_device(high_entry, 800 * kMiB));
  EXPECT_EQ(high_entry->moved_out, 0u);
  EXPECT_EQ(high_entry->swap_outs, 0u);
  EXPECT_TRUE(in_host(entry_of(*ledger, "low"), 600 * kMiB));
  EXPECT_EQ(check(low), "intact=1\n");
  EXPECT_EQ(check(high), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(low).exit_code, 0);
  EXPECT_EQ(FakeGpuNode::finish(high).exit_code, 0);
}

// Three pods of 600 MiB on a 1 GiB device: the second moves the first out; the third, finding the
// first already waiting, takes its place in line behind it (in host memory) rather than jump it.
// As the device frees, the pods that wait come back in line order — every one of them is served.
TEST(Swap, PodsThatWaitComeBackInLineOrderAndEveryOneIsServed) {
  FakeGpuNode node(kGiB);
  const std::string bytes = std::to_string(600 * kMiB);
  Running a = node.start(swap_pod("a", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(a, "held="), "held=1\n");
  Running b = node.start(swap_pod("b", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(b, "held="), "held=1\n");
  Running c = node.start(swap_pod("c", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(c, "held="), "held=1\n");
  auto ledger = node.ledger();
  const EntryRecord* a_entry = entry_of(*ledger, "a");
  const EntryRecord* b_entry = entry_of(*ledger, "b");
  const EntryRecord* c_entry = entry_of(*ledger, "c");
  EXPECT_TRUE(in_host(a_entry, 600 * kMiB));
  EXPECT_TRUE(on_device(b_entry, 600 * kMiB));
  EXPECT_TRUE(in_host(c_entry, 600 * kMiB));
  EXPECT_EQ(b_entry->moved_out, 0u);

  EXPECT_EQ(FakeGpuNode::finish(b).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(a_entry, 600 * kMiB); }));  // `a` has waited longest
  EXPECT_TRUE(in_host(c_entry, 600 * kMiB));
  EXPECT_EQ(check(a), "intact=1\n");
  EXPECT_EQ(check(c), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(a).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(c_entry, 600 * kMiB); }));
  EXPECT_EQ(check(c), "intact=1\n");
  EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
  EXPECT_EQ(FakeGpuNode::finish(c).exit_code, 0);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

// Pitched rows and stream-ordered allocations (the async call and a pool's) of a swap pod are
// managed memory too: each moves out for a newcomer and back when it ends, its pattern intact, and
// is freed as the program frees it (the fake driver, like a real one, refuses a stream-ordered
// free of managed memory: the interposer synchronises the stream and frees it with cuMemFree).
TEST(Swap, PitchedAndStreamOrderedAllocationsMoveOutAndBackIntact) {
  for (const char* kind : {"pitch", "async", "pool"}) {
    SCOPED_TRACE(kind);
    FakeGpuNode node(100 * kMiB);
    const std::string bytes = std::to_string(60 * kMiB);
    Running first = node.start(swap_pod("first", 0), {"swap-hold", bytes, kind});
    ASSERT_EQ(FakeGpuNode::read_until(first, "held="), "held=1\n");
    auto ledger = node.ledger();
    const EntryRecord* first_entry = entry_of(*ledger, "first");
    EXPECT_TRUE(on_device(first_entry, 60 * kMiB));
    Running second = node.start(swap_pod("second", 0), {"swap-hold", bytes, kind});
    ASSERT_EQ(FakeGpuNode::read_until(second, "held="), "held=1\n");
    EXPECT_TRUE(in_host(first_entry, 60 * kMiB));
    EXPECT_TRUE(eventually([&] { return first_entry->moved_out == 1u; }));
    EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 60 * kMiB);
    EXPECT_EQ(check(first), "intact=1\n");
    EXPECT_EQ(check(second), "intact=1\n");
    EXPECT_EQ(FakeGpuNode::finish(second).exit_code, 0);
    EXPECT_TRUE(eventually([&] { return on_device(first_entry, 60 * kMiB); }));
    EXPECT_EQ(check(first), "intact=1\n");
    EXPECT_EQ(FakeGpuNode::finish(first).exit_code, 0);
    EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
    EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 0u);
    EXPECT_EQ(device0(*ledger).used, 0u);
  }
}

// A stream-ordered allocation made while its stream is captured into a graph stays the driver's
// own (the graph must own it; a managed allocation or a synchronisation would end the capture):
// it does not move, so a newcomer that collides with it goes to host memory after its wait.
TEST(Swap, AStreamOrderedAllocationMadeDuringGraphCaptureStaysOnTheDevice) {
  FakeGpuNode node(100 * kMiB);
  const std::string bytes = std::to_string(60 * kMiB);
  Running captured = node.start(swap_pod("captured", 0), {"swap-hold", bytes, "async-captured"});
  ASSERT_EQ(FakeGpuNode::read_until(captured, "held="), "held=1\n");
  auto ledger = node.ledger();
  const EntryRecord* captured_entry = entry_of(*ledger, "captured");
  EXPECT_TRUE(on_device(captured_entry, 60 * kMiB));
  Running newcomer =
      node.start(with(swap_pod("newcomer", 0), {{"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "200"}}), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(newcomer, "held="), "held=1\n");
  EXPECT_TRUE(on_device(captured_entry, 60 * kMiB));
  EXPECT_EQ(captured_entry->moved_out, 0u);
  EXPECT_TRUE(in_host(entry_of(*ledger, "newcomer"), 60 * kMiB));
  EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 60 * kMiB);  // the driver's own allocation
  EXPECT_EQ(check(captured), "intact=1\n");
  EXPECT_EQ(check(newcomer), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(newcomer).exit_code, 0);
  EXPECT_EQ(FakeGpuNode::finish(captured).exit_code, 0);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

// Three busy pods that never free, on a device that holds one, with a time slice of zero: each
// slice ends as soon as another pod waits, so the device passes round the line. Counted in turns
// (swap-ins), not time: over the run every pod gets a fair part of them, the fake device is never
// over its capacity, and every pattern is intact.
TEST(Swap, BusyPodsThatNeverFreeTakeTurnsOnTheDeviceSliceBySlice) {
  FakeGpuNode node(100 * kMiB);
  const std::string bytes = std::to_string(60 * kMiB);
  std::vector<Running> pods;
  for (const char* uid : {"a", "b", "c"}) {
    pods.push_back(node.start(swap_pod(uid, 0, "0"), {"swap-hold", bytes}));
    ASSERT_EQ(FakeGpuNode::read_until(pods.back(), "held="), "held=1\n") << uid;
  }
  auto ledger = node.ledger();
  const EntryRecord* entries[] = {entry_of(*ledger, "a"), entry_of(*ledger, "b"), entry_of(*ledger, "c")};
  auto turns = [&] {
    std::vector<std::uint64_t> counts;
    for (const EntryRecord* entry : entries) counts.push_back(entry->swap_ins);
    return counts;
  };
  // `a` and `b` take turns from the moment `b` holds; every pod is in line once `c` holds: the
  // turns are counted from then.
  const std::vector<std::uint64_t> before = turns();
  auto since = [&] {
    std::vector<std::uint64_t> counts = turns();
    for (std::size_t pod = 0; pod < counts.size(); ++pod) counts[pod] -= before[pod];
    return counts;
  };
  constexpr std::uint64_t kTurns = 60;
  ASSERT_TRUE(eventually([&] {
    const auto counts = since();
    return counts[0] + counts[1] + counts[2] >= kTurns;
  }));
  const std::vector<std::uint64_t> counts = since();
  const std::uint64_t total = counts[0] + counts[1] + counts[2];
  for (std::size_t pod = 0; pod < counts.size(); ++pod) {
    // Round the line, each pod's count is within one of the others'; half its share is the bound.
    EXPECT_GE(counts[pod] * 2 * counts.size(), total) << "pod " << pod << " had " << counts[pod] << " of " << total;
  }
  for (Running& running : pods) EXPECT_EQ(check(running), "intact=1\n");
  for (Running& running : pods) EXPECT_EQ(FakeGpuNode::finish(running).exit_code, 0);
  EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
  EXPECT_EQ(device0(*ledger).used, 0u);
}

// With its slice longer than the test, the pod on the device keeps it while another waits; the
// waiter gets it when the pod frees, as before there were slices.
TEST(Swap, APodWithinItsSliceKeepsTheDeviceUntilItFrees) {
  FakeGpuNode node(100 * kMiB);
  const std::string bytes = std::to_string(60 * kMiB);
  Running first = node.start(swap_pod("first", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(first, "held="), "held=1\n");
  Running second = node.start(swap_pod("second", 0), {"swap-hold", bytes});
  ASSERT_EQ(FakeGpuNode::read_until(second, "held="), "held=1\n");  // `first` moved out for the newcomer
  auto ledger = node.ledger();
  const EntryRecord* first_entry = entry_of(*ledger, "first");
  const EntryRecord* second_entry = entry_of(*ledger, "second");
  // Each check makes `first` try to come back (cuMemGetInfo): its turn, no room, `second`'s slice not over.
  for (int round = 0; round < 20; ++round) EXPECT_EQ(check(first), "intact=1\n");
  EXPECT_TRUE(in_host(first_entry, 60 * kMiB));
  EXPECT_TRUE(on_device(second_entry, 60 * kMiB));
  EXPECT_EQ(second_entry->moved_out, 0u);
  EXPECT_EQ(FakeGpuNode::finish(second).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(first_entry, 60 * kMiB); }));
  EXPECT_EQ(check(first), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(first).exit_code, 0);
}

}  // namespace
}  // namespace tessera::gpumem::testing
