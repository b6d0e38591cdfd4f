// mock_arm's execution of the returned states: the checks a controller would make before
// moving motors (mock_arm.cc's header lists them), with the controller's own model of the arm
// and of the scene, and a servo that follows the commanded positions under its limits.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "ikd/v1/kinematics_service.pb.h"

namespace ikd::clients {

// What the mock streams and checks against: the arm (its limb lengths are needed for the
// checks), scene and targets; config.period is the servo's control tick.
struct MockSetup {
  v1::TrackConfig config;
  v1::ArmSpec arm;      // what the server solves with, for the checks
  v1::SceneSpec scene;  // empty: free space
  std::vector<v1::TrackTarget> targets;
  std::optional<v1::SceneUpdate> scene_update;
  size_t update_before = 0;  // index of the first target after the scene update
};

// The outcome of a stream: what was sent and received, and what the checks found.
struct Report {
  size_t targets_sent = 0;
  size_t states_received = 0;
  size_t scene_updates_sent = 0;
  size_t out_of_order = 0;       // states whose time or target differs from the one sent there
  size_t bad_limbs = 0;          // states whose limbs are not their lengths
  size_t bad_positions = 0;      // joint positions that are not the angles of the sites
  size_t limit_violations = 0;   // states beyond a joint limit
  size_t collisions = 0;         // states with a limb inside an obstacle or another limb
  size_t motion_collisions = 0;  // clear states whose motion from a clear previous state
                                 // passes through an obstacle or another limb
  size_t missed_targets = 0;     // REACHED states whose hand is not on the target (or, with
                                 // an orientation, not turned as asked)
  size_t joint_jumps = 0;        // states with a joint step above --max_joint_step
  size_t servo_overruns = 0;     // control ticks with tracking error above the bound
  size_t rate_overruns = 0;      // states whose motion passes a declared velocity,
                                 // acceleration or jerk limit (mock_rates.h)
  double max_velocity_ratio = 0, max_acceleration_ratio = 0, max_jerk_ratio = 0;  // of them
  size_t reached = 0;
  size_t late = 0;  // LATE states (TrackConfig.deadline)
  double max_hand_error = 0;
  double max_rotation_error = 0;  // rad, industrial arms with an orientation
  double max_limb_error = 0;      // relative
  double max_position_error = 0;  // rad, reported positions vs angles of the sites
  double max_limit_violation = 0;
  double max_joint_step = 0;                   // rad
  double max_tracking_error = 0;               // rad, servo
  std::optional<double> min_clearance;         // computed here from the sites and the mock's scene
  std::optional<double> min_motion_clearance;  // the same, inside the motions between states
  std::vector<double> latencies_ms;
  std::vector<double> held_ms;  // TrackResponse.held_us: the server's share of each round trip
  grpc::Status rpc_status;
};

// Executes the states of one stream in order.
class Executor {
 public:
  virtual ~Executor() = default;
  // The mock's copy of the scene follows an update the stream sent.
  virtual void ApplySceneUpdate(const v1::SceneUpdate& update) = 0;
  // Checks `state`, the answer to target `index` (`previous`: the state before it, or null),
  // into `report`, and moves the servo to it.
  virtual void Execute(const v1::JointState& state, const v1::JointState* previous, size_t index,
                       Report* report) = 0;
};

// The checking executor of `setup`: the input validated as the server validates it; an error
// for an invalid arm or scene.
absl::StatusOr<std::unique_ptr<Executor>> CheckingExecutorFor(const MockSetup& setup);

}  // namespace ikd::clients
