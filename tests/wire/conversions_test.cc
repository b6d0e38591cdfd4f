// FiniteCheck: the net under every answer of the services names the first non-finite number.
#include "conversions.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Finite numbers (the largest double and the smallest denormal included) pass.
TEST(FiniteCheckTest, FiniteNumbersPass) {
  FiniteCheck check;
  check.Number(std::numeric_limits<double>::max(), "a");
  check.Number(-std::numeric_limits<double>::denorm_min(), "b", 3);
  check.Vector(Vec(1, -2, 1e308), "c");
  EXPECT_TRUE(check.Result("the answer").ok());
}

// The first non-finite number is named, with its index, as OUT_OF_RANGE; later ones do not
// replace it.
TEST(FiniteCheckTest, NamesTheFirstNonFiniteNumber) {
  FiniteCheck check;
  check.Number(1.0, "time");
  check.Number(-kInf, "velocities", 2);
  check.Number(std::nan(""), "hand_error");
  const absl::Status status = check.Result("the answer at t = 1 s");
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(status.message(), HasSubstr("the answer at t = 1 s is beyond the range of doubles "
                                          "(velocities[2] = -inf)"));
  EXPECT_THAT(status.message(), Not(HasSubstr("hand_error")));
}

// A vector is named whole, with all three coordinates.
TEST(FiniteCheckTest, NamesAVectorWithItsCoordinates) {
  FiniteCheck check;
  check.Vector(Vec(0, 0, 0), "sites", 0);
  check.Vector(Vec(0.5, std::nan(""), 2), "sites", 1);
  EXPECT_THAT(check.Result("the frame").message(), HasSubstr("(sites[1] = (0.5, nan, 2))"));
  FiniteCheck unindexed;
  unindexed.Vector(Vec(kInf, 0, 0), "target");
  EXPECT_THAT(unindexed.Result("the answer").message(), HasSubstr("(target = (inf, 0, 0))"));
}

}  // namespace
}  // namespace ikd::server
