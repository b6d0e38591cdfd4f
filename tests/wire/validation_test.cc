// ModelService request validation (validation.h): resource ids and names, every bound of
// ModelLimits that the wire layer enforces (limbs, obstacles, operations), and the solver's own
// model checks, each error a BadRequest naming the request's field path and the bound.
#include "validation.h"

#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/field_violation.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::ikd::testing::IsFieldViolation;
using Operation = v1::ObstacleOperation;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A planar arm of limbs 1 m and 0.5 m, its one interior joint limited to [-1, 1] rad.
v1::ArmSpec TwoLimbArm() {
  v1::ArmSpec spec;
  spec.set_planar(true);
  spec.add_limbs()->set_length(1.0);
  v1::Limb* second = spec.add_limbs();
  second->set_length(0.5);
  second->set_radius(0.05);
  v1::JointLimit* limit = spec.add_joint_limits();
  limit->set_limited(true);
  limit->set_min(-1.0);
  limit->set_max(1.0);
  return spec;
}

v1::Obstacle Sphere(const std::string& id, const v1::Vector3& center, double radius) {
  v1::Obstacle obstacle;
  obstacle.set_id(id);
  *obstacle.mutable_sphere()->mutable_center() = center;
  obstacle.mutable_sphere()->set_radius(radius);
  return obstacle;
}

Operation Add(const v1::Obstacle& obstacle) {
  Operation op;
  op.set_operation(Operation::OPERATION_ADD);
  *op.mutable_obstacle() = obstacle;
  return op;
}

Operation ById(Operation::Operation kind, const std::string& id) {
  Operation op;
  op.set_operation(kind);
  op.set_obstacle_id(id);
  return op;
}

v1::EditSceneRequest Edit(std::initializer_list<Operation> ops) {
  v1::EditSceneRequest request;
  request.set_name("scenes/s1");
  for (const Operation& op : ops) *request.add_operations() = op;
  return request;
}

// A scene holding sphere "a" (center (1, 0, 0), radius 0.5).
planning::Scene SceneWithA() {
  v1::SceneSpec spec;
  *spec.add_obstacles() = Sphere("a", Vec(1, 0, 0), 0.5);
  absl::StatusOr<planning::Scene> scene = SceneFromProto(spec, "scene.spec", ModelLimits());
  EXPECT_TRUE(scene.ok()) << scene.status();
  return scene.ok() ? *std::move(scene) : planning::Scene();
}

const planning::Sphere& SphereAt(const planning::Scene& scene, int k) {
  return std::get<planning::Sphere>(scene.obstacles()[k].shape);
}

// ---------------------------------------------------------------------------------------------
// Ids and names

TEST(ValidateIdTest, AcceptsLowerCaseDigitsAndDashesUpTo63) {
  for (const std::string& id :
       {std::string("a"), std::string("arm-1"), std::string("0-9"), std::string(63, 'z')}) {
    EXPECT_TRUE(ValidateId(id, "arm_id").ok()) << id;
  }
}

TEST(ValidateIdTest, RejectsEmptyLongAndForeignCharactersNamingTheField) {
  for (const std::string& id : {std::string(""), std::string(64, 'a'), std::string("Arm"),
                                std::string("arm_1"), std::string("arm/1"), std::string("a b")}) {
    EXPECT_TRUE(IsFieldViolation(ValidateId(id, "arm_id"), "arm_id", "[a-z0-9-]{1,63}")) << id;
  }
}

TEST(IdFromNameTest, ReturnsTheIdOfTheCollection) {
  const absl::StatusOr<std::string> id = IdFromName("arms/my-arm-2", "arms", "name");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "my-arm-2");
}

// Another collection, no slash, an empty or malformed id: all name the field.
TEST(IdFromNameTest, RejectsOtherCollectionsAndBadIdsNamingTheField) {
  for (const char* name : {"scenes/s1", "arms", "armsx/a", "/a"}) {
    EXPECT_TRUE(IsFieldViolation(IdFromName(name, "arms", "arm.name").status(), "arm.name",
                                 "must be \"arms/{id}\""))
        << name;
  }
  for (const char* name : {"arms/", "arms/Big", "arms/a/b"}) {
    EXPECT_TRUE(IsFieldViolation(IdFromName(name, "arms", "arm.name").status(), "arm.name",
                                 "[a-z0-9-]{1,63}"))
        << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Arms

// The wire fields reach the solver arm; a 0 rate field means "not given" (the default's, which
// itself means unlimited).
TEST(ArmFromProtoTest, ValidSpecArrivesInTheSolverArm) {
  v1::ArmSpec spec = TwoLimbArm();
  *spec.mutable_base_position() = Vec(0.1, 0.2, 0.3);
  spec.mutable_default_rate_limit()->set_max_velocity(2.0);
  spec.add_rate_limits();  // joint 0: all zero, the default's
  spec.add_rate_limits()->set_max_velocity(0.5);
  spec.mutable_rate_limits(1)->set_max_jerk(40.0);
  const absl::StatusOr<ik::Arm> arm = ArmFromProto(spec, "arm.spec", ModelLimits());
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_TRUE(arm->planar());
  ASSERT_EQ(arm->num_limbs(), 2);
  EXPECT_EQ(arm->spec().limbs[0].length, 1.0);
  EXPECT_EQ(arm->spec().limbs[1].length, 0.5);
  EXPECT_EQ(arm->spec().limbs[1].radius, 0.05);
  EXPECT_EQ(arm->base(), Eigen::Vector3d(0.1, 0.2, 0.3));
  ASSERT_EQ(arm->spec().joint_limits.size(), 1u);
  ASSERT_TRUE(arm->spec().joint_limits[0].has_value());
  EXPECT_EQ(arm->spec().joint_limits[0]->min, -1.0);
  EXPECT_EQ(arm->spec().joint_limits[0]->max, 1.0);
  EXPECT_EQ(arm->RateLimit(0).max_velocity, 2.0);
  EXPECT_EQ(arm->RateLimit(0).max_acceleration, kInf);
  EXPECT_EQ(arm->RateLimit(1).max_velocity, 0.5);
  EXPECT_EQ(arm->RateLimit(1).max_acceleration, kInf);
  EXPECT_EQ(arm->RateLimit(0).max_jerk, kInf);
  EXPECT_EQ(arm->RateLimit(1).max_jerk, 40.0);
}

// ModelLimits::max_limbs: at the bound accepted, one beyond refused naming "limbs".
TEST(ArmFromProtoTest, MaxLimbsIsTheBound) {
  ModelLimits limits;
  limits.max_limbs = 3;
  v1::ArmSpec spec;
  for (int k = 0; k < 3; ++k) spec.add_limbs()->set_length(1.0);
  EXPECT_TRUE(ArmFromProto(spec, "arm.spec", limits).ok());
  spec.add_limbs()->set_length(1.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(spec, "arm.spec", limits).status(), "arm.spec.limbs",
                               "at most 3 limbs, got 4"));
}

// An unlimited joint with a min or max is refused (it would be silently ignored).
TEST(ArmFromProtoTest, UnlimitedJointWithBoundsNamesLimited) {
  v1::ArmSpec spec = TwoLimbArm();
  spec.add_limbs()->set_length(1.0);
  v1::JointLimit* free = spec.add_joint_limits();
  free->set_max(0.5);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(spec, "config.arm.spec", ModelLimits()).status(),
                               "config.arm.spec.joint_limits[1].limited",
                               "must be true when min or max is set"));
}

// Rate limits: finite and >= 0 on the wire (0: not given), default and per joint.
TEST(ArmFromProtoTest, NegativeOrNonFiniteRateLimitsNameTheirField) {
  v1::ArmSpec velocity = TwoLimbArm();
  velocity.mutable_default_rate_limit()->set_max_velocity(-1.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(velocity, "arm.spec", ModelLimits()).status(),
                               "arm.spec.default_rate_limit.max_velocity",
                               "must be finite and >= 0"));

  v1::ArmSpec acceleration = TwoLimbArm();
  acceleration.add_rate_limits();
  acceleration.add_rate_limits()->set_max_acceleration(kNaN);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(acceleration, "arm.spec", ModelLimits()).status(),
                               "arm.spec.rate_limits[1].max_acceleration",
                               "must be finite and >= 0"));

  v1::ArmSpec jerk = TwoLimbArm();
  jerk.mutable_default_rate_limit()->set_max_jerk(-5.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(jerk, "arm.spec", ModelLimits()).status(),
                               "arm.spec.default_rate_limit.max_jerk", "must be finite and >= 0"));

  v1::ArmSpec infinite = TwoLimbArm();
  infinite.add_rate_limits()->set_max_velocity(kInf);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(infinite, "arm.spec", ModelLimits()).status(),
                               "arm.spec.rate_limits[0].max_velocity", "got inf"));
}

// The solver's checks (arm.h) come back at the request path below `path`.
TEST(ArmFromProtoTest, SolverErrorsAreNamedAtTheRequestPath) {
  v1::ArmSpec length = TwoLimbArm();
  length.mutable_limbs(1)->set_length(-1.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(length, "arm.spec", ModelLimits()).status(),
                               "arm.spec.limbs[1].length", "must be finite and in (0, "));

  v1::ArmSpec crossed = TwoLimbArm();
  crossed.mutable_joint_limits(0)->set_min(1.0);
  crossed.mutable_joint_limits(0)->set_max(0.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(crossed, "arm.spec", ModelLimits()).status(),
                               "arm.spec.joint_limits[0]", "min 1 must be <= max 0"));

  v1::ArmSpec spatial = TwoLimbArm();  // a spatial bend limit lies in [0, pi]
  spatial.set_planar(false);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(spatial, "arm.spec", ModelLimits()).status(),
                               "arm.spec.joint_limits[0].min", "in [0, pi]"));

  v1::ArmSpec empty;
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(empty, "arm.spec", ModelLimits()).status(),
                               "arm.spec.limbs", "need between 1 and"));

  v1::ArmSpec weights = TwoLimbArm();
  weights.add_site_weights(1.0);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(weights, "arm.spec", ModelLimits()).status(),
                               "arm.spec.site_weights", "need 0 or 3 entries, got 1"));

  v1::ArmSpec orientation = TwoLimbArm();
  orientation.mutable_base_orientation()->set_w(kNaN);
  EXPECT_TRUE(IsFieldViolation(ArmFromProto(orientation, "arm.spec", ModelLimits()).status(),
                               "arm.spec.base_orientation", "finite, non-zero quaternion"));
}

// ---------------------------------------------------------------------------------------------
// Scenes

// Each shape arrives; half-space normals are stored normalized (the offset scaled with them).
TEST(SceneFromProtoTest, ValidSpecArrivesInTheSolverScene) {
  v1::SceneSpec spec;
  *spec.add_obstacles() = Sphere("ball", Vec(1, 2, 3), 0.25);
  v1::Obstacle* floor = spec.add_obstacles();
  floor->set_id("floor");
  *floor->mutable_half_space()->mutable_normal() = Vec(0, 0, 2);
  floor->mutable_half_space()->set_offset(4);
  const absl::StatusOr<planning::Scene> scene = SceneFromProto(spec, "scene.spec", ModelLimits());
  ASSERT_TRUE(scene.ok()) << scene.status();
  ASSERT_EQ(scene->size(), 2);
  EXPECT_EQ(scene->obstacles()[0].id, "ball");
  EXPECT_EQ(SphereAt(*scene, 0).center, Eigen::Vector3d(1, 2, 3));
  EXPECT_EQ(SphereAt(*scene, 0).radius, 0.25);
  EXPECT_EQ(scene->obstacles()[1].id, "floor");
  const auto& half_space = std::get<planning::HalfSpace>(scene->obstacles()[1].shape);
  EXPECT_EQ(half_space.normal, Eigen::Vector3d(0, 0, 1));
  EXPECT_EQ(half_space.offset, 2.0);
}

// ModelLimits::max_obstacles: at the bound accepted, one beyond refused naming "obstacles".
TEST(SceneFromProtoTest, MaxObstaclesIsTheBound) {
  ModelLimits limits;
  limits.max_obstacles = 2;
  v1::SceneSpec spec;
  *spec.add_obstacles() = Sphere("a", Vec(0, 0, 0), 1);
  *spec.add_obstacles() = Sphere("b", Vec(0, 0, 0), 1);
  EXPECT_TRUE(SceneFromProto(spec, "scene.spec", limits).ok());
  *spec.add_obstacles() = Sphere("c", Vec(0, 0, 0), 1);
  EXPECT_TRUE(IsFieldViolation(SceneFromProto(spec, "scene.spec", limits).status(),
                               "scene.spec.obstacles", "at most 2 obstacles, got 3"));
}

// An obstacle without a shape would become a zero sphere at the origin: refused by index.
TEST(SceneFromProtoTest, ObstacleWithoutShapeIsRefused) {
  v1::SceneSpec spec;
  *spec.add_obstacles() = Sphere("a", Vec(0, 0, 0), 1);
  spec.add_obstacles()->set_id("nothing");
  EXPECT_TRUE(IsFieldViolation(SceneFromProto(spec, "scene.spec", ModelLimits()).status(),
                               "scene.spec.obstacles[1]", "must set a shape"));
}

// The solver names "obstacles[k].radius"; the wire nests the member in the shape's oneof field.
TEST(SceneFromProtoTest, SolverErrorsNameTheShapeMember) {
  struct Case {
    std::string expected_field;
    std::string bound;
    void (*set)(v1::Obstacle&);
  };
  const Case cases[] = {
      {"sphere.radius", "must be finite and in [0, ",
       [](v1::Obstacle& o) { o.mutable_sphere()->set_radius(-1); }},
      {"capsule.a", "must be finite and within",
       [](v1::Obstacle& o) { o.mutable_capsule()->mutable_a()->set_x(kNaN); }},
      {"box.half_extents", "must be finite and in [0, ",
       [](v1::Obstacle& o) { o.mutable_box()->mutable_half_extents()->set_y(-0.1); }},
      {"box.orientation", "finite quaternion",
       [](v1::Obstacle& o) { o.mutable_box()->mutable_orientation()->set_w(kInf); }},
      {"half_space.normal", "norm >= ",
       [](v1::Obstacle& o) { o.mutable_half_space()->set_offset(1); }},  // normal (0, 0, 0)
  };
  for (const Case& c : cases) {
    v1::SceneSpec spec;
    *spec.add_obstacles() = Sphere("ok", Vec(0, 0, 0), 1);
    v1::Obstacle* bad = spec.add_obstacles();
    bad->set_id("bad");
    c.set(*bad);
    EXPECT_TRUE(IsFieldViolation(SceneFromProto(spec, "scene.spec", ModelLimits()).status(),
                                 "scene.spec.obstacles[1]." + c.expected_field, c.bound))
        << c.expected_field;
  }
}

TEST(SceneFromProtoTest, EmptyAndDuplicateIdsNameTheId) {
  v1::SceneSpec empty;
  *empty.add_obstacles() = Sphere("", Vec(0, 0, 0), 1);
  EXPECT_TRUE(IsFieldViolation(SceneFromProto(empty, "scene.spec", ModelLimits()).status(),
                               "scene.spec.obstacles[0].id", "must be non-empty"));

  v1::SceneSpec duplicate;
  *duplicate.add_obstacles() = Sphere("a", Vec(0, 0, 0), 1);
  *duplicate.add_obstacles() = Sphere("a", Vec(5, 0, 0), 1);
  EXPECT_TRUE(IsFieldViolation(SceneFromProto(duplicate, "scene.spec", ModelLimits()).status(),
                               "scene.spec.obstacles[1].id", "duplicates obstacles[0].id"));
}

// ---------------------------------------------------------------------------------------------
// EditScene operations

TEST(ValidateOperationsTest, AcceptsWellFormedOperations) {
  const v1::EditSceneRequest request =
      Edit({Add(Sphere("b", Vec(0, 0, 0), 1)), ById(Operation::OPERATION_MOVE, "a"),
            ById(Operation::OPERATION_REMOVE, "a")});
  EXPECT_TRUE(ValidateOperations(request, ModelLimits()).ok());
}

// ModelLimits::max_operations, and at least one operation.
TEST(ValidateOperationsTest, OperationCountIsBoundedBothWays) {
  ModelLimits limits;
  limits.max_operations = 2;
  EXPECT_TRUE(IsFieldViolation(ValidateOperations(Edit({}), limits), "operations",
                               "need 1 to 2 operations, got 0"));
  const Operation remove = ById(Operation::OPERATION_REMOVE, "a");
  EXPECT_TRUE(ValidateOperations(Edit({remove, remove}), limits).ok());
  EXPECT_TRUE(IsFieldViolation(ValidateOperations(Edit({remove, remove, remove}), limits),
                               "operations", "need 1 to 2 operations, got 3"));
}

// Each kind's required field, named at the operation's index.
TEST(ValidateOperationsTest, MissingFieldsAreNamedPerOperation) {
  const Operation remove = ById(Operation::OPERATION_REMOVE, "a");
  Operation add_nothing;
  add_nothing.set_operation(Operation::OPERATION_ADD);
  EXPECT_TRUE(IsFieldViolation(ValidateOperations(Edit({remove, add_nothing}), ModelLimits()),
                               "operations[1].obstacle", "is required for OPERATION_ADD"));

  Operation add_shapeless = add_nothing;
  add_shapeless.mutable_obstacle()->set_id("c");
  EXPECT_TRUE(IsFieldViolation(ValidateOperations(Edit({add_shapeless}), ModelLimits()),
                               "operations[0].obstacle", "must set a shape"));

  EXPECT_TRUE(IsFieldViolation(
      ValidateOperations(Edit({remove, ById(Operation::OPERATION_MOVE, "")}), ModelLimits()),
      "operations[1].obstacle_id", "is required for OPERATION_MOVE"));
  EXPECT_TRUE(IsFieldViolation(
      ValidateOperations(Edit({ById(Operation::OPERATION_REMOVE, "")}), ModelLimits()),
      "operations[0].obstacle_id", "is required for OPERATION_REMOVE"));

  EXPECT_TRUE(IsFieldViolation(
      ValidateOperations(Edit({ById(Operation::OPERATION_UNSPECIFIED, "a")}), ModelLimits()),
      "operations[0].operation", "must be OPERATION_ADD, OPERATION_MOVE or OPERATION_REMOVE"));
}

// In order, each seeing the ones before: add b, move it, move a, remove a.
TEST(ApplyOperationsTest, AppliesAddMoveAndRemoveInOrder) {
  planning::Scene scene = SceneWithA();
  Operation move_b = ById(Operation::OPERATION_MOVE, "b");
  *move_b.mutable_translation() = Vec(0, 0, 2);
  Operation turn_a = ById(Operation::OPERATION_MOVE, "a");
  turn_a.mutable_rotation()->set_z(1.0);  // half a turn about z (normalized on use)
  turn_a.mutable_rotation()->set_w(0.0);
  const v1::EditSceneRequest request = Edit({Add(Sphere("b", Vec(0, 3, 0), 0.1)), move_b, turn_a,
                                             ById(Operation::OPERATION_REMOVE, "a")});
  ASSERT_TRUE(ValidateOperations(request, ModelLimits()).ok());
  ASSERT_TRUE(ApplyOperations(request, "scenes/s1", ModelLimits(), scene).ok());
  ASSERT_EQ(scene.size(), 1);
  EXPECT_EQ(scene.obstacles()[0].id, "b");
  EXPECT_EQ(SphereAt(scene, 0).center, Eigen::Vector3d(0, 3, 2));
  EXPECT_EQ(SphereAt(scene, 0).radius, 0.1);

  // The half turn, seen on a scene that keeps "a": (1, 0, 0) -> (-1, 0, 0).
  planning::Scene kept = SceneWithA();
  ASSERT_TRUE(ApplyOperations(Edit({turn_a}), "scenes/s1", ModelLimits(), kept).ok());
  EXPECT_NEAR(SphereAt(kept, 0).center.x(), -1.0, 1e-15);
  EXPECT_NEAR(SphereAt(kept, 0).center.y(), 0.0, 1e-15);
}

TEST(ApplyOperationsTest, UnknownIdsAreNamedWithTheScene) {
  for (const auto kind : {Operation::OPERATION_MOVE, Operation::OPERATION_REMOVE}) {
    planning::Scene scene = SceneWithA();
    const v1::EditSceneRequest request =
        Edit({ById(Operation::OPERATION_REMOVE, "a"), ById(kind, "a")});  // gone by then
    EXPECT_TRUE(IsFieldViolation(ApplyOperations(request, "scenes/s1", ModelLimits(), scene),
                                 "operations[1].obstacle_id", "no obstacle \"a\" in scenes/s1"))
        << Operation::Operation_Name(kind);
  }
}

TEST(ApplyOperationsTest, DuplicateAddNamesTheObstacleId) {
  planning::Scene scene = SceneWithA();
  EXPECT_TRUE(IsFieldViolation(
      ApplyOperations(Edit({Add(Sphere("a", Vec(0, 0, 0), 1))}), "scenes/s1", ModelLimits(), scene),
      "operations[0].obstacle.id", "\"a\" is already in scenes/s1"));
}

// ModelLimits::max_obstacles holds for edits too: an add into a full scene is refused.
TEST(ApplyOperationsTest, AddIntoAFullSceneNamesTheOperationAndTheBound) {
  ModelLimits limits;
  limits.max_obstacles = 2;
  planning::Scene scene = SceneWithA();
  const v1::EditSceneRequest request =
      Edit({Add(Sphere("b", Vec(0, 0, 0), 1)), Add(Sphere("c", Vec(0, 0, 0), 1))});
  EXPECT_TRUE(IsFieldViolation(ApplyOperations(request, "scenes/s1", limits, scene),
                               "operations[1]", "the scene would exceed 2 obstacles"));
}

// The solver's checks of an added obstacle are named inside operations[i].obstacle.
TEST(ApplyOperationsTest, InvalidAddedObstacleNamesTheShapeMember) {
  planning::Scene scene = SceneWithA();
  EXPECT_TRUE(IsFieldViolation(ApplyOperations(Edit({Add(Sphere("b", Vec(0, 0, 0), -2))}),
                                               "scenes/s1", ModelLimits(), scene),
                               "operations[0].obstacle.sphere.radius",
                               "must be finite and in [0, "));
  EXPECT_TRUE(IsFieldViolation(
      ApplyOperations(Edit({Add(Sphere("", Vec(0, 0, 0), 1))}), "scenes/s1", ModelLimits(), scene),
      "operations[0].obstacle.id", "must be non-empty"));
}

// A bad motion names the operation's translation or rotation.
TEST(ApplyOperationsTest, InvalidMotionNamesTranslationOrRotation) {
  planning::Scene scene = SceneWithA();
  Operation far = ById(Operation::OPERATION_MOVE, "a");
  *far.mutable_translation() = Vec(0, kInf, 0);
  EXPECT_TRUE(IsFieldViolation(ApplyOperations(Edit({far}), "scenes/s1", ModelLimits(), scene),
                               "operations[0].translation", "must be finite and within"));

  Operation turn = ById(Operation::OPERATION_MOVE, "a");
  turn.mutable_rotation()->set_x(kNaN);
  EXPECT_TRUE(IsFieldViolation(ApplyOperations(Edit({turn}), "scenes/s1", ModelLimits(), scene),
                               "operations[0].rotation", "finite quaternion"));
}

// A motion each of whose parts is valid but that carries the obstacle out of the world
// (moves add up) is a bad motion too: it must name a field of the MOVE operation, not the
// `obstacle` field that only OPERATION_ADD uses.
TEST(ApplyOperationsTest, MotionOutOfTheWorldNamesTheMoveOperation) {
  planning::Scene scene = SceneWithA();  // "a" at x = 1
  Operation out = ById(Operation::OPERATION_MOVE, "a");
  *out.mutable_translation() = Vec(1e6, 0, 0);  // within the world itself
  const absl::Status status = ApplyOperations(Edit({out}), "scenes/s1", ModelLimits(), scene);
  EXPECT_TRUE(IsFieldViolation(status, "operations[0]", "moved.center must be finite and within"));
}

}  // namespace
}  // namespace ikd::server
