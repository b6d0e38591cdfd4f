// GROMACS SHAKE as a benchmark contender. Debian's libgromacs-dev installs no mdlib header,
// but libgromacs_d exports GROMACS's SHAKE kernel gmx::cshake (src/gromacs/mdlib/shake.h,
// unchanged from 2022 to 2025); it is declared here from that signature and built only
// against GROMACS >= 2022 in double precision (bench/CMakeLists.txt checks that it links).
#include <gromacs/math/vectypes.h>
#include <gromacs/utility/arrayref.h>
#include <gromacs/utility/real.h>
#include <gromacs/version.h>

#include <cstdio>
#include <vector>

#include "contender.h"

#if !GMX_DOUBLE || GMX_VERSION < 20220000
#error "the GROMACS peer needs the double-precision libgromacs_d of GROMACS 2022 or later"
#endif

struct t_pbc;

namespace gmx {
// Gauss-Seidel SHAKE sweeps (Ryckaert, Ciccotti & Berendsen 1977, sec. 5) over the constraint
// triples iatom[3k..3k+2] = (type, i, j) until |l^2 - r^2| * distance_squared_tolerance <= 1.
void cshake(const int iatom[], int ncon, int* nnit, int maxnit, ArrayRef<const real> dist2,
            ArrayRef<RVec> xp, const t_pbc* pbc, ArrayRef<const RVec> rij,
            ArrayRef<const real> half_of_reduced_mass, real omega, ArrayRef<const real> invmass,
            ArrayRef<const real> distance_squared_tolerance,
            ArrayRef<real> scaled_lagrange_multiplier, int* nerror);
}  // namespace gmx

namespace ikd::bench {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;

namespace {

class GromacsShake final : public Contender {
 public:
  GromacsShake(const ConstraintModel& model, const Eigen::Matrix3Xd& reference, double tolerance,
               int max_iterations)
      : reference_(reference), max_iterations_(max_iterations) {
    const Eigen::VectorXd& w = model.inverse_masses();
    for (int k = 0; k < w.size(); ++k) inverse_masses_.push_back(w[k]);
    for (const DistanceConstraint& c : model.constraints()) {
      iatom_.insert(iatom_.end(), {0, c.i, c.j});
      const double l2 = c.length * c.length;
      length_squared_.push_back(l2);
      // As GROMACS's vec_shakef: mu / 2 and 0.5 / (l^2 tol), so that a constraint counts as
      // met when |l^2 - r^2| / (2 l^2) <= tol, i.e. |r - l| / l <= tol to first order.
      half_reduced_mass_.push_back(0.5 / (w[c.i] + w[c.j]));
      tolerance_factor_.push_back(0.5 / (l2 * tolerance));
    }
    reference_links_.resize(length_squared_.size());
    multipliers_.resize(length_squared_.size());
    positions_.resize(reference.cols());
  }

  void Load(const Eigen::Matrix3Xd& positions, const Eigen::Matrix3Xd&) override {
    for (Eigen::Index k = 0; k < positions.cols(); ++k) {
      positions_[k] = {positions(0, k), positions(1, k), positions(2, k)};
    }
  }

  // Timed: what a GROMACS SHAKE call does per step (reference link vectors, zeroed
  // multipliers, the sweeps); the per-model constants above are set up once.
  ProjectionCounts Project() override {
    const int n = static_cast<int>(length_squared_.size());
    for (int k = 0; k < n; ++k) {
      const int i = iatom_[3 * k + 1], j = iatom_[3 * k + 2];
      reference_links_[k] = {reference_(0, i) - reference_(0, j),
                             reference_(1, i) - reference_(1, j),
                             reference_(2, i) - reference_(2, j)};
      multipliers_[k] = 0.0;
    }
    int sweeps = 0, error = 0;
    gmx::cshake(iatom_.data(), n, &sweeps, max_iterations_, length_squared_, positions_, nullptr,
                reference_links_, half_reduced_mass_, 1.0, inverse_masses_, tolerance_factor_,
                multipliers_, &error);
    return {sweeps, error == 0 && sweeps < max_iterations_};
  }

  void Store(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd&) const override {
    for (Eigen::Index k = 0; k < positions.cols(); ++k) {
      positions.col(k) << positions_[k][0], positions_[k][1], positions_[k][2];
    }
  }

 private:
  const Eigen::Matrix3Xd& reference_;
  int max_iterations_;
  std::vector<int> iatom_;
  std::vector<double> inverse_masses_, length_squared_, half_reduced_mass_, tolerance_factor_;
  std::vector<double> multipliers_;
  std::vector<gmx::RVec> reference_links_, positions_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Contender>> MakeGromacsShake(const ConstraintModel& model,
                                                            const Eigen::Matrix3Xd& reference,
                                                            double tolerance, int max_iterations) {
  return std::make_unique<GromacsShake>(model, reference, tolerance, max_iterations);
}

std::string GromacsVersion() {
  char text[32];
  std::snprintf(text, sizeof text, "%d.%d (double)", GMX_VERSION / 10000, GMX_VERSION % 100);
  return text;
}

}  // namespace ikd::bench
