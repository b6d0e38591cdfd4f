// --trace of the joint-path benchmark (paths_bench.cc): per sample k >= 1 of one chain
// scenario, for the witness and each solver, the fastest angle's |v_k| and index, the most
// accelerated angle's |a_k| (k + 1 < samples) and index, the least clearance, the largest site
// move since k - 1 and the least bend, as CSV lines.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "scenarios.h"

namespace ikd::bench::paths {

// The witness's maxima, the CSV header and the witness's own lines.
void TraceWitness(const Scenario& s);
// The lines of one path (sites per sample), labelled `name`.
void TraceSites(const Scenario& s, const char* name, const std::vector<Eigen::Matrix3Xd>& sites);

}  // namespace ikd::bench::paths
