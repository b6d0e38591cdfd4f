#include "robot_cache.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "robot_conversions.h"

namespace ikd::server {
namespace {

// Equal specs give equal bytes (map entries in key order).
std::string Key(const v1::ArmSpec& spec) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  spec.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const robot::Robot>> RobotCache::Get(const v1::ArmSpec& spec,
                                                                    const std::string& path) {
  std::string key = Key(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto found = index_.find(key); found != index_.end()) {
      recent_.splice(recent_.begin(), recent_, found->second);
      return found->second->second;
    }
  }
  // Built outside the lock: a slow build does not hold up requests for other arms (two
  // concurrent first requests for one spec both build; the second keeps the first's robot).
  absl::StatusOr<robot::Robot> built = RobotFromArmSpec(spec, path);
  if (!built.ok()) return built.status();
  auto robot = std::make_shared<const robot::Robot>(*std::move(built));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto found = index_.find(key); found != index_.end()) return found->second->second;
  if (capacity_ == 0) return robot;
  recent_.emplace_front(key, robot);
  index_[std::move(key)] = recent_.begin();
  if (recent_.size() > capacity_) {
    index_.erase(recent_.back().first);
    recent_.pop_back();
  }
  return robot;
}

size_t RobotCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recent_.size();
}

RobotCache& SharedRobotCache() {
  static RobotCache* cache = new RobotCache(16);  // never destroyed: used until exit
  return *cache;
}

}  // namespace ikd::server
