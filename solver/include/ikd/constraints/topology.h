// Topology of a constraint graph, detected once: open chains, rings, trees, general graphs.
#pragma once

#include <vector>

#include "ikd/constraints/types.h"

namespace ikd::constraints {

enum class TopologyKind {
  kNone,       // no constraints
  kOpenChain,  // a simple path of sites
  kRing,       // a single cycle
  kTree,       // acyclic with a branch point
  kGraph,      // contains a cycle and is not a single ring
};
const char* TopologyName(TopologyKind kind);

// One connected component of the constraint graph.
struct ConstraintComponent {
  TopologyKind kind = TopologyKind::kNone;
  // For chains and rings: sites in path order, and constraints[k] joins sites[k] and
  // sites[(k + 1) % sites.size()]. For trees and graphs: sites and constraints in index order.
  std::vector<int> sites;
  std::vector<int> constraints;
};

struct ConstraintTopology {
  // The most general kind over all components (kOpenChain < kRing < kTree < kGraph).
  TopologyKind kind = TopologyKind::kNone;
  std::vector<ConstraintComponent> components;

  // True when every component is a chain or a ring (MILC SHAKE applies).
  bool AllChainsOrRings() const;
};

// Components of the graph whose edges are `constraints` over `num_sites` sites. Sites that
// appear in no constraint belong to no component. Indices must already be valid.
ConstraintTopology AnalyzeTopology(int num_sites,
                                   const std::vector<DistanceConstraint>& constraints);

}  // namespace ikd::constraints
