#include "ikd/robot/first_use.h"

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/seed_atlas.h"
#include "ikd/robot/self_collision.h"

namespace ikd::robot {

void BuildFirstUseData(const Robot& robot) {
  SeedAtlasOf(robot);
  SelfCollisionMatrixOf(robot);
  AnalyticIkOf(robot);
}

}  // namespace ikd::robot
