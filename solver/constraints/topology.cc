#include "ikd/constraints/topology.h"

#include <algorithm>

namespace ikd::constraints {
namespace {

// Incident constraints of every site.
std::vector<std::vector<int>> Incidence(int num_sites,
                                        const std::vector<DistanceConstraint>& constraints) {
  std::vector<std::vector<int>> incident(num_sites);
  for (int c = 0; c < static_cast<int>(constraints.size()); ++c) {
    incident[constraints[c].i].push_back(c);
    incident[constraints[c].j].push_back(c);
  }
  return incident;
}

int OtherSite(const DistanceConstraint& c, int site) { return c.i == site ? c.j : c.i; }

// Walks a path or cycle from `start`, recording sites and constraints in order.
void OrderAlongPath(int start, const std::vector<std::vector<int>>& incident,
                    const std::vector<DistanceConstraint>& constraints,
                    ConstraintComponent& component) {
  std::vector<int> sites{start};
  std::vector<int> ordered;
  int site = start;
  int came_by = -1;
  while (true) {
    int next_constraint = -1;
    for (int c : incident[site]) {
      if (c != came_by) { next_constraint = c; break; }
    }
    if (next_constraint < 0) break;                  // end of an open chain
    ordered.push_back(next_constraint);
    site = OtherSite(constraints[next_constraint], site);
    came_by = next_constraint;
    if (site == start) break;                        // ring closed
    sites.push_back(site);
  }
  component.sites = std::move(sites);
  component.constraints = std::move(ordered);
}

}  // namespace

const char* TopologyName(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::kNone: return "NONE";
    case TopologyKind::kOpenChain: return "OPEN_CHAIN";
    case TopologyKind::kRing: return "RING";
    case TopologyKind::kTree: return "TREE";
    case TopologyKind::kGraph: return "GRAPH";
  }
  return "UNKNOWN";
}

bool ConstraintTopology::AllChainsOrRings() const {
  return std::all_of(components.begin(), components.end(), [](const ConstraintComponent& c) {
    return c.kind == TopologyKind::kOpenChain || c.kind == TopologyKind::kRing;
  });
}

ConstraintTopology AnalyzeTopology(int num_sites,
                                   const std::vector<DistanceConstraint>& constraints) {
  ConstraintTopology topology;
  const auto incident = Incidence(num_sites, constraints);
  std::vector<int> component_of(num_sites, -1);
  for (int seed = 0; seed < num_sites; ++seed) {
    if (component_of[seed] >= 0 || incident[seed].empty()) continue;
    // Breadth-first collection of one component.
    const int id = static_cast<int>(topology.components.size());
    std::vector<int> sites{seed};
    component_of[seed] = id;
    std::vector<int> edges;
    for (size_t k = 0; k < sites.size(); ++k) {
      for (int c : incident[sites[k]]) {
        const int other = OtherSite(constraints[c], sites[k]);
        if (sites[k] == constraints[c].i) edges.push_back(c);  // count each edge once
        if (component_of[other] < 0) {
          component_of[other] = id;
          sites.push_back(other);
        }
      }
    }
    int max_degree = 0;
    int end_site = -1;
    for (int s : sites) {
      const int degree = static_cast<int>(incident[s].size());
      max_degree = std::max(max_degree, degree);
      if (degree == 1 && end_site < 0) end_site = s;
    }
    const size_t num_edges = edges.size();
    ConstraintComponent component;
    if (num_edges + 1 == sites.size() && max_degree <= 2) {
      component.kind = TopologyKind::kOpenChain;
      OrderAlongPath(end_site, incident, constraints, component);
    } else if (num_edges == sites.size() && max_degree == 2) {
      component.kind = TopologyKind::kRing;
      OrderAlongPath(*std::min_element(sites.begin(), sites.end()), incident, constraints,
                     component);
    } else {
      component.kind =
          num_edges + 1 == sites.size() ? TopologyKind::kTree : TopologyKind::kGraph;
      std::sort(sites.begin(), sites.end());
      std::sort(edges.begin(), edges.end());
      component.sites = std::move(sites);
      component.constraints = std::move(edges);
    }
    topology.kind = std::max(topology.kind, component.kind);
    topology.components.push_back(std::move(component));
  }
  return topology;
}

}  // namespace ikd::constraints
