#include "gpumem/charge_rules.h"

#include <gtest/gtest.h>

#include "gpumem_test_support.h"

namespace tessera::gpumem {
namespace {

using testing::kGiB;

TEST(ChargeRules, UseUnderTheRequestIsGrantedEvenOnAFullDevice) {
  // The request was reserved when the entry was made: it adds nothing to the committed sum.
  const ChargeDecision decision = decide_charge(10 * kGiB, 10 * kGiB, {1 * kGiB, 4 * kGiB, 8 * kGiB}, 3 * kGiB);
  EXPECT_EQ(decision.verdict, ChargeVerdict::kGrant);
  EXPECT_EQ(decision.commit_increase, 0u);
}

TEST(ChargeRules, BurstPastTheRequestCommitsOnlyWhatPassesIt) {
  const ChargeDecision decision = decide_charge(10 * kGiB, 6 * kGiB, {3 * kGiB, 4 * kGiB, 8 * kGiB}, 2 * kGiB);
  EXPECT_EQ(decision.verdict, ChargeVerdict::kGrant);
  EXPECT_EQ(decision.commit_increase, 1 * kGiB);
}

TEST(ChargeRules, BurstWithoutRoomCollidesAndSaysByHowMuch) {
  const ChargeDecision decision = decide_charge(10 * kGiB, 9 * kGiB, {4 * kGiB, 4 * kGiB, 8 * kGiB}, 3 * kGiB);
  EXPECT_EQ(decision.verdict, ChargeVerdict::kCollision);
  EXPECT_EQ(decision.shortfall, 2 * kGiB);
}

TEST(ChargeRules, PastTheLimitIsRefusedWhateverTheRoom) {
  EXPECT_EQ(decide_charge(100 * kGiB, 0, {7 * kGiB, 4 * kGiB, 8 * kGiB}, 2 * kGiB).verdict, ChargeVerdict::kOverLimit);
  EXPECT_EQ(decide_charge(100 * kGiB, 0, {0, 0, 8 * kGiB}, ~std::uint64_t{0}).verdict, ChargeVerdict::kOverLimit);
  EXPECT_EQ(decide_charge(100 * kGiB, 0, {7 * kGiB, 4 * kGiB, 8 * kGiB}, 1 * kGiB).verdict, ChargeVerdict::kGrant);
}

TEST(ChargeRules, WhatASwapPodHoldsInHostMemoryCountsAgainstItsLimitButNotTheDevice) {
  EXPECT_EQ(decide_charge(10 * kGiB, 0, {2 * kGiB, 0, 8 * kGiB, 5 * kGiB}, 2 * kGiB).verdict,
            ChargeVerdict::kOverLimit);
  const ChargeDecision decision = decide_charge(10 * kGiB, 9 * kGiB, {2 * kGiB, 0, 8 * kGiB, 5 * kGiB}, 1 * kGiB);
  EXPECT_EQ(decision.verdict, ChargeVerdict::kGrant);
  EXPECT_EQ(decision.commit_increase, 1 * kGiB);
}

TEST(ChargeRules, ReleaseGivesBackOnlyWhatWasAboveTheRequest) {
  EXPECT_EQ(commit_decrease({6 * kGiB, 4 * kGiB, 8 * kGiB}, 3 * kGiB), 2 * kGiB);
  EXPECT_EQ(commit_decrease({3 * kGiB, 4 * kGiB, 8 * kGiB}, 3 * kGiB), 0u);
  EXPECT_EQ(commit_decrease({6 * kGiB, 0, 8 * kGiB}, 9 * kGiB), 6 * kGiB);  // never more than the use
}

TEST(ChargeRules, ChargeThenReleaseLeavesTheCommittedSumAsItWas) {
  for (std::uint64_t used : {0ull, 2ull, 4ull, 6ull}) {
    for (std::uint64_t bytes : {1ull, 2ull, 5ull}) {
      const EntryUse before{used * kGiB, 4 * kGiB, 16 * kGiB};
      const ChargeDecision decision = decide_charge(100 * kGiB, 0, before, bytes * kGiB);
      ASSERT_EQ(decision.verdict, ChargeVerdict::kGrant);
      const EntryUse after{before.used + bytes * kGiB, before.request, before.limit};
      EXPECT_EQ(commit_decrease(after, bytes * kGiB), decision.commit_increase) << used << " " << bytes;
    }
  }
}

TEST(ChooseVictims, EndsTheLowestPriorityPodThatFreesEnoughAndSparesTheRest) {
  const std::vector<VictimCandidate> candidates = {
      {0, 50, false, 2 * kGiB}, {1, 10, false, 1 * kGiB}, {2, 10, false, 3 * kGiB}, {3, 200, false, 8 * kGiB}};
  // Priority 10 pods go first, the larger first; 3 GiB covers the need, so nothing else ends.
  EXPECT_EQ(choose_victims(candidates, 100, 2 * kGiB), (std::vector<int>{2}));
  // 5 GiB needs the priority-50 pod too, and with it the 1 GiB priority-10 pod adds nothing: spared.
  EXPECT_EQ(choose_victims(candidates, 100, 5 * kGiB), (std::vector<int>{2, 0}));
  EXPECT_EQ(choose_victims(candidates, 100, 6 * kGiB), (std::vector<int>{2, 1, 0}));
  // The pod of higher priority than the one asking never ends, even when nothing else would do.
  EXPECT_TRUE(choose_victims(candidates, 100, 7 * kGiB).empty());
}

TEST(ChooseVictims, SparesAnEarlierChoiceThatALaterOneMadeUnnecessary) {
  const std::vector<VictimCandidate> candidates = {{0, 1, false, 1 * kGiB}, {1, 2, false, 4 * kGiB}};
  // Lowest priority first takes pod 0 (1 GiB), then pod 1 (4 GiB) alone covers 4 GiB: pod 0 is spared.
  EXPECT_EQ(choose_victims(candidates, 100, 4 * kGiB), (std::vector<int>{1}));
}

TEST(ChooseVictims, IdlePodsOfAnyPriorityMayEndAndGoBeforeBusyOnesOfTheirPriority) {
  const std::vector<VictimCandidate> candidates = {
      {0, 500, true, 2 * kGiB}, {1, 500, false, 2 * kGiB}, {2, 5, false, 2 * kGiB}, {3, 5, true, 2 * kGiB}};
  EXPECT_EQ(choose_victims(candidates, 100, 2 * kGiB), (std::vector<int>{3}));
  EXPECT_EQ(choose_victims(candidates, 100, 6 * kGiB), (std::vector<int>{3, 2, 0}));
}

TEST(ChooseVictims, NobodyEndsWhenAllThatMayEndWouldNotFreeEnough) {
  const std::vector<VictimCandidate> candidates = {{0, 1, false, 1 * kGiB}, {1, 500, false, 10 * kGiB}};
  EXPECT_TRUE(choose_victims(candidates, 100, 2 * kGiB).empty());
  EXPECT_TRUE(choose_victims({}, 100, 1).empty());
  EXPECT_TRUE(choose_victims({{0, 100, false, 4 * kGiB}}, 100, 1).empty());  // equal priority is no victim
}

TEST(ChooseSwapOuts, IdlePodsMoveOutFirstThenTheLowestPriorityAndNeverAHigherPriorityOne) {
  const std::vector<VictimCandidate> candidates = {
      {0, 100, false, 2 * kGiB}, {1, 50, false, 2 * kGiB}, {2, 100, true, 1 * kGiB}, {3, 500, true, 8 * kGiB}};
  // The idle pod of equal priority first (swap pods time-share with their peers); the idle pod of
  // higher priority never, idle or not.
  EXPECT_EQ(choose_swap_outs(candidates, 100, 1 * kGiB), (std::vector<int>{2}));
  EXPECT_EQ(choose_swap_outs(candidates, 100, 3 * kGiB), (std::vector<int>{2, 1}));
  EXPECT_EQ(choose_swap_outs(candidates, 100, 5 * kGiB), (std::vector<int>{2, 1, 0}));
  EXPECT_TRUE(choose_swap_outs(candidates, 100, 6 * kGiB).empty());
  // A lower-priority pod asking moves out only pods of its priority or lower.
  EXPECT_EQ(choose_swap_outs(candidates, 50, 2 * kGiB), (std::vector<int>{1}));
  EXPECT_TRUE(choose_swap_outs(candidates, 10, 1).empty());
}

}  // namespace
}  // namespace tessera::gpumem
