#include "ikd/constraints/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::constraints {
namespace {

using ::testing::ElementsAre;

// Topology is pure graph structure: each case is checked against its hand-drawn graph.
TEST(TopologyTest, EmptyHasNoComponents) {
  const ConstraintTopology t = AnalyzeTopology(3, {});
  EXPECT_EQ(t.kind, TopologyKind::kNone);
  EXPECT_TRUE(t.components.empty());
}

TEST(TopologyTest, ShuffledChainIsOrderedFromAnEnd) {
  // Path 3-1-0-2 given in scrambled order and orientation.
  const ConstraintTopology t = AnalyzeTopology(4, {{0, 1, 1}, {2, 0, 1}, {1, 3, 1}});
  ASSERT_EQ(t.kind, TopologyKind::kOpenChain);
  ASSERT_EQ(t.components.size(), 1u);
  EXPECT_THAT(t.components[0].sites, ElementsAre(2, 0, 1, 3));
  EXPECT_THAT(t.components[0].constraints, ElementsAre(1, 0, 2));
}

TEST(TopologyTest, RingIsDetectedAndOrdered) {
  const ConstraintTopology t = AnalyzeTopology(4, {{0, 1, 1}, {2, 3, 1}, {1, 2, 1}, {3, 0, 1}});
  ASSERT_EQ(t.kind, TopologyKind::kRing);
  EXPECT_THAT(t.components[0].sites, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(t.components[0].constraints, ElementsAre(0, 2, 1, 3));
}

TEST(TopologyTest, BranchPointMakesATree) {
  const ConstraintTopology t = AnalyzeTopology(4, {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}});
  EXPECT_EQ(t.kind, TopologyKind::kTree);
  EXPECT_FALSE(t.AllChainsOrRings());
}

TEST(TopologyTest, RingWithTailIsAGraph) {
  const ConstraintTopology t = AnalyzeTopology(4, {{0, 1, 1}, {1, 2, 1}, {2, 0, 1}, {2, 3, 1}});
  EXPECT_EQ(t.kind, TopologyKind::kGraph);
}

TEST(TopologyTest, SeparateChainAndRingAreTwoComponents) {
  const ConstraintTopology t =
      AnalyzeTopology(7, {{0, 1, 1}, {1, 2, 1}, {3, 4, 1}, {4, 5, 1}, {5, 3, 1}});
  ASSERT_EQ(t.components.size(), 2u);
  EXPECT_EQ(t.components[0].kind, TopologyKind::kOpenChain);
  EXPECT_EQ(t.components[1].kind, TopologyKind::kRing);
  EXPECT_EQ(t.kind, TopologyKind::kRing);
  EXPECT_TRUE(t.AllChainsOrRings());
}

}  // namespace
}  // namespace ikd::constraints
