// by_node: the counting sort the victim indexes are built with.
#include "scheduler/by_node.h"

#include <gtest/gtest.h>

#include <random>

namespace tessera {
namespace {

struct Item {
  int node = 0;
  int order = 0;  // the place it was given in
};

// Each node's items are its own, in the order given, and the ranges cover every node, those
// with no item too.
TEST(ByNode, KeepsTheOrderWithinEachNode) {
  std::mt19937_64 random(5);
  for (int round = 0; round < 50; ++round) {
    const size_t nodes = 1 + random() % 40;
    std::vector<Item> items(random() % 200);
    for (size_t i = 0; i < items.size(); ++i) items[i] = {static_cast<int>(random() % nodes), static_cast<int>(i)};
    std::vector<size_t> start;
    const std::vector<Item> sorted = by_node(items, nodes, start);
    ASSERT_EQ(start.size(), nodes + 1);
    EXPECT_EQ(start.front(), 0u);
    EXPECT_EQ(start.back(), items.size());
    ASSERT_EQ(sorted.size(), items.size());
    for (size_t node = 0; node < nodes; ++node) {
      std::vector<int> expected;
      for (const Item& item : items) {
        if (item.node == static_cast<int>(node)) expected.push_back(item.order);
      }
      std::vector<int> got;
      for (size_t i = start[node]; i < start[node + 1]; ++i) {
        EXPECT_EQ(sorted[i].node, static_cast<int>(node));
        got.push_back(sorted[i].order);
      }
      EXPECT_EQ(got, expected) << "node " << node;
    }
  }
}

TEST(ByNode, NoItems) {
  std::vector<size_t> start;
  EXPECT_TRUE(by_node(std::vector<Item>{}, 3, start).empty());
  EXPECT_EQ(start, (std::vector<size_t>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace tessera
