#include "core/node_pool.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(NodePool, ANodesPoolIsItsLabelOrDefault) {
  EXPECT_EQ(node_pool({}), "default");
  EXPECT_EQ(node_pool({{"scheduling.tessera.dev/node-pool", "inference"}}), "inference");
  EXPECT_EQ(node_pool({{"scheduling.tessera.dev/node-pool", ""}}), "default");
}

TEST(NodePool, OvercommitByPoolWithTheDefaultPoolForTheRest) {
  auto overcommit = parse_gpu_memory_overcommit("inference=1.5,default=1.2");
  ASSERT_TRUE(overcommit.ok()) << overcommit.error().message;
  EXPECT_EQ(overcommit->for_pool("inference"), 1500);
  EXPECT_EQ(overcommit->for_pool("batch"), 1200);
  auto everywhere = parse_gpu_memory_overcommit("1.25");
  ASSERT_TRUE(everywhere.ok());
  EXPECT_EQ(everywhere->for_pool("inference"), 1250);
  EXPECT_EQ(GpuMemoryOvercommit{}.for_pool("inference"), 1000);

  std::vector<NodeSpec> nodes(2);
  nodes[1].labels = {{"scheduling.tessera.dev/node-pool", "inference"}};
  overcommit->apply_to(nodes);
  EXPECT_EQ(nodes[0].gpu_memory_overcommit_milli, 1200);
  EXPECT_EQ(nodes[1].gpu_memory_overcommit_milli, 1500);
}

TEST(NodePool, BadOvercommitsSayWhatIsAllowed) {
  auto below = parse_gpu_memory_overcommit("inference=0.5");
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.error().message,
            "pool 'inference': GPU memory overcommit 0.5 is not between 1 and 8 (1 lets no limit overcommit a device)");
  EXPECT_FALSE(parse_gpu_memory_overcommit("inference=").ok());
  EXPECT_FALSE(parse_gpu_memory_overcommit("=1.5").ok());
  EXPECT_FALSE(parse_gpu_memory_overcommit("1.5x").ok());
  EXPECT_FALSE(parse_gpu_memory_overcommit("9").ok());
  auto twice = parse_gpu_memory_overcommit("a=1.5,a=2");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "pool 'a' is given twice");
}

}  // namespace
}  // namespace tessera
