// Bailey, Lowe & Sutton (2008) sec. 3 / Fig. 5, reproduced: a chain's constraints are violated
// at random (Gaussian noise, ~0.1% RMS relative bond error) and restored to tau = 1e-8
// (Bailey eq. 24) by SHAKE, MILC SHAKE and the matrix method; RATTLE and MILC also restore
// random velocities. Every method works on the same perturbed configurations, in one run, so
// the printed ratios compare like with like.
//
//   constraint_bench [--quick] [--markdown FILE] [--data FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ikd/constraints/solver.h"
#include "ikd/systems/chains.h"

#ifdef IKD_HAVE_OPENMM
#include <OpenMM.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  std::string name;
  bool ring;
};

struct Row {
  std::string shape;
  int n = 0;
  std::string method;
  double iterations = 0;       // mean per projection
  double us_per_constraint = 0;
  double us_total = 0;         // mean per projection
  double max_violation = 0;    // worst after projection
  int failures = 0;            // projections that did not converge
};

Eigen::Matrix3Xd Conformation(const Shape& shape, int n, std::mt19937_64& rng) {
  if (shape.ring) return ikd::RegularRing(n, 1.0);
  if (shape.name == "helix") return *ikd::HelixChain(n, 5.0, 2.0, 1.0);
  if (shape.name == "coil") return ikd::RandomCoil(n, 1.0, false, rng);
  return ikd::StraightChain(n, 1.0);
}

// Projects every perturbed copy with `method`; with velocities, also projects random
// velocities at the result (RATTLE for kRattle).
Row Measure(const Shape& shape, int n, ikd::Method method, bool with_velocities,
            const ikd::ConstraintModel& model, const Eigen::Matrix3Xd& reference,
            const std::vector<Eigen::Matrix3Xd>& perturbed,
            const std::vector<Eigen::Matrix3Xd>& velocities) {
  ikd::ProjectionOptions options;
  options.tolerance = 1e-8;
  options.max_iterations = 2'000'000;
  auto solver = *ikd::MakeConstraintSolver(method, model, options);
  Row row{shape.name, n, std::string(ikd::MethodName(method)) + (with_velocities ? "+vel" : "")};
  double iterations = 0, seconds = 0;
  for (size_t k = 0; k < perturbed.size(); ++k) {
    Eigen::Matrix3Xd r = perturbed[k], v = velocities[k];
    const auto start = Clock::now();
    auto summary = solver->ProjectPositions(reference, r);
    int its = summary->iterations;
    if (with_velocities && summary->converged()) {
      auto vs = solver->ProjectVelocities(r, v);
      its += vs->iterations;
      if (!vs->converged()) ++row.failures;
    }
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!summary->converged()) ++row.failures;
    iterations += its;
    row.max_violation = std::max(row.max_violation, model.MaxRelativeViolation(r));
  }
  const double count = static_cast<double>(perturbed.size());
  row.iterations = iterations / count;
  row.us_total = 1e6 * seconds / count;
  row.us_per_constraint = row.us_total / model.constraints().size();
  return row;
}

#ifdef IKD_HAVE_OPENMM
// OpenMM's CCMA (Reference platform) through Context::applyConstraints(tol) on the same
// perturbed configurations; only applyConstraints is timed. OpenMM stops after its own
// iteration cap without saying so: the violation it leaves is measured here.
Row MeasureOpenMM(const Shape& shape, int n, const ikd::ConstraintModel& model,
                  const std::vector<Eigen::Matrix3Xd>& perturbed) {
  OpenMM::System system;
  for (int k = 0; k < n; ++k) system.addParticle(1.0);
  for (const auto& c : model.constraints()) system.addConstraint(c.i, c.j, c.length);
  OpenMM::VerletIntegrator integrator(1e-3);
  integrator.setConstraintTolerance(1e-8);
  OpenMM::Context context(system, integrator, OpenMM::Platform::getPlatformByName("Reference"));
  Row row{shape.name, n, "OpenMM_CCMA"};
  double seconds = 0;
  std::vector<OpenMM::Vec3> positions(n);
  for (const Eigen::Matrix3Xd& r : perturbed) {
    for (int k = 0; k < n; ++k) positions[k] = OpenMM::Vec3(r(0, k), r(1, k), r(2, k));
    context.setPositions(positions);
    const auto start = Clock::now();
    context.applyConstraints(1e-8);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    const auto out = context.getState(OpenMM::State::Positions).getPositions();
    Eigen::Matrix3Xd result(3, n);
    for (int k = 0; k < n; ++k) result.col(k) << out[k][0], out[k][1], out[k][2];
    const double violation = model.MaxRelativeViolation(result);
    row.max_violation = std::max(row.max_violation, violation);
    if (violation > 1e-8) ++row.failures;
  }
  row.us_total = 1e6 * seconds / perturbed.size();
  row.us_per_constraint = row.us_total / model.constraints().size();
  return row;
}
#endif

int Repeats(int n, bool quick) {
  const int base = n <= 10 ? 2000 : n <= 100 ? 200 : n <= 1000 ? 20 : 3;
  return quick ? std::max(1, base / 10) : base;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string markdown, data;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--quick")) quick = true;
    else if (!std::strcmp(argv[k], "--markdown") && k + 1 < argc) markdown = argv[++k];
    else if (!std::strcmp(argv[k], "--data") && k + 1 < argc) data = argv[++k];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--markdown FILE] [--data FILE]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<Shape> shapes = {{"helix", false}, {"coil", false}, {"straight", false},
                                     {"ring", true}};
  const std::vector<int> sizes = {10, 100, 1000, 10000};
  std::vector<Row> rows;
  std::mt19937_64 rng(2008);
  std::printf("%-9s %6s %-16s %12s %12s %12s %10s %s\n", "shape", "N", "method", "iterations",
              "us/constr", "us total", "max viol", "failures");
  for (const Shape& shape : shapes) {
    for (int n : sizes) {
      if (shape.name != "helix" && n == 10000 && quick) continue;
      const Eigen::Matrix3Xd reference = Conformation(shape, n, rng);
      auto model = *ikd::ConstraintModel::Create(Eigen::VectorXd::Ones(n),
                                                 ikd::ChainConstraints(n, 1.0, shape.ring));
      // Per-coordinate sigma = 1e-3 / sqrt(2): RMS relative bond error 0.1% (Bailey sec. 3).
      std::vector<Eigen::Matrix3Xd> perturbed, velocities;
      for (int k = 0; k < Repeats(n, quick); ++k) {
        perturbed.push_back(reference);
        ikd::PerturbGaussian(1e-3 / std::sqrt(2.0), rng, perturbed.back());
        velocities.push_back(Eigen::Matrix3Xd::Zero(3, n));
        ikd::PerturbGaussian(1.0, rng, velocities.back());
      }
      std::vector<std::pair<ikd::Method, bool>> runs = {
          {ikd::Method::kShake, false}, {ikd::Method::kMilcShake, false},
          {ikd::Method::kMatrix, false}};
      if (shape.name == "helix") {
        runs.push_back({ikd::Method::kRattle, true});
        runs.push_back({ikd::Method::kMilcShake, true});
      }
#ifdef IKD_HAVE_OPENMM
      {
        Row row = MeasureOpenMM(shape, n, model, perturbed);
        std::printf("%-9s %6d %-16s %12s %12.4f %12.2f %10.2e %d\n", row.shape.c_str(), row.n,
                    row.method.c_str(), "-", row.us_per_constraint, row.us_total,
                    row.max_violation, row.failures);
        rows.push_back(row);
      }
#endif
      for (const auto& [method, with_velocities] : runs) {
        // SHAKE needs seconds per projection from N = 1000 on (one is enough to show it) and
        // many minutes on the 10000-site ring and straight chain (skipped).
        std::vector<Eigen::Matrix3Xd> subset = perturbed, vsubset = velocities;
        const bool slow = (method == ikd::Method::kShake || method == ikd::Method::kRattle) &&
                          n >= 1000;
        if (slow) subset.resize(1), vsubset.resize(1);
        if (slow && (shape.ring || shape.name == "straight") && n == 10000) continue;
        Row row = Measure(shape, n, method, with_velocities, model, reference, subset, vsubset);
        std::printf("%-9s %6d %-16s %12.1f %12.4f %12.2f %10.2e %d\n", row.shape.c_str(), row.n,
                    row.method.c_str(), row.iterations, row.us_per_constraint, row.us_total,
                    row.max_violation, row.failures);
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
  }

  auto find = [&](const std::string& shape, int n, const std::string& method) -> const Row* {
    for (const Row& r : rows) {
      if (r.shape == shape && r.n == n && r.method == method) return &r;
    }
    return nullptr;
  };
  std::vector<std::string> ratios;
  auto ratio = [&](const std::string& what, const Row* a, const Row* b) {
    if (a == nullptr || b == nullptr) return;
    char line[256];
    std::snprintf(line, sizeof line, "%-58s %8.2f", what.c_str(), a->us_total / b->us_total);
    ratios.push_back(line);
  };
  for (const char* shape : {"helix", "coil", "straight", "ring"}) {
    for (int n : sizes) {
      ratio(std::string("SHAKE / MILC time, ") + shape + " N=" + std::to_string(n),
            find(shape, n, "SHAKE"), find(shape, n, "MILC_SHAKE"));
      ratio(std::string("MATRIX / MILC time, ") + shape + " N=" + std::to_string(n),
            find(shape, n, "MATRIX"), find(shape, n, "MILC_SHAKE"));
      ratio(std::string("OpenMM CCMA / MILC time, ") + shape + " N=" + std::to_string(n),
            find(shape, n, "OpenMM_CCMA"), find(shape, n, "MILC_SHAKE"));
    }
  }
  for (int n : sizes) {
    ratio("MILC+vel / MILC positions, helix N=" + std::to_string(n), find("helix", n, "MILC_SHAKE+vel"),
          find("helix", n, "MILC_SHAKE"));
    ratio("RATTLE+vel / MILC+vel, helix N=" + std::to_string(n), find("helix", n, "RATTLE+vel"),
          find("helix", n, "MILC_SHAKE+vel"));
  }
  const Row* m100 = find("helix", 100, "MILC_SHAKE");
  const Row* m10000 = find("helix", 10000, "MILC_SHAKE");
  if (m100 && m10000) {
    char line[256];
    std::snprintf(line, sizeof line, "%-58s %8.2f", "MILC us/constraint N=10000 / N=100 (helix)",
                  m10000->us_per_constraint / m100->us_per_constraint);
    ratios.push_back(line);
  }
  std::printf("\nratios (measured in this run)\n");
  for (const auto& line : ratios) std::printf("%s\n", line.c_str());

  if (!markdown.empty()) {
    std::ofstream out(markdown);
    out << "| shape | N | method | iterations | µs / constraint | µs total | max violation | "
           "not converged |\n|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows) {
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %d | %s | %.1f | %.4f | %.2f | %.1e | %d |\n",
                    r.shape.c_str(), r.n, r.method.c_str(), r.iterations, r.us_per_constraint,
                    r.us_total, r.max_violation, r.failures);
      out << line;
    }
    out << "\n```\n";
    for (const auto& line : ratios) out << line << "\n";
    out << "```\n";
  }
  if (!data.empty()) {
    std::ofstream out(data);
    out << "# shape N method us_per_constraint iterations\n";
    for (const Row& r : rows) {
      out << r.shape << " " << r.n << " " << r.method << " " << r.us_per_constraint << " "
          << r.iterations << "\n";
    }
  }
  return 0;
}
