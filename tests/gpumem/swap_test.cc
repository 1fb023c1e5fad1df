// The swap resolver end to end: swap pods (separate processes, the interposer preloaded over the
// fake driver) time-share one device by moving each other's allocations to host memory and back.
// Each pod checks a pattern at both ends of its allocation (intact=1) after every move; the fake
// driver counts what lies on the device, so "no overshoot" is its own peak, not the ledger's word.
// Outcomes only: what another process does in its own time is awaited (eventually), never timed.
#include <gtest/gtest.h>

#include "gpumem_test_support.h"

namespace tessera::gpumem::testing {
namespace {

Environment swap_pod(const std::string& uid, std::int32_t priority) {
  return with(pod(uid, kGiB),
              {{"TESSERA_GPU_MEMORY_RESOLVER", "swap"}, {"TESSERA_POD_PRIORITY", std::to_string(priority)}});
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
  EXPECT_EQ(first_entry->moved_out, 1u);
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

// Three pods of 600 MiB on a 1 GiB device: each newcomer moves the one on the device out. When the
// device frees, the pods that wait come back in the order they left — every one of them is served.
TEST(Swap, PodsMovedOutComeBackInTheOrderTheyLeftAndEveryOneIsServed) {
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
  EXPECT_TRUE(in_host(b_entry, 600 * kMiB));
  EXPECT_TRUE(on_device(c_entry, 600 * kMiB));

  EXPECT_EQ(FakeGpuNode::finish(c).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(a_entry, 600 * kMiB); }));  // `a` left first
  EXPECT_TRUE(in_host(b_entry, 600 * kMiB));
  EXPECT_EQ(check(a), "intact=1\n");
  EXPECT_EQ(check(b), "intact=1\n");
  EXPECT_EQ(FakeGpuNode::finish(a).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return on_device(b_entry, 600 * kMiB); }));
  EXPECT_EQ(check(b), "intact=1\n");
  EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
  EXPECT_EQ(FakeGpuNode::finish(b).exit_code, 0);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

}  // namespace
}  // namespace tessera::gpumem::testing
