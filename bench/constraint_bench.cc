// Bailey, Lowe & Sutton (2008) sec. 3 / Fig. 5, reproduced: a chain's constraints are violated
// at random (Gaussian noise, 0.1% RMS relative bond error) and restored to tau = 1e-8
// (Bailey eq. 24) by SHAKE, MILC SHAKE and the matrix method; RATTLE and MILC also restore
// random velocities. Beside them, when installed, GROMACS's SHAKE kernel and OpenMM's CCMA.
// Every method works on the same perturbed configurations in the same run, and the passes
// interleave the methods, so the printed ratios compare like with like.
//
//   constraint_bench [--quick] [--passes P] [--shape SHAPE] [--markdown FILE] [--data FILE]
//   constraint_bench --ccma_probe
//
// --markdown writes the results table, the ratios and the target check as markdown;
// --data writes a gnuplot data file (blocks of "shape method N us_per_constraint ...").
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "bench_flags.h"
#include "contender.h"
#include "ikd/constraints/solver.h"
#include "ikd/systems/chains.h"

ABSL_FLAG(bool, quick, false, "a tenth of the configurations per case, at least 2 (a smoke run)");
ABSL_FLAG(int, passes, 3,
          "timed passes over every case, the methods interleaved; each configuration keeps its "
          "fastest");
ABSL_FLAG(std::string, shape, "", "one chain shape only: helix, coil, straight or ring (default: all)");
ABSL_FLAG(std::string, markdown, "",
          "also write the results table, the ratios and the target check as markdown to this file");
ABSL_FLAG(std::string, data, "",
          "also write a gnuplot data file (blocks of \"shape method N us_per_constraint ...\")");
ABSL_FLAG(bool, ccma_probe, false,
          "instead of the benchmark, OpenMM CCMA+angles on straight chains of growing N: time, "
          "memory and result (needs OpenMM)");

namespace {

using Clock = std::chrono::steady_clock;
using ikd::bench::Contender;

constexpr double kTau = 1e-8;               // Bailey eq. 24, "a modest accuracy of 10^-8"
constexpr double kRmsBondError = 1e-3;      // Bailey sec. 3, "initial error of approximately 0.1%"
constexpr int kMaxIterations = 2'000'000;   // high enough that only hopeless cases hit it
constexpr double kBudgetSeconds = 3.0;      // per method and case: fewer configurations beyond
constexpr double kSinglePassSeconds = 1.0;  // a first pass slower than this is not repeated

struct Case {
  std::string shape;
  int n = 0;
  std::optional<ikd::constraints::ConstraintModel> model;
  Eigen::Matrix3Xd reference;
  std::vector<Eigen::Matrix3Xd> perturbed, velocities;
  double initial_rms = 0, initial_max = 0;  // relative bond errors before projection
};

// One method measured on one case.
struct Entry {
  std::string method;
  std::unique_ptr<Contender> contender;
  bool velocities = false;
  bool peer = false;
  double tolerance = kTau;
  int configs = 0;                           // configurations measured (fixed by the first pass)
  std::vector<std::vector<double>> seconds;  // [pass][configuration], one timed projection each
  bool repeat = true;
  double iterations = 0;  // mean; < 0 when the method does not report it
  double max_violation = 0;
  double max_velocity_violation = -1;  // < 0: velocities not projected
  int above_tau = 0;                   // projections left above the tolerance or not converged
};

struct Row {
  std::string shape;
  int n = 0;
  int constraints = 0;
  std::string method;
  int configs = 0;
  int passes = 0;
  double iterations = -1;
  double us_total = 0;  // mean over configurations of the fastest of the passes
  double noise = 0;     // how much slower the median of the passes is (same mean)
  double max_violation = 0;
  double max_velocity_violation = -1;
  int above_tau = 0;
  double tolerance = kTau;
  std::string note;  // set when the method was skipped
  double us_per_constraint() const { return us_total / constraints; }
};

int Configurations(int n, bool quick) {
  const int full = n <= 10 ? 1000 : n <= 1000 ? 100 : 10;  // Bailey: 100 random violations
  return quick ? std::max(2, full / 10) : full;
}

Eigen::Matrix3Xd Conformation(const std::string& shape, int n, std::mt19937_64& rng) {
  if (shape == "helix") return *ikd::systems::HelixChain(n, 5.0, 2.0, 1.0);  // Bailey sec. 3
  if (shape == "coil") return ikd::systems::RandomCoil(n, 1.0, /*planar=*/false, rng);
  if (shape == "ring") return ikd::systems::RegularRing(n, 1.0);
  return ikd::systems::StraightChain(n, 1.0);
}

void BondErrors(const ikd::constraints::ConstraintModel& model, const Eigen::Matrix3Xd& r,
                double& rms, double& max) {
  double sum = 0;
  max = 0;
  for (const ikd::constraints::DistanceConstraint& c : model.constraints()) {
    const double e = std::abs((r.col(c.i) - r.col(c.j)).norm() - c.length) / c.length;
    sum += e * e;
    max = std::max(max, e);
  }
  rms = std::sqrt(sum / model.constraints().size());
}

Case MakeCase(const std::string& shape, int n, bool quick, std::mt19937_64& rng) {
  Case c;
  c.shape = shape;
  c.n = n;
  c.reference = Conformation(shape, n, rng);
  c.model.emplace(*ikd::constraints::ConstraintModel::Create(
      Eigen::VectorXd::Ones(n), ikd::systems::ChainConstraints(n, 1.0, shape == "ring")));
  // Per-coordinate sigma = 1e-3 / sqrt(2): each bond length moves by the difference of two
  // sites' displacements along it, so its RMS relative error is 1e-3.
  const double sigma = kRmsBondError / std::sqrt(2.0);
  double rms_sum = 0, max_sum = 0;
  for (int k = 0; k < Configurations(n, quick); ++k) {
    c.perturbed.push_back(c.reference);
    ikd::systems::PerturbGaussian(sigma, rng, c.perturbed.back());
    c.velocities.push_back(Eigen::Matrix3Xd::Zero(3, n));
    ikd::systems::PerturbGaussian(1.0, rng, c.velocities.back());
    double rms, max;
    BondErrors(*c.model, c.perturbed.back(), rms, max);
    rms_sum += rms;
    max_sum += max;
  }
  c.initial_rms = rms_sum / c.perturbed.size();
  c.initial_max = max_sum / c.perturbed.size();
  return c;
}

// One pass of `e` over the case's configurations. The first pass also checks every result
// and fixes how many configurations later passes use (all of them, or as many as fit the
// time budget for the slow methods).
void RunPass(Entry& e, const Case& c, bool first) {
  const ikd::constraints::ConstraintModel& model = *c.model;
  const int limit = first ? static_cast<int>(c.perturbed.size()) : e.configs;
  Eigen::Matrix3Xd r(3, c.n), v(3, c.n);
  double seconds = 0, iterations = 0;
  int done = 0;
  std::vector<double>& times = e.seconds.emplace_back();
  for (int k = 0; k < limit; ++k) {
    e.contender->Load(c.perturbed[k], c.velocities[k]);
    const auto start = Clock::now();
    const ikd::bench::ProjectionCounts counts = e.contender->Project();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    seconds += times.back();
    ++done;
    if (!first) continue;
    e.contender->Store(r, v);
    // Non-finite output counts as an infinite violation (a NaN would slip through max()).
    const double violation =
        r.allFinite() ? model.MaxRelativeViolation(r) : std::numeric_limits<double>::infinity();
    e.max_violation = std::max(e.max_violation, violation);
    // 1e-6 relative slack: GROMACS tests |l^2 - r^2| / (2 l^2), equal to |r - l| / l only to
    // first order in the violation.
    bool above = !counts.converged || violation > e.tolerance * (1 + 1e-6);
    if (e.velocities) {
      const double vv = r.allFinite() && v.allFinite() ? model.MaxVelocityViolation(r, v)
                                                       : std::numeric_limits<double>::infinity();
      e.max_velocity_violation = std::max(e.max_velocity_violation, vv);
      above = above || vv > e.tolerance * (1 + 1e-6);
    }
    if (above) ++e.above_tau;
    iterations = counts.iterations < 0 || iterations < 0 ? -1 : iterations + counts.iterations;
    if (seconds > kBudgetSeconds) break;
  }
  if (first) {
    e.configs = done;
    e.iterations = iterations < 0 ? -1 : iterations / done;
    e.repeat = seconds < kSinglePassSeconds;
  }
}

Row NewRow(const Case& c, const std::string& method) {
  Row row;
  row.shape = c.shape;
  row.n = c.n;
  row.constraints = static_cast<int>(c.model->constraints().size());
  row.method = method;
  return row;
}

Row Skipped(const Case& c, const std::string& method, const std::string& why) {
  Row row = NewRow(c, method);
  row.note = "skipped: " + why;
  return row;
}

Row Summarize(const Entry& e, const Case& c) {
  Row row = NewRow(c, e.method);
  row.configs = e.configs;
  // The fastest pass of each configuration filters out preemption by other processes (one
  // context switch costs more than a whole small projection); the median shows the noise.
  row.passes = static_cast<int>(e.seconds.size());
  double fastest = 0, median = 0;
  for (int k = 0; k < e.configs; ++k) {
    std::vector<double> t;
    for (const std::vector<double>& pass : e.seconds) t.push_back(pass[k]);
    std::sort(t.begin(), t.end());
    fastest += t.front();
    median += t[t.size() / 2];
  }
  row.us_total = 1e6 * fastest / e.configs;
  row.noise = median / fastest - 1;
  row.iterations = e.iterations;
  row.max_violation = e.max_violation;
  row.max_velocity_violation = e.max_velocity_violation;
  row.above_tau = e.above_tau;
  row.tolerance = e.tolerance;
  return row;
}

std::string Iterations(double iterations) {
  return iterations < 0 ? "n/a" : absl::StrFormat("%.1f", iterations);
}

std::string Violation(double v) { return v < 0 ? "-" : absl::StrFormat("%.1e", v); }

void PrintRow(const Row& r) {
  if (!r.note.empty()) {
    std::printf("%-8s %6d %-22s %s\n", r.shape.c_str(), r.n, r.method.c_str(), r.note.c_str());
  } else {
    std::printf("%-8s %6d %-22s %5d %10s %10.4f %12.2f %6.0f%%(%d) %9s %9s %4d\n", r.shape.c_str(),
                r.n, r.method.c_str(), r.configs, Iterations(r.iterations).c_str(),
                r.us_per_constraint(), r.us_total, 100 * r.noise, r.passes,
                Violation(r.max_violation).c_str(), Violation(r.max_velocity_violation).c_str(),
                r.above_tau);
  }
  std::fflush(stdout);
}

// SHAKE-type Gauss-Seidel needs O(N^2) sweeps on a straight chain or a ring (10^5-10^6 sweeps
// at N = 1000): at N = 10000 one projection would take hours.
bool Hopeless(const std::string& method, const Case& c) {
  const bool gauss_seidel =
      method == "SHAKE" || method == "RATTLE+vel" || method == "GROMACS_SHAKE";
  return gauss_seidel && c.n >= 10000 && (c.shape == "straight" || c.shape == "ring");
}

std::vector<Entry> MakeEntries(const Case& c, std::vector<Row>& skipped) {
  std::vector<Entry> entries;
  auto add = [&](std::string method, bool velocities, bool peer, auto make) {
    if (Hopeless(method, c)) {
      skipped.push_back(Skipped(c, method, "Gauss-Seidel needs O(N^2) sweeps here (hours)"));
      return;
    }
    auto contender = make();
    if (!contender.ok()) {
      skipped.push_back(Skipped(c, method, std::string(contender.status().message())));
      return;
    }
    Entry e;
    e.method = std::move(method);
    e.contender = *std::move(contender);
    e.velocities = velocities;
    e.peer = peer;
    entries.push_back(std::move(e));
  };
  auto ikd_method = [&](ikd::constraints::Method method, bool velocities) {
    const std::string name =
        std::string(ikd::constraints::MethodName(method)) + (velocities ? "+vel" : "");
    add(name, velocities, false, [&] {
      return ikd::bench::MakeIkdContender(method, velocities, *c.model, c.reference, kTau,
                                          kMaxIterations);
    });
  };
  ikd_method(ikd::constraints::Method::kShake, false);
  ikd_method(ikd::constraints::Method::kMilcShake, false);
  ikd_method(ikd::constraints::Method::kMatrix, false);
  ikd_method(ikd::constraints::Method::kMilcShake, true);
  if (c.shape == "helix" || c.shape == "coil") ikd_method(ikd::constraints::Method::kRattle, true);
#ifdef IKD_HAVE_GROMACS
  add("GROMACS_SHAKE", false, true,
      [&] { return ikd::bench::MakeGromacsShake(*c.model, c.reference, kTau, kMaxIterations); });
#endif
#ifdef IKD_HAVE_OPENMM
  add("OpenMM_CCMA", false, true,
      [&] { return ikd::bench::MakeOpenMMCcma(*c.model, c.reference, kTau, false); });
  // CCMA's precomputed inverse is dense for nearly straight chains (no element under its 0.02
  // cutoff), 10^8 entries at N = 10000; ProbeDenseCcma shows where that leads.
  const bool dense = c.n >= 10000 && (c.shape == "straight" || c.shape == "ring");
  if (!dense) {
    add("OpenMM_CCMA+angles", false, true,
        [&] { return ikd::bench::MakeOpenMMCcma(*c.model, c.reference, kTau, true); });
  } else {
    skipped.push_back(
        Skipped(c, "OpenMM_CCMA+angles",
                "CCMA's inverse coupling matrix is dense (10^8 entries) and its "
                "result non-finite from N = 2000 on a straight chain (--ccma_probe)"));
  }
#endif
  return entries;
}

void RunPasses(std::vector<Entry>& entries, const Case& c, int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    for (Entry& e : entries) {
      if (pass == 0 || e.repeat) RunPass(e, c, pass == 0);
    }
  }
}

// A peer that stopped above tau is compared with MILC asked for the violation the peer left.
std::vector<Entry> MatchedTolerance(const std::vector<Entry>& entries, const Case& c) {
  std::vector<Entry> matched;
  for (const Entry& peer : entries) {
    if (!peer.peer || peer.max_violation <= kTau * (1 + 1e-6)) continue;
    if (!std::isfinite(peer.max_violation)) continue;  // nothing to match
    Entry e;
    e.method = absl::StrFormat("MILC_SHAKE@%.1e", peer.max_violation);
    e.tolerance = peer.max_violation;
    e.contender = *ikd::bench::MakeIkdContender(ikd::constraints::Method::kMilcShake, false,
                                                *c.model, c.reference, e.tolerance, kMaxIterations);
    matched.push_back(std::move(e));
  }
  return matched;
}

// ---- ratios and targets ----

struct Results {
  std::vector<Row> rows;
  std::vector<std::pair<std::string, double>> ratios;
  std::vector<std::vector<std::string>> targets;  // target, measured, met

  const Row* Find(const std::string& shape, int n, const std::string& method) const {
    for (const Row& r : rows) {
      if (r.shape == shape && r.n == n && r.method == method && r.note.empty()) return &r;
    }
    return nullptr;
  }
  std::optional<double> Ratio(const std::string& shape, int n, const std::string& a,
                              const std::string& b) const {
    const Row* x = Find(shape, n, a);
    const Row* y = Find(shape, n, b);
    if (x == nullptr || y == nullptr) return std::nullopt;
    return x->us_total / y->us_total;
  }
};

const std::vector<std::string> kShapes = {"helix", "coil", "straight", "ring"};
const std::vector<int> kSizes = {10, 100, 1000, 10000};

void ComputeRatios(Results& res) {
  auto add = [&](const std::string& label, std::optional<double> value) {
    if (value) res.ratios.push_back({label, *value});
  };
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"SHAKE", "MILC_SHAKE"},          {"MILC_SHAKE+vel", "MILC_SHAKE"},
      {"RATTLE+vel", "MILC_SHAKE+vel"}, {"MATRIX", "MILC_SHAKE"},
      {"GROMACS_SHAKE", "MILC_SHAKE"},  {"SHAKE", "GROMACS_SHAKE"},
      {"OpenMM_CCMA", "MILC_SHAKE"},    {"OpenMM_CCMA+angles", "MILC_SHAKE"}};
  for (const auto& [a, b] : pairs) {
    for (const std::string& shape : kShapes) {
      for (int n : kSizes) {
        add(absl::StrFormat("%s / %s, %s N=%d", a, b, shape, n), res.Ratio(shape, n, a, b));
      }
    }
  }
  // Peers that stopped above tau against MILC asked for the same violation.
  for (const std::string& shape : kShapes) {
    for (int n : kSizes) {
      for (const Row& r : res.rows) {
        if (r.shape != shape || r.n != n || r.method.rfind("MILC_SHAKE@", 0) != 0) continue;
        for (const char* peer : {"OpenMM_CCMA", "OpenMM_CCMA+angles", "GROMACS_SHAKE"}) {
          const Row* p = res.Find(shape, n, peer);
          if (p && absl::StrFormat("MILC_SHAKE@%.1e", p->max_violation) == r.method) {
            add(absl::StrFormat("%s / %s, %s N=%d", peer, r.method, shape, n),
                p->us_total / r.us_total);
          }
        }
      }
    }
  }
  for (const std::string& shape : kShapes) {
    const Row* a = res.Find(shape, 100, "MILC_SHAKE");
    const Row* b = res.Find(shape, 10000, "MILC_SHAKE");
    if (a && b) {
      add(absl::StrFormat("MILC us/constraint N=10000 / N=100, %s", shape),
          b->us_per_constraint() / a->us_per_constraint());
    }
  }
}

std::string Fmt(double x) {
  return x >= 100 ? absl::StrFormat("%.0f", x) : absl::StrFormat("%.2f", x);
}

void CheckTargets(Results& res) {
  auto target = [&](std::string what, std::string measured, bool met) {
    res.targets.push_back({std::move(what), std::move(measured), met ? "yes" : "no"});
  };
  auto list = [&](const std::string& a, const std::string& b, const std::vector<int>& sizes,
                  const std::vector<std::string>& shapes, double& lo, double& hi) {
    std::string text;
    lo = 1e300, hi = 0;
    for (const std::string& shape : shapes) {
      for (int n : sizes) {
        if (auto r = res.Ratio(shape, n, a, b)) {
          text += absl::StrFormat("%s%s N=%d: %s", text.empty() ? "" : "; ", shape, n, Fmt(*r));
          lo = std::min(lo, *r);
          hi = std::max(hi, *r);
        }
      }
    }
    return text.empty() ? std::string("not measured") : text;
  };
  double lo, hi;
  std::string m = list("SHAKE", "MILC_SHAKE", {10}, {"helix"}, lo, hi);
  target("MILC >= 3x faster than SHAKE at N = 10 (helix)", m, hi > 0 && lo >= 3);
  m = list("SHAKE", "MILC_SHAKE", {10}, {"coil", "straight", "ring"}, lo, hi);
  target("... other shapes at N = 10", m, hi > 0 && lo >= 3);
  m = list("SHAKE", "MILC_SHAKE", {1000, 10000}, {"helix"}, lo, hi);
  target("MILC >= 100x faster than SHAKE at N >= 1000 (helix)", m, hi > 0 && lo >= 100);
  m = list("SHAKE", "MILC_SHAKE", {1000, 10000}, {"coil", "straight", "ring"}, lo, hi);
  target("... other shapes at N >= 1000", m, hi > 0 && lo >= 100);
  m = list("MILC_SHAKE+vel", "MILC_SHAKE", kSizes, kShapes, lo, hi);
  target("MILC with velocities < 1.2x MILC positions alone (all shapes, N)",
         absl::StrFormat("%s to %s", Fmt(lo), Fmt(hi)), hi > 0 && hi < 1.2);
  m = list("MATRIX", "MILC_SHAKE", kSizes, {"helix", "coil", "straight"}, lo, hi);
  target("matrix method within 3x of MILC on a chain (open chains, all N)",
         absl::StrFormat("%s to %s", Fmt(lo), Fmt(hi)), hi > 0 && hi <= 3);
  {
    std::string text;
    bool met = true;
    for (const std::string& shape : kShapes) {
      double a = 1e300, b = 0;
      for (int n : {100, 1000, 10000}) {
        if (const Row* r = res.Find(shape, n, "MILC_SHAKE")) {
          a = std::min(a, r->us_per_constraint());
          b = std::max(b, r->us_per_constraint());
        }
      }
      if (b == 0) continue;
      text += absl::StrFormat("%s%s %.3f-%.3f us (max/min %.2f)", text.empty() ? "" : "; ", shape,
                              a, b, b / a);
      met = met && b / a <= 1.25;
    }
    target("MILC time per constraint flat from N = 100 to 10000 (max/min <= 1.25)",
           text.empty() ? "not measured" : text, !text.empty() && met);
  }
  for (const char* peer : {"GROMACS_SHAKE", "OpenMM_CCMA", "OpenMM_CCMA+angles"}) {
    std::string text;
    bool met = true, any = false;
    for (const std::string& shape : kShapes) {
      m = list(peer, "MILC_SHAKE", kSizes, {shape}, lo, hi);
      if (hi == 0) continue;
      any = true;
      text += absl::StrFormat("%s%s %s-%s", text.empty() ? "" : "; ", shape, Fmt(lo), Fmt(hi));
      met = met && lo > 1;
    }
    target(absl::StrFormat("ahead of %s on every chain shape (time ratio peer / MILC)", peer),
           any ? text : "not measured (peer not installed)", any && met);
  }
}

// ---- output ----

void WriteMarkdown(const Results& res, const std::string& header, const std::string& path) {
  std::ofstream out(path);
  out << header << "\n\n";
  out << "| shape | N | method | configs | iterations | µs / constraint | µs total | noise "
         "(passes) | max violation | max velocity violation | above τ |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : res.rows) {
    if (!r.note.empty()) {
      out << absl::StrFormat("| %s | %d | %s | | | | | | | | %s |\n", r.shape, r.n, r.method,
                             r.note);
      continue;
    }
    out << absl::StrFormat(
        "| %s | %d | %s | %d | %s | %.4f | %.2f | %.0f%% (%d) | %s | %s | %d |\n", r.shape, r.n,
        r.method, r.configs, Iterations(r.iterations), r.us_per_constraint(), r.us_total,
        100 * r.noise, r.passes, Violation(r.max_violation), Violation(r.max_velocity_violation),
        r.above_tau);
  }
  out << "\nRatios of mean time per projection, measured in this run:\n\n```\n";
  for (const auto& [label, value] : res.ratios) {
    out << absl::StrFormat("%-58s %10s\n", label, Fmt(value));
  }
  out << "```\n\nTargets (issue), checked by the program on this run:\n\n"
         "| target | measured | met |\n|---|---|---|\n";
  for (const auto& t : res.targets) out << "| " << t[0] << " | " << t[1] << " | " << t[2] << " |\n";
}

// Blocks of one shape and method (blank-line separated) so gnuplot draws one line each.
void WriteData(const Results& res, const std::string& path) {
  std::ofstream out(path);
  out << "# shape method N us_per_constraint iterations max_violation us_total\n";
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> blocks;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Row& r : res.rows) {
    if (!r.note.empty() || r.method.find('@') != std::string::npos) continue;
    auto key = std::make_pair(r.shape, r.method);
    if (!blocks.count(key)) order.push_back(key);
    blocks[key].push_back(&r);
  }
  for (const auto& key : order) {
    for (const Row* r : blocks[key]) {
      out << absl::StrFormat("%s %s %d %.6g %.6g %.3g %.6g\n", r->shape, r->method, r->n,
                             r->us_per_constraint(), r->iterations, r->max_violation, r->us_total);
    }
    out << "\n\n";
  }
}

#ifdef IKD_HAVE_OPENMM
// Why CCMA with angles is not run on the 10000-site straight chain and ring: its precomputed
// inverse coupling matrix is dense there; this shows time, memory and result as N grows.
void ProbeDenseCcma() {
  std::mt19937_64 rng(2008);
  std::printf("OpenMM CCMA+angles on a straight chain, one configuration each\n");
  for (int n : {500, 1000, 1500, 2000, 3000}) {
    const Case c = [&] {
      Case one;
      one.shape = "straight";
      one.n = n;
      one.reference = ikd::systems::StraightChain(n, 1.0);
      one.model.emplace(*ikd::constraints::ConstraintModel::Create(
          Eigen::VectorXd::Ones(n), ikd::systems::ChainConstraints(n, 1.0, false)));
      one.perturbed.push_back(one.reference);
      ikd::systems::PerturbGaussian(kRmsBondError / std::sqrt(2.0), rng, one.perturbed.back());
      one.velocities.push_back(Eigen::Matrix3Xd::Zero(3, n));
      return one;
    }();
    const auto setup = Clock::now();
    auto ccma = ikd::bench::MakeOpenMMCcma(*c.model, c.reference, kTau, true);
    if (!ccma.ok()) {
      std::printf("N=%d: %s\n", n, std::string(ccma.status().message()).c_str());
      continue;
    }
    (*ccma)->Load(c.perturbed[0], c.velocities[0]);
    const auto start = Clock::now();
    (*ccma)->Project();
    const auto end = Clock::now();
    Eigen::Matrix3Xd r(3, n), v(3, n);
    (*ccma)->Store(r, v);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "N=%5d: set-up %.2f s, one projection %.3f s, peak memory %.0f MB, %s\n", n,
        std::chrono::duration<double>(start - setup).count(),
        std::chrono::duration<double>(end - start).count(), usage.ru_maxrss / 1024.0,
        r.allFinite()
            ? absl::StrFormat("max violation %.1e", c.model->MaxRelativeViolation(r)).c_str()
            : "positions non-finite (NaN)");
  }
}
#endif

// Smallest interval between two clock reads: included once in every timed projection.
double TimerOverheadNs() {
  double best = 1e9;
  for (int k = 0; k < 10000; ++k) {
    const auto a = Clock::now();
    const auto b = Clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(b - a).count());
  }
  return best;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

constexpr char kProgram[] = "constraint_bench";

struct Options {
  bool quick = false;
  int passes = 0;
  std::vector<std::string> shapes;
  std::string markdown, data;
};

// The flags, range-checked.
Options ReadOptions() {
  Options o;
  o.quick = absl::GetFlag(FLAGS_quick);
  o.passes = ikd::bench::FlagIn(kProgram, FLAGS_passes, 1, 100);
  o.shapes = kShapes;
  if (const std::string shape = absl::GetFlag(FLAGS_shape); !shape.empty()) {
    // Conformation() would build a straight chain under any unknown name.
    if (std::find(kShapes.begin(), kShapes.end(), shape) == kShapes.end()) {
      ikd::bench::DieIn(kProgram, "--shape must be helix, coil, straight or ring, got " + shape);
    }
    o.shapes = {shape};
  }
  o.markdown = absl::GetFlag(FLAGS_markdown);
  o.data = absl::GetFlag(FLAGS_data);
  return o;
}

int RunCcmaProbe() {
#ifdef IKD_HAVE_OPENMM
  ProbeDenseCcma();
  return 0;
#else
  ikd::bench::DieIn(kProgram, "--ccma_probe needs OpenMM (not found at configure time)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  ikd::bench::ParseBenchFlags(kProgram,
                              "constraint benchmark: SHAKE, MILC SHAKE, the matrix method and "
                              "their peers restoring random chain violations (Bailey 2008)",
                              argc, argv);
  if (absl::GetFlag(FLAGS_ccma_probe)) return RunCcmaProbe();
  const Options options = ReadOptions();
  std::string peers = "peers:";
#ifdef IKD_HAVE_GROMACS
  peers += " GROMACS " + ikd::bench::GromacsVersion() + " gmx::cshake;";
#else
  peers += " GROMACS not built;";
#endif
#ifdef IKD_HAVE_OPENMM
  peers += " OpenMM " + ikd::bench::OpenMMVersion() + " CCMA";
#else
  peers += " OpenMM not built";
#endif
  const std::string header = absl::StrFormat(
      "CPU: %s. tau = %.0e, Gaussian noise with %.1f%% RMS relative bond error, unit masses "
      "and links, %d interleaved passes, timer overhead %.0f ns per timed projection "
      "(included); %s.",
      CpuModel(), kTau, 100 * kRmsBondError, options.passes, TimerOverheadNs(), peers);
  std::printf("%s\n\n", header.c_str());
  std::printf("%-8s %6s %-22s %5s %10s %10s %12s %10s %9s %9s %4s\n", "shape", "N", "method",
              "cfgs", "iters", "us/constr", "us total", "noise", "max viol", "vel viol", ">tau");

  Results res;
  std::mt19937_64 rng(2008);
  for (const std::string& shape : options.shapes) {
    for (int n : kSizes) {
      const Case c = MakeCase(shape, n, options.quick, rng);
      std::printf("# %s N=%d: %zu configurations, initial relative bond error RMS %.2e, max %.2e\n",
                  shape.c_str(), n, c.perturbed.size(), c.initial_rms, c.initial_max);
      std::vector<Row> skipped;
      std::vector<Entry> entries = MakeEntries(c, skipped);
      RunPasses(entries, c, options.passes);
      std::vector<Entry> matched = MatchedTolerance(entries, c);
      RunPasses(matched, c, options.passes);
      for (const Entry& e : entries) res.rows.push_back(Summarize(e, c));
      for (const Entry& e : matched) res.rows.push_back(Summarize(e, c));
      for (const Row& r : skipped) res.rows.push_back(r);
      for (auto it = res.rows.end() - entries.size() - matched.size() - skipped.size();
           it != res.rows.end(); ++it) {
        PrintRow(*it);
      }
    }
  }
  ComputeRatios(res);
  CheckTargets(res);

  std::printf("\nratios (mean time per projection, this run)\n");
  for (const auto& [label, value] : res.ratios) {
    std::printf("%-58s %10s\n", label.c_str(), Fmt(value).c_str());
  }
  std::printf("\ntargets\n");
  for (const auto& t : res.targets) {
    std::printf("[%s] %s: %s\n", t[2].c_str(), t[0].c_str(), t[1].c_str());
  }
  std::printf("\nleft above tolerance (or not converged):");
  bool any = false;
  for (const Row& r : res.rows) {
    if (r.above_tau > 0) {
      std::printf("\n  %s N=%d %s: %d of %d, worst position violation %.1e%s", r.shape.c_str(), r.n,
                  r.method.c_str(), r.above_tau, r.configs, r.max_violation,
                  r.max_velocity_violation < 0
                      ? ""
                      : absl::StrFormat(", velocity %.1e", r.max_velocity_violation).c_str());
      any = true;
    }
  }
  std::printf("%s\n", any ? "" : " none");
  if (!options.markdown.empty()) WriteMarkdown(res, header, options.markdown);
  if (!options.data.empty()) WriteData(res, options.data);
  return 0;
}
