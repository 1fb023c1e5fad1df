// The interposer end to end: workload programs (separate processes) load the fake driver as
// libcuda.so.1 the way CUDA runtimes do, through dlsym or cuGetProcAddress, with
// libtessera-gpumem.so preloaded. Outcomes only — grants, refusals, who ended, what the ledger and
// the fake device hold — never how long anything took.
#include <gtest/gtest.h>

#include "gpumem_test_support.h"

namespace tessera::gpumem::testing {
namespace {

class InterposerPaths : public ::testing::TestWithParam<bool> {
 protected:
  std::vector<std::string> command(std::vector<std::string> arguments) const {
    if (GetParam()) arguments.insert(arguments.begin(), "--proc");
    return arguments;
  }
};

TEST_P(InterposerPaths, AllocationsPastThePodsLimitAreRefusedAsOutOfMemoryAndGetInfoShowsTheLimit) {
  FakeGpuNode node(16 * kGiB);
  const Finished limit = node.run(pod("server", kGiB), command({"limit", std::to_string(64 * kMiB)}));
  ASSERT_EQ(limit.exit_code, 0);
  EXPECT_EQ(limit.number("granted_bytes"), kGiB);
  EXPECT_EQ(limit.value("refusal"), "2");  // CUDA_ERROR_OUT_OF_MEMORY
  EXPECT_EQ(limit.number("reported_total"), kGiB);
  EXPECT_EQ(limit.number("reported_free_before"), kGiB);
  EXPECT_EQ(limit.number("reported_free_full"), 0u);
  EXPECT_EQ(limit.number("reported_free_after"), kGiB);
  auto ledger = node.ledger();
  EXPECT_EQ(device0(*ledger).used, 0u);
  EXPECT_EQ(entry_of(*ledger, "server")->limit_ooms, 1u);
}

TEST_P(InterposerPaths, EveryAllocationFunctionIsChargedAndCreditedOnFree) {
  FakeGpuNode node(16 * kGiB);
  const Finished variants = node.run(pod("server", kGiB), command({"variants", std::to_string(600 * kMiB)}));
  ASSERT_EQ(variants.exit_code, 0);
  for (const char* name : {"cuMemAlloc", "cuMemAllocPitch", "cuMemAllocManaged", "cuMemAllocAsync", "cuMemCreate"}) {
    EXPECT_EQ(variants.value(std::string("variant_") + name), "granted:0,second:2,freed:0") << name;
  }
  auto ledger = node.ledger();
  EXPECT_EQ(device0(*ledger).used, 0u);
  EXPECT_EQ(entry_of(*ledger, "server")->limit_ooms, 5u);
  EXPECT_GE(entry_of(*ledger, "server")->peak_used, 600 * kMiB);
}

INSTANTIATE_TEST_SUITE_P(DlsymAndGetProcAddress, InterposerPaths, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ThroughCuGetProcAddress" : "ThroughDlsym";
                         });

TEST(Interposer, SixtyFourProcessesOfFourThreadsBurstingAtOnceNeverOvershootTheDeviceNorLoseAFree) {
  // The fake device grants past its capacity here and records its peak: only the ledger stops them.
  FakeGpuNode node(2 * kGiB, /*overcommit=*/true);
  const Finished burst =
      node.run({{"TESSERA_GPU_MEMORY_LIMIT", std::to_string(512 * kMiB)}, {"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "100"}},
               {"burst", "64", "10", std::to_string(96 * kMiB), "7", "4"});
  ASSERT_EQ(burst.exit_code, 0);
  EXPECT_EQ(burst.value("burst_threads"), "4");
  EXPECT_EQ(burst.number("burst_corrupt"), 0u);
  EXPECT_EQ(burst.number("burst_errors"), 0u);
  EXPECT_GT(burst.number("burst_grants"), 0u);
  const Finished fake = node.run({}, {"fake-stats"});
  EXPECT_LE(fake.number("fake_peak_used"), node.capacity());
  EXPECT_EQ(fake.number("fake_used"), 0u);
  auto ledger = node.ledger();
  EXPECT_LE(device0(*ledger).peak_used, node.capacity());
  EXPECT_EQ(device0(*ledger).used, 0u);
  EXPECT_EQ(device0(*ledger).committed, 0u);
}

TEST(Interposer, AWaitingAllocationIsGrantedByTheFreeThatMakesRoomAndNotBefore) {
  FakeGpuNode node(3 * kGiB / 2);
  const Finished wait =
      node.run({{"TESSERA_GPU_MEMORY_LIMIT", std::to_string(kGiB)}, {"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "600000"}},
               {"wait-latency", "5", std::to_string(kGiB)});
  ASSERT_EQ(wait.exit_code, 0);
  EXPECT_EQ(wait.value("wait_granted"), "5");
  EXPECT_EQ(wait.value("wait_granted_before_free"), "0");
  EXPECT_EQ(wait.value("wait_refused"), "0");
  auto ledger = node.ledger();
  EXPECT_EQ(entry_of(*ledger, "latency-waiter")->waits, 5u);
}

TEST(Interposer, AWaitThatNoFreeEndsIsRefusedAfterItsTimeoutInsteadOfHanging) {
  FakeGpuNode node(3 * kGiB / 2);
  Running holder = node.start(pod("holder", kGiB), {"hold", std::to_string(kGiB)});
  ASSERT_EQ(FakeGpuNode::read_until(holder, "held="), "held=1\n");
  const Finished waiter =
      node.run(with(pod("waiter", kGiB), {{"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "100"}}), {"alloc", std::to_string(kGiB)});
  EXPECT_EQ(waiter.value("result"), "2");
  EXPECT_EQ(FakeGpuNode::finish(holder).exit_code, 0);
  auto ledger = node.ledger();
  EXPECT_EQ(entry_of(*ledger, "waiter")->wait_ooms, 1u);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

TEST(Interposer, ThePriorityResolverEndsExactlyTheLowerPriorityPodThatFreesEnough) {
  FakeGpuNode node(2 * kGiB);
  const Environment resolver = {{"TESSERA_GPU_MEMORY_RESOLVER", "priority"},
                                {"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "600000"}};
  Running low =
      node.start(with(pod("low", kGiB), {{"TESSERA_POD_PRIORITY", "1"}}), {"hold", std::to_string(800 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(low, "held="), "held=1\n");
  Running high =
      node.start(with(pod("high", kGiB), {{"TESSERA_POD_PRIORITY", "500"}}), {"hold", std::to_string(800 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(high, "held="), "held=1\n");
  const Finished asking = node.run(with(with(pod("asking", kGiB), resolver), {{"TESSERA_POD_PRIORITY", "100"}}),
                                   {"alloc", std::to_string(800 * kMiB)});
  EXPECT_EQ(asking.value("result"), "0");
  const Finished low_end = FakeGpuNode::finish(low);
  EXPECT_EQ(low_end.signal, SIGKILL);
  const Finished high_end = FakeGpuNode::finish(high);  // alive until its input closed: it frees and exits
  EXPECT_EQ(high_end.exit_code, 0);
  EXPECT_EQ(high_end.signal, 0);
  auto ledger = node.ledger();
  EXPECT_EQ(entry_of(*ledger, "low")->evictions, 1u);
  EXPECT_EQ(entry_of(*ledger, "high")->evictions, 0u);
  EXPECT_EQ(entry_of(*ledger, "low")->used, 0u);
}

TEST(Interposer, ThePriorityResolverEndsNobodyOfHigherPriorityAndFallsBackToWaiting) {
  FakeGpuNode node(2 * kGiB);
  Running high =
      node.start(with(pod("high", 2 * kGiB), {{"TESSERA_POD_PRIORITY", "500"}}), {"hold", std::to_string(1536 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(high, "held="), "held=1\n");
  const Finished asking = node.run(with(pod("asking", kGiB), {{"TESSERA_POD_PRIORITY", "100"},
                                                              {"TESSERA_GPU_MEMORY_RESOLVER", "priority"},
                                                              {"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "100"}}),
                                   {"alloc", std::to_string(kGiB)});
  EXPECT_EQ(asking.value("result"), "2");
  const Finished high_end = FakeGpuNode::finish(high);
  EXPECT_EQ(high_end.exit_code, 0);
  EXPECT_EQ(high_end.signal, 0);
}

TEST(Interposer, MemoryAProcessDiedHoldingComesBackToTheOthers) {
  FakeGpuNode node(kGiB);
  const Finished crash = node.run(pod("crashing", kGiB), {"hold", std::to_string(800 * kMiB), "die"});
  ASSERT_EQ(crash.value("held"), "1");
  {
    auto ledger = node.ledger();
    EXPECT_EQ(device0(*ledger).used, 800 * kMiB);  // still charged: nobody has looked yet
  }
  const Finished next = node.run(with(pod("next", kGiB), {{"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "600000"}}),
                                 {"alloc", std::to_string(800 * kMiB)});
  EXPECT_EQ(next.value("result"), "0");
  auto ledger = node.ledger();
  EXPECT_EQ(entry_of(*ledger, "crashing")->used, 0u);
  EXPECT_EQ(device0(*ledger).used, 0u);
}

TEST(Interposer, TheSwapResolverPlacesACollidingAllocationInHostMemoryAndMovesItBackWhenRoomFrees) {
  FakeGpuNode node(kGiB);
  Running holder = node.start(pod("holder", kGiB), {"hold", std::to_string(800 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(holder, "held="), "held=1\n");
  Running swapper = node.start(with(pod("swapper", kGiB), {{"TESSERA_GPU_MEMORY_RESOLVER", "swap"}}),
                               {"swap-hold", std::to_string(600 * kMiB)});
  ASSERT_EQ(FakeGpuNode::read_until(swapper, "held="), "held=1\n");  // at once: no wait
  auto ledger = node.ledger();
  const EntryRecord* swapping = entry_of(*ledger, "swapper");
  EXPECT_EQ(swapping->in_host, 600 * kMiB);
  EXPECT_EQ(swapping->used, 0u);
  EXPECT_EQ(swapping->swap_outs, 1u);
  EXPECT_EQ(device0(*ledger).used, 800 * kMiB);
  EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 800 * kMiB);  // nothing of it on the device

  ASSERT_EQ(write(swapper.input, "check\n", 6), 6);  // still no room: it stays in host memory
  EXPECT_EQ(FakeGpuNode::read_until(swapper, "intact="), "intact=1\n");
  EXPECT_EQ(swapping->in_host, 600 * kMiB);

  EXPECT_EQ(FakeGpuNode::finish(holder).exit_code, 0);
  ASSERT_EQ(write(swapper.input, "check\n", 6), 6);  // room now: back on the device, contents intact
  EXPECT_EQ(FakeGpuNode::read_until(swapper, "intact="), "intact=1\n");
  EXPECT_EQ(swapping->in_host, 0u);
  EXPECT_EQ(swapping->used, 600 * kMiB);
  EXPECT_EQ(swapping->swap_ins, 1u);
  EXPECT_EQ(node.run({}, {"fake-stats"}).number("fake_used"), 600 * kMiB);
  EXPECT_LE(node.run({}, {"fake-stats"}).number("fake_peak_used"), node.capacity());
  EXPECT_EQ(FakeGpuNode::finish(swapper).exit_code, 0);
  EXPECT_EQ(device0(*ledger).used, 0u);
  EXPECT_EQ(swapping->in_host, 0u);
}

TEST(Interposer, AForkedChildDoesNotKeepItsParentsChargeAlive) {
  FakeGpuNode node(kGiB);
  Running parent = node.start(pod("forking", kGiB), {"hold", std::to_string(800 * kMiB), "die-leaving-child"});
  bool held = false, child = false;  // in either order
  for (int line = 0; line < 2; ++line) {
    const std::string text = FakeGpuNode::read_until(parent, "");
    held = held || text == "held=1\n";
    child = child || text == "child=1\n";
  }
  ASSERT_TRUE(held && child);
  int status = 0;
  waitpid(parent.pid, &status, 0);  // the parent has ended; its child lives until its input closes
  auto ledger = node.ledger();
  EXPECT_EQ(ledger->reclaim_dead_processes(), 800 * kMiB);
  EXPECT_EQ(device0(*ledger).used, 0u);
  parent.pid = -1;
  FakeGpuNode::finish(parent);
}

}  // namespace
}  // namespace tessera::gpumem::testing
