// The cost target of the joint-path issue: a 200-sample path of a 7-link chain among 20
// obstacles planned by PlanPath on one core (target: at most 50 ms).
#pragma once

namespace ikd::bench::paths {

// Prints the plan's wall time (median and best of `repeats`), its samples and the summary.
void RunCostCase(int repeats);

}  // namespace ikd::bench::paths
