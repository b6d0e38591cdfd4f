#include "simulation_conversions.h"

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "errors.h"
#include "ikd/systems/chains.h"

namespace ikd::server {

using constraints::BendingPotential;
using constraints::ConstraintModel;
using constraints::DistanceConstraint;
using constraints::ExternalForces;
using constraints::ForceField;
using constraints::Method;
using constraints::Potential;
using constraints::ProjectionOptions;
using constraints::ProjectionOutcome;
using constraints::UniformGravity;

namespace {

using PathOf = std::function<std::string(const std::string&)>;

// Solver field "x" -> request path "<prefix>x"; `whole` when the solver names no field.
PathOf Prefixed(const std::string& prefix, const std::string& whole) {
  return [prefix, whole](const std::string& field) {
    return field.empty() ? whole : prefix + field;
  };
}

std::string Indexed(const std::string& path, int64_t k) { return absl::StrCat(path, "[", k, "]"); }

bool Finite(const v1::Vector3& v) {
  return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z());
}

absl::Status CheckFiniteVector(const v1::Vector3& v, const std::string& path) {
  if (Finite(v)) return absl::OkStatus();
  return FieldViolation(path, "every component must be finite");
}

absl::StatusOr<Method> MethodFromProto(v1::ConstraintMethod method) {
  switch (method) {
    case v1::CONSTRAINT_METHOD_SHAKE: return Method::kShake;
    case v1::CONSTRAINT_METHOD_RATTLE: return Method::kRattle;
    case v1::CONSTRAINT_METHOD_MILC_SHAKE: return Method::kMilcShake;
    case v1::CONSTRAINT_METHOD_MATRIX: return Method::kMatrix;
    case v1::CONSTRAINT_METHOD_AUTO: return Method::kAuto;
    default: break;
  }
  return FieldViolation("projection.method",
                        "must be one of SHAKE, RATTLE, MILC_SHAKE, MATRIX, AUTO");
}

// Zero values mean the solver's defaults.
absl::StatusOr<ProjectionOptions> ProjectionFromProto(const v1::ProjectionSettings& settings,
                                                      const SimulationLimits& limits) {
  ProjectionOptions options;
  if (settings.tolerance() != 0.0) options.tolerance = settings.tolerance();
  if (settings.max_iterations() != 0) options.max_iterations = settings.max_iterations();
  // The solver allows 1e7; one step's work is iterations x constraints, so the server caps it.
  if (options.max_iterations > limits.max_projection_iterations) {
    return FieldViolation("projection.max_iterations",
                          absl::StrCat("at most ", limits.max_projection_iterations,
                                       " (--max_projection_iterations), got ",
                                       options.max_iterations));
  }
  if (absl::Status s = options.Validate(); !s.ok()) {
    return SolverFieldViolation(s, Prefixed("projection.", "projection"));
  }
  return options;
}

absl::StatusOr<StreamPlan> PlanFromProto(double dt, int64_t steps, int64_t stride,
                                         const SimulationLimits& limits) {
  if (!std::isfinite(dt) || dt <= 0.0) {
    return FieldViolation("dt", absl::StrCat("must be finite and > 0, got ", dt));
  }
  if (steps < 1 || steps > limits.max_steps) {
    return FieldViolation("steps",
                          absl::StrCat("must be in [1, ", limits.max_steps, "], got ", steps));
  }
  if (stride < 0) return FieldViolation("stride", absl::StrCat("must be >= 0, got ", stride));
  StreamPlan plan{.dt = dt, .steps = steps, .stride = stride == 0 ? 1 : stride};
  if (const int64_t frames = FrameCount(plan); frames > limits.max_frames) {
    return FieldViolation(
        "stride", absl::StrCat("gives ", frames, " frames (steps / stride, rounded up); at most ",
                               limits.max_frames, " per stream: raise stride"));
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Chain systems

struct SitesAndConstraints {
  Eigen::Matrix3Xd positions;
  Eigen::Matrix3Xd velocities;
  Eigen::VectorXd inverse_masses;
  std::vector<DistanceConstraint> constraints;
};

// `inertia_required`: false for requests that ignore masses (the projector).
absl::Status SitesFromProto(const v1::ChainSystem& system, const std::string& path,
                            int max_sites, bool inertia_required, SitesAndConstraints& out) {
  const int n = system.sites_size();
  if (n < 1 || n > max_sites) {
    return FieldViolation(path + ".sites",
                          absl::StrCat("must hold 1 to ", max_sites, " sites, got ", n));
  }
  out.positions.resize(3, n);
  out.velocities.setZero(3, n);
  out.inverse_masses.resize(n);
  for (int k = 0; k < n; ++k) {
    const v1::Site& site = system.sites(k);
    const std::string site_path = Indexed(path + ".sites", k);
    if (!site.has_position()) return FieldViolation(site_path + ".position", "is required");
    if (auto s = CheckFiniteVector(site.position(), site_path + ".position"); !s.ok()) return s;
    if (auto s = CheckFiniteVector(site.velocity(), site_path + ".velocity"); !s.ok()) return s;
    out.positions.col(k) = FromProto(site.position());
    out.velocities.col(k) = FromProto(site.velocity());
    switch (site.inertia_case()) {
      case v1::Site::kMass:
        if (!std::isfinite(site.mass()) || site.mass() <= 0.0) {
          return FieldViolation(site_path + ".mass",
                                absl::StrCat("must be finite and > 0, got ", site.mass()));
        }
        out.inverse_masses[k] = 1.0 / site.mass();
        break;
      case v1::Site::kInverseMass:
        if (!std::isfinite(site.inverse_mass()) || site.inverse_mass() < 0.0) {
          return FieldViolation(
              site_path + ".inverse_mass",
              absl::StrCat("must be finite and >= 0 (0 = fixed), got ", site.inverse_mass()));
        }
        out.inverse_masses[k] = site.inverse_mass();
        break;
      default:
        if (inertia_required) {
          return FieldViolation(site_path + ".mass",
                                "set mass (> 0) or inverse_mass (>= 0, 0 = fixed)");
        }
        out.inverse_masses[k] = 1.0;
    }
  }
  return absl::OkStatus();
}

absl::Status ConstraintsFromProto(const v1::ChainSystem& system, const std::string& path,
                                  int max_constraints, int max_per_site,
                                  SitesAndConstraints& out) {
  const int n = static_cast<int>(out.positions.cols());
  if (system.constraints_size() > max_constraints) {
    return FieldViolation(path + ".constraints",
                          absl::StrCat("at most ", max_constraints, " constraints, got ",
                                       system.constraints_size()));
  }
  std::vector<int> per_site(n, 0);
  out.constraints.clear();
  for (int k = 0; k < system.constraints_size(); ++k) {
    const v1::DistanceConstraint& c = system.constraints(k);
    const std::string c_path = Indexed(path + ".constraints", k);
    if (c.i() < 0 || c.i() >= n) {
      return FieldViolation(c_path + ".i",
                            absl::StrCat("site index must be in [0, ", n, "), got ", c.i()));
    }
    if (c.j() < 0 || c.j() >= n) {
      return FieldViolation(c_path + ".j",
                            absl::StrCat("site index must be in [0, ", n, "), got ", c.j()));
    }
    if (c.i() == c.j()) {
      return FieldViolation(c_path + ".j", absl::StrCat("must differ from i (", c.i(), ")"));
    }
    if (!std::isfinite(c.length()) || c.length() <= 0.0) {
      return FieldViolation(c_path + ".length",
                            absl::StrCat("must be finite and > 0, got ", c.length()));
    }
    for (int site : {c.i(), c.j()}) {
      if (++per_site[site] > max_per_site) {
        return FieldViolation(c_path, absl::StrCat("site ", site, " would have more than ",
                                                   max_per_site,
                                                   " constraints (max_constraints_per_site)"));
      }
    }
    out.constraints.push_back({.i = c.i(), .j = c.j(), .length = c.length()});
  }
  return absl::OkStatus();
}

absl::StatusOr<Eigen::Matrix3Xd> GeneratedPositions(const v1::GeneratedChain& g) {
  const int n = g.num_sites();
  switch (g.shape()) {
    case v1::GeneratedChain::SHAPE_STRAIGHT: return systems::StraightChain(n, g.link());
    case v1::GeneratedChain::SHAPE_RING: return systems::RegularRing(n, g.link());
    case v1::GeneratedChain::SHAPE_COIL: {
      std::mt19937_64 rng(g.seed());
      return systems::RandomCoil(n, g.link(), g.planar(), rng);
    }
    case v1::GeneratedChain::SHAPE_HELIX: {
      auto helix = systems::HelixChain(n, g.radius(), g.pitch(), g.link());
      if (!helix.ok()) {
        // The helix message names radius, pitch and link together.
        return FieldViolation("generated.radius", std::string(helix.status().message()));
      }
      return *std::move(helix);
    }
    default: break;
  }
  return FieldViolation("generated.shape", "must be one of STRAIGHT, HELIX, RING, COIL");
}

absl::Status GeneratedFromProto(const v1::GeneratedChain& g, const SimulationLimits& limits,
                                SitesAndConstraints& out) {
  const bool ring = g.shape() == v1::GeneratedChain::SHAPE_RING;
  const int min_sites = ring ? 3 : 2;
  if (g.num_sites() < min_sites || g.num_sites() > limits.max_sites) {
    return FieldViolation("generated.num_sites",
                          absl::StrCat("must be in [", min_sites, ", ", limits.max_sites,
                                       "], got ", g.num_sites()));
  }
  if (!std::isfinite(g.link()) || g.link() <= 0.0) {
    return FieldViolation("generated.link",
                          absl::StrCat("must be finite and > 0, got ", g.link()));
  }
  const double mass = g.mass() == 0.0 ? 1.0 : g.mass();
  if (!std::isfinite(mass) || mass <= 0.0) {
    return FieldViolation("generated.mass", absl::StrCat("must be finite and > 0, got ", mass));
  }
  absl::StatusOr<Eigen::Matrix3Xd> positions = GeneratedPositions(g);
  if (!positions.ok()) return positions.status();
  const int n = g.num_sites();
  out.positions = *std::move(positions);
  out.velocities.setZero(3, n);
  out.inverse_masses = Eigen::VectorXd::Constant(n, 1.0 / mass);
  for (int k = 0; k < g.fixed_sites_size(); ++k) {
    const int site = g.fixed_sites(k);
    if (site < 0 || site >= n) {
      return FieldViolation(Indexed("generated.fixed_sites", k),
                            absl::StrCat("must be in [0, ", n, "), got ", site));
    }
    out.inverse_masses[site] = 0.0;
  }
  out.constraints = systems::ChainConstraints(n, g.link(), ring);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Potential>> BendingFromProto(const v1::Bending& bending,
                                                                  int n) {
  std::vector<std::array<int, 3>> triples;
  if (bending.triples_size() == 0) {
    if (n < 3) return FieldViolation("potentials.bending", "needs at least 3 sites");
    for (int k = 1; k + 1 < n; ++k) triples.push_back({k - 1, k, k + 1});
  }
  for (int t = 0; t < bending.triples_size(); ++t) {
    const v1::SiteTriple& triple = bending.triples(t);
    for (int site : {triple.a(), triple.b(), triple.c()}) {
      if (site < 0 || site >= n) {
        return FieldViolation(Indexed("potentials.bending.triples", t),
                              absl::StrCat("site indices must be in [0, ", n, "), got ", site));
      }
    }
    triples.push_back({triple.a(), triple.b(), triple.c()});
  }
  auto potential =
      BendingPotential::Create(std::move(triples), bending.stiffness(), bending.segment_length());
  if (!potential.ok()) {
    return SolverFieldViolation(potential.status(),
                                Prefixed("potentials.bending.", "potentials.bending"));
  }
  return std::make_shared<const BendingPotential>(*std::move(potential));
}

absl::StatusOr<std::unique_ptr<ForceField>> ForceFieldFromProto(const v1::Potentials& potentials,
                                                                const Eigen::VectorXd& w) {
  const int n = static_cast<int>(w.size());
  auto field = std::make_unique<ForceField>();
  if (potentials.has_gravity()) {
    if (auto s = CheckFiniteVector(potentials.gravity(), "potentials.gravity"); !s.ok()) return s;
    field->Add(std::make_shared<const UniformGravity>(FromProto(potentials.gravity()), w));
  }
  if (potentials.has_bending()) {
    auto bending = BendingFromProto(potentials.bending(), n);
    if (!bending.ok()) return bending.status();
    field->Add(*std::move(bending));
  }
  if (potentials.external_forces_size() > 0) {
    Eigen::Matrix3Xd forces = Eigen::Matrix3Xd::Zero(3, n);
    for (int k = 0; k < potentials.external_forces_size(); ++k) {
      const v1::SiteForce& f = potentials.external_forces(k);
      const std::string path = Indexed("potentials.external_forces", k);
      if (f.site() < 0 || f.site() >= n) {
        return FieldViolation(path + ".site",
                              absl::StrCat("must be in [0, ", n, "), got ", f.site()));
      }
      if (auto s = CheckFiniteVector(f.force(), path + ".force"); !s.ok()) return s;
      forces.col(f.site()) += FromProto(f.force());
    }
    field->Add(std::make_shared<const ExternalForces>(std::move(forces)));
  }
  return field;
}

absl::StatusOr<BrownianPlan> BrownianFromProto(const v1::Brownian& brownian, double dt) {
  const double d = brownian.diffusion();
  if (!std::isfinite(d) || d <= 0.0) {
    return FieldViolation("brownian.diffusion", absl::StrCat("must be finite and > 0, got ", d));
  }
  // Einstein: <dx^2> = 2 D dt per coordinate.
  return BrownianPlan{
      .step_sigma = std::sqrt(2.0 * d * dt), .planar = brownian.planar(), .seed = brownian.seed()};
}

// ---------------------------------------------------------------------------------------------
// Curves and surfaces

absl::StatusOr<std::unique_ptr<systems::ConstraintShape>> ShapeFromProto(
    const v1::FollowShapeRequest& request) {
  if (request.has_curve()) {
    const v1::Curve& c = request.curve();
    systems::CurveSpec spec{.a = c.a(), .b = c.b(), .n = c.n(), .r = c.r(), .y0 = c.y0()};
    switch (c.type()) {
      case v1::Curve::TYPE_PARABOLA: spec.type = systems::CurveType::kParabola; break;
      case v1::Curve::TYPE_ELLIPSE: spec.type = systems::CurveType::kEllipse; break;
      case v1::Curve::TYPE_SUPERELLIPSE: spec.type = systems::CurveType::kSuperellipse; break;
      case v1::Curve::TYPE_DISCORECTANGLE: spec.type = systems::CurveType::kDiscorectangle; break;
      case v1::Curve::TYPE_BEAN: spec.type = systems::CurveType::kBean; break;
      default:
        return FieldViolation("curve.type",
                              "must be PARABOLA, ELLIPSE, SUPERELLIPSE, DISCORECTANGLE or BEAN");
    }
    auto curve = systems::MakeCurve(spec);
    if (!curve.ok()) return SolverFieldViolation(curve.status(), Prefixed("curve.", "curve"));
    return std::unique_ptr<systems::ConstraintShape>(*std::move(curve));
  }
  if (request.has_surface()) {
    const v1::Surface& s = request.surface();
    systems::SurfaceSpec spec{.r = s.r(), .a = s.a(), .c = s.c()};
    switch (s.type()) {
      case v1::Surface::TYPE_SPHERE: spec.type = systems::SurfaceType::kSphere; break;
      case v1::Surface::TYPE_PARABOLOID: spec.type = systems::SurfaceType::kParaboloid; break;
      case v1::Surface::TYPE_HYPERBOLOID: spec.type = systems::SurfaceType::kHyperboloid; break;
      case v1::Surface::TYPE_PSEUDO_HYPERBOLOID:
        spec.type = systems::SurfaceType::kPseudoHyperboloid;
        break;
      default:
        return FieldViolation("surface.type",
                              "must be SPHERE, PARABOLOID, HYPERBOLOID or PSEUDO_HYPERBOLOID");
    }
    auto surface = systems::MakeSurface(spec);
    if (!surface.ok()) {
      return SolverFieldViolation(surface.status(), Prefixed("surface.", "surface"));
    }
    return std::unique_ptr<systems::ConstraintShape>(*std::move(surface));
  }
  return FieldViolation("shape", "set curve or surface");
}

}  // namespace

std::string FollowFieldPath(const std::string& field) {
  if (field.empty()) return "position";
  if (field.rfind("r0", 0) == 0) return "position" + field.substr(2);
  if (field.rfind("v0", 0) == 0) return "velocity" + field.substr(2);
  return field;
}

int64_t FrameCount(const StreamPlan& plan) { return (plan.steps + plan.stride - 1) / plan.stride; }

absl::StatusOr<ChainSetup> ChainSetupFromProto(const v1::StepChainRequest& request,
                                               const SimulationLimits& limits) {
  SitesAndConstraints system;
  std::string path = "chain";
  switch (request.system_case()) {
    case v1::StepChainRequest::kChain:
      if (auto s = SitesFromProto(request.chain(), path, limits.max_sites,
                                  /*inertia_required=*/true, system);
          !s.ok()) {
        return s;
      }
      if (auto s = ConstraintsFromProto(request.chain(), path, limits.max_constraints,
                                        limits.max_constraints_per_site, system);
          !s.ok()) {
        return s;
      }
      break;
    case v1::StepChainRequest::kGenerated:
      path = "generated";
      if (auto s = GeneratedFromProto(request.generated(), limits, system); !s.ok()) return s;
      break;
    default: return FieldViolation("system", "set chain or generated");
  }
  ChainSetup setup;
  auto method = MethodFromProto(request.projection().method());
  if (!method.ok()) return method.status();
  setup.method = *method;
  auto projection = ProjectionFromProto(request.projection(), limits);
  if (!projection.ok()) return projection.status();
  setup.projection = *projection;
  auto plan = PlanFromProto(request.dt(), request.steps(), request.stride(), limits);
  if (!plan.ok()) return plan.status();
  setup.plan = *plan;

  auto model = ConstraintModel::Create(system.inverse_masses, system.constraints);
  if (!model.ok()) return SolverFieldViolation(model.status(), Prefixed(path + ".", path));
  setup.model = std::make_unique<ConstraintModel>(*std::move(model));
  // Two fixed sites cannot be moved to meet their constraint: reject now, not at step 1.
  if (auto s = setup.model->CheckFrozen(system.positions, setup.projection.tolerance); !s.ok()) {
    return SolverFieldViolation(s, Prefixed(path + ".", path + ".constraints"));
  }
  // The method must apply to the topology (MakeConstraintSolver's condition, checked here so
  // that the call fails before it starts).
  if (setup.method == Method::kMilcShake && !setup.model->topology().AllChainsOrRings()) {
    return FieldViolation("projection.method",
                          "MILC_SHAKE needs every constraint component to be an open chain or a "
                          "ring; use MATRIX or AUTO");
  }

  if (request.has_brownian()) {
    if (request.has_potentials()) {
      return FieldViolation("potentials", "must be absent with brownian (the walk has no forces)");
    }
    auto brownian = BrownianFromProto(request.brownian(), setup.plan.dt);
    if (!brownian.ok()) return brownian.status();
    setup.brownian = *brownian;
  } else {
    auto field = ForceFieldFromProto(request.potentials(), setup.model->inverse_masses());
    if (!field.ok()) return field.status();
    setup.field = *std::move(field);
  }
  setup.state.positions = std::move(system.positions);
  setup.state.velocities = std::move(system.velocities);
  return setup;
}

absl::StatusOr<PendulumSetup> PendulumSetupFromProto(const v1::StepPendulumRequest& request,
                                                     const SimulationLimits& limits) {
  PendulumSetup setup;
  systems::PendulumSpec& spec = setup.spec;
  spec.planar = request.planar();
  spec.masses.assign(request.masses().begin(), request.masses().end());
  spec.lengths.assign(request.lengths().begin(), request.lengths().end());
  spec.angles.assign(request.angles().begin(), request.angles().end());
  spec.angular_velocities.assign(request.angular_velocities().begin(),
                                 request.angular_velocities().end());
  if (request.has_gravity()) spec.gravity = request.gravity();
  // PendulumSpec's field names are the request's.
  if (auto s = spec.Validate(); !s.ok()) {
    return SolverFieldViolation(s, [](const std::string& f) { return f.empty() ? "masses" : f; });
  }
  auto method = MethodFromProto(request.projection().method());
  if (!method.ok()) return method.status();
  setup.method = *method;
  auto projection = ProjectionFromProto(request.projection(), limits);
  if (!projection.ok()) return projection.status();
  setup.projection = *projection;
  auto plan = PlanFromProto(request.dt(), request.steps(), request.stride(), limits);
  if (!plan.ok()) return plan.status();
  setup.plan = *plan;
  return setup;
}

absl::StatusOr<FollowSetup> FollowSetupFromProto(const v1::FollowShapeRequest& request,
                                                 const SimulationLimits& limits) {
  FollowSetup setup;
  auto shape = ShapeFromProto(request);
  if (!shape.ok()) return shape.status();
  setup.shape = *std::move(shape);
  systems::FollowOptions& options = setup.options;
  switch (request.mode()) {
    case v1::FOLLOW_MODE_FREE_FLIGHT: options.mode = systems::FollowMode::kFreeFlight; break;
    case v1::FOLLOW_MODE_CONSTANT_SPEED: options.mode = systems::FollowMode::kConstantSpeed; break;
    default: return FieldViolation("mode", "must be FREE_FLIGHT or CONSTANT_SPEED");
  }
  if (request.steps() < 1 || request.steps() > limits.max_follow_steps) {
    return FieldViolation("steps", absl::StrCat("must be in [1, ", limits.max_follow_steps,
                                                "], got ", request.steps()));
  }
  if (request.stride() < 0) {
    return FieldViolation("stride", absl::StrCat("must be >= 0, got ", request.stride()));
  }
  setup.stride = request.stride() == 0 ? 1 : request.stride();
  // Points 0 .. steps: every stride-th and the last.
  const int64_t frames = request.steps() / setup.stride + 1 + (request.steps() % setup.stride != 0);
  if (frames > limits.max_follow_frames) {
    return FieldViolation("stride", absl::StrCat("gives ", frames, " frames; at most ",
                                                 limits.max_follow_frames, ": raise stride"));
  }
  options.dt = request.dt();
  options.steps = request.steps();
  options.gravity = FromProto(request.gravity());
  if (request.tolerance() != 0.0) options.tolerance = request.tolerance();
  if (request.max_iterations() != 0) options.max_iterations = request.max_iterations();
  if (request.has_start_tolerance()) options.start_tolerance = request.start_tolerance();
  if (auto s = options.Validate(); !s.ok()) return SolverFieldViolation(s, FollowFieldPath);
  if (auto s = CheckFiniteVector(request.position(), "position"); !s.ok()) return s;
  if (auto s = CheckFiniteVector(request.velocity(), "velocity"); !s.ok()) return s;
  setup.r0 = FromProto(request.position());
  setup.v0 = FromProto(request.velocity());
  return setup;
}

absl::StatusOr<ResponseSetup> ResponseSetupFromProto(const v1::ResponseMatrixRequest& request,
                                                     const SimulationLimits& limits) {
  ResponseSetup setup;
  setup.kind = request.kind();
  if (setup.kind != v1::RESPONSE_KIND_PROJECTOR && setup.kind != v1::RESPONSE_KIND_MOBILITY) {
    return FieldViolation("kind", "must be PROJECTOR or MOBILITY");
  }
  SitesAndConstraints system;
  const bool mobility = setup.kind == v1::RESPONSE_KIND_MOBILITY;
  if (auto s = SitesFromProto(request.system(), "system", limits.max_response_sites, mobility,
                              system);
      !s.ok()) {
    return s;
  }
  if (auto s = ConstraintsFromProto(request.system(), "system", 3 * limits.max_response_sites,
                                    limits.max_constraints_per_site, system);
      !s.ok()) {
    return s;
  }
  setup.options.dimension = request.dimension() == 0 ? 3 : request.dimension();
  if (request.rank_tolerance() != 0.0) setup.options.rank_tolerance = request.rank_tolerance();
  if (auto s = setup.options.Validate(); !s.ok()) {
    return SolverFieldViolation(s, [](const std::string& f) { return f.empty() ? "dimension" : f; });
  }
  setup.positions = std::move(system.positions);
  setup.inverse_masses = std::move(system.inverse_masses);
  setup.constraints = std::move(system.constraints);
  return setup;
}

v1::FollowShapeResponse FollowResponse(const systems::ConstrainedMotion& motion,
                                       const systems::ConstraintShape& shape, int stride) {
  v1::FollowShapeResponse response;
  const int last = motion.steps_completed();
  for (int n = 0; n <= last; ++n) {
    if (n % stride != 0 && n != last) continue;
    v1::ShapeFrame* frame = response.add_frames();
    const Eigen::Vector3d& r = motion.positions[n];
    frame->set_step(n);
    frame->set_time(n * motion.dt);
    *frame->mutable_position() = ToProto(r);
    // Derivatives exist at interior points only; entry n - 1 belongs to point n.
    if (n >= 1 && n - 1 < static_cast<int>(motion.velocities.size())) {
      *frame->mutable_velocity() = ToProto(motion.velocities[n - 1]);
      *frame->mutable_acceleration() = ToProto(motion.accelerations[n - 1]);
      *frame->mutable_constraint_acceleration() = ToProto(motion.constraint_accelerations[n - 1]);
    }
    frame->set_sigma(shape.Sigma(r));
    frame->set_distance(shape.DistanceEstimate(r));
  }
  response.set_steps_completed(last);
  response.set_outcome(OutcomeToProto(motion.projection.outcome));
  response.set_message(motion.projection.message);
  response.set_max_iterations_used(motion.projection.iterations);
  response.set_max_relative_distance(motion.projection.max_relative_violation);
  return response;
}

v1::ProjectionOutcome OutcomeToProto(ProjectionOutcome outcome) {
  switch (outcome) {
    case ProjectionOutcome::kConverged: return v1::PROJECTION_OUTCOME_CONVERGED;
    case ProjectionOutcome::kNotConverged: return v1::PROJECTION_OUTCOME_NOT_CONVERGED;
    case ProjectionOutcome::kSingular: return v1::PROJECTION_OUTCOME_SINGULAR;
    case ProjectionOutcome::kNonFinite: return v1::PROJECTION_OUTCOME_NON_FINITE;
  }
  return v1::PROJECTION_OUTCOME_UNSPECIFIED;
}

v1::Matrix MatrixToProto(const Eigen::MatrixXd& matrix) {
  v1::Matrix out;
  out.set_rows(static_cast<int>(matrix.rows()));
  out.set_cols(static_cast<int>(matrix.cols()));
  out.mutable_values()->Reserve(static_cast<int>(matrix.size()));
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) out.add_values(matrix(r, c));
  }
  return out;
}

void AppendColumns(const Eigen::Matrix3Xd& columns,
                   google::protobuf::RepeatedPtrField<v1::Vector3>* out) {
  out->Reserve(out->size() + static_cast<int>(columns.cols()));
  for (Eigen::Index k = 0; k < columns.cols(); ++k) *out->Add() = ToProto(Eigen::Vector3d(columns.col(k)));
}

}  // namespace ikd::server
