// OpenMM's CCMA as a benchmark contender (Reference platform, double precision).
#include <OpenMM.h>

#include <Eigen/Geometry>
#include <cmath>
#include <exception>
#include <vector>

#include "contender.h"

namespace ikd::bench {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;

namespace {

class OpenMMCcma final : public Contender {
 public:
  OpenMMCcma(std::unique_ptr<OpenMM::System> system, double tolerance)
      : system_(std::move(system)), integrator_(1e-3), tolerance_(tolerance) {
    integrator_.setConstraintTolerance(tolerance);
    context_ = std::make_unique<OpenMM::Context>(*system_, integrator_,
                                                 OpenMM::Platform::getPlatformByName("Reference"));
    positions_.resize(system_->getNumParticles());
  }

  void Load(const Eigen::Matrix3Xd& positions, const Eigen::Matrix3Xd&) override {
    for (Eigen::Index k = 0; k < positions.cols(); ++k) {
      positions_[k] = OpenMM::Vec3(positions(0, k), positions(1, k), positions(2, k));
    }
    context_->setPositions(positions_);
  }

  // Timed. The public API reports no iteration count; whether CCMA got below the tolerance
  // is measured by the harness on the stored positions.
  ProjectionCounts Project() override {
    context_->applyConstraints(tolerance_);
    return {};
  }

  void Store(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd&) const override {
    const std::vector<OpenMM::Vec3> out =
        context_->getState(OpenMM::State::Positions).getPositions();
    for (Eigen::Index k = 0; k < positions.cols(); ++k) {
      positions.col(k) << out[k][0], out[k][1], out[k][2];
    }
  }

 private:
  std::unique_ptr<OpenMM::System> system_;
  OpenMM::VerletIntegrator integrator_;
  double tolerance_;
  std::unique_ptr<OpenMM::Context> context_;
  std::vector<OpenMM::Vec3> positions_;
};

// The angle a-b-c at every site b shared by two constraints (b-a) and (b-c), at `reference`.
std::unique_ptr<OpenMM::HarmonicAngleForce> ReferenceAngles(const ConstraintModel& model,
                                                            const Eigen::Matrix3Xd& reference) {
  std::vector<std::vector<int>> neighbours(model.num_sites());
  for (const DistanceConstraint& c : model.constraints()) {
    neighbours[c.i].push_back(c.j);
    neighbours[c.j].push_back(c.i);
  }
  auto angles = std::make_unique<OpenMM::HarmonicAngleForce>();
  for (int b = 0; b < model.num_sites(); ++b) {
    for (size_t x = 0; x < neighbours[b].size(); ++x) {
      for (size_t y = x + 1; y < neighbours[b].size(); ++y) {
        const int a = neighbours[b][x], c = neighbours[b][y];
        const Eigen::Vector3d u = reference.col(a) - reference.col(b);
        const Eigen::Vector3d v = reference.col(c) - reference.col(b);
        const double angle = std::atan2(u.cross(v).norm(), u.dot(v));
        angles->addAngle(a, b, c, angle, 0.0);  // zero stiffness: geometry only
      }
    }
  }
  return angles;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Contender>> MakeOpenMMCcma(const ConstraintModel& model,
                                                          const Eigen::Matrix3Xd& reference,
                                                          double tolerance, bool with_angles) {
  try {
    auto system = std::make_unique<OpenMM::System>();
    const Eigen::VectorXd& w = model.inverse_masses();
    for (int k = 0; k < model.num_sites(); ++k) system->addParticle(w[k] > 0 ? 1.0 / w[k] : 0.0);
    for (const DistanceConstraint& c : model.constraints()) {
      system->addConstraint(c.i, c.j, c.length);
    }
    if (with_angles) system->addForce(ReferenceAngles(model, reference).release());
    return std::make_unique<OpenMMCcma>(std::move(system), tolerance);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("OpenMM: ") + e.what());
  }
}

std::string OpenMMVersion() { return OpenMM::Platform::getOpenMMVersion() + " (Reference)"; }

}  // namespace ikd::bench
