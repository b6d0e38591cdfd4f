// STL triangle meshes (binary and ASCII), the format robot descriptions use for collision
// geometry: read into vertices and triangles for link_geometry.h's CoverMesh.
//
//   absl::StatusOr<ikd::robot::TriangleMesh> mesh = ikd::robot::ParseStl(bytes);
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"

namespace ikd::robot {

struct TriangleMesh {
  Eigen::Matrix3Xd vertices;                  // three per triangle, in the file's units
  std::vector<std::array<int, 3>> triangles;  // columns of `vertices`
};

// At most this many triangles (a collision mesh has a few thousand; a model's visual mesh may
// have a million, and would only be covered by the same few capsules).
inline constexpr int kMaxStlTriangles = 2'000'000;

// Binary when the size is 84 + 50 x the count in its header, else ASCII ("solid ... facet
// normal ... outer loop vertex x y z ... endloop endfacet ... endsolid"). Errors
// (InvalidArgument, naming the triangle or the offending token): truncated or malformed data,
// a non-finite coordinate, no triangle, more than kMaxStlTriangles.
absl::StatusOr<TriangleMesh> ParseStl(const std::string& bytes);

}  // namespace ikd::robot
