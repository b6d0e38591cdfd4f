// Industrial arms built once per distinct spec. A robot (its site model, constraint models and,
// on its first single-pose solve, its seed atlas: about 0.1 s) is a pure function of its
// ArmSpec, so requests that name the same arm share one immutable robot instead of building it
// anew. Least recently used specs are dropped beyond the capacity; thread-safe.
//
//   RobotCache cache(16);
//   absl::StatusOr<std::shared_ptr<const robot::Robot>> robot = cache.Get(spec, "arm.spec");
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ikd/robot/robot.h"
#include "ikd/v1/types.pb.h"

namespace ikd::server {

class RobotCache {
 public:
  explicit RobotCache(size_t capacity) : capacity_(capacity) {}

  // The robot of `spec` (RobotFromArmSpec, errors at `path`); errors are not kept.
  absl::StatusOr<std::shared_ptr<const robot::Robot>> Get(const v1::ArmSpec& spec,
                                                          const std::string& path);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const robot::Robot>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> recent_;  // most recently used first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_;
};

// The process's cache of the kinematics service (16 robots).
RobotCache& SharedRobotCache();

}  // namespace ikd::server
