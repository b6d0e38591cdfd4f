// ikd's own solvers as benchmark contenders.
#include "contender.h"
#include "ikd/constraints/solver.h"

namespace ikd::bench {

using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::MakeConstraintSolver;
using constraints::Method;
using constraints::ProjectionOptions;

namespace {

class IkdContender final : public Contender {
 public:
  IkdContender(std::unique_ptr<ConstraintSolver> solver, bool with_velocities,
               const Eigen::Matrix3Xd& reference)
      : solver_(std::move(solver)), with_velocities_(with_velocities), reference_(reference) {}

  void Load(const Eigen::Matrix3Xd& positions, const Eigen::Matrix3Xd& velocities) override {
    positions_ = positions;
    velocities_ = velocities;
  }

  ProjectionCounts Project() override {
    auto positions = solver_->ProjectPositions(reference_, positions_);
    if (!positions.ok()) return {-1, false};
    if (!positions->converged()) return {positions->iterations, false};
    ProjectionCounts counts{positions->iterations, true};
    if (!with_velocities_) return counts;
    auto velocities = solver_->ProjectVelocities(positions_, velocities_);
    if (!velocities.ok() || !velocities->converged()) return {counts.iterations, false};
    counts.iterations += velocities->iterations;
    return counts;
  }

  void Store(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const override {
    positions = positions_;
    velocities = velocities_;
  }

 private:
  std::unique_ptr<ConstraintSolver> solver_;
  bool with_velocities_;
  const Eigen::Matrix3Xd& reference_;
  Eigen::Matrix3Xd positions_, velocities_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Contender>> MakeIkdContender(Method method, bool with_velocities,
                                                            const ConstraintModel& model,
                                                            const Eigen::Matrix3Xd& reference,
                                                            double tolerance, int max_iterations) {
  ProjectionOptions options;
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  auto solver = MakeConstraintSolver(method, model, options);
  if (!solver.ok()) return solver.status();
  return std::make_unique<IkdContender>(*std::move(solver), with_velocities, reference);
}

}  // namespace ikd::bench
