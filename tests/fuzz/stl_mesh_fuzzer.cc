// STL reading (ikd_urdf's ParseStl) on arbitrary bytes, binary or ASCII: malformed input must
// come back as InvalidArgument, never a crash or a read past the buffer. A mesh that is read is
// covered by link_geometry.h's CoverMesh, and every vertex must lie inside the cover (within a
// relative 1e-9 of the mesh's size): the cover is what keeps a link's real shape off obstacles.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ikd/robot/link_geometry.h"
#include "ikd/urdf/stl.h"

namespace {

double OutsideCover(const ikd::robot::CapsuleCover& cover, const Eigen::Vector3d& x) {
  double least = INFINITY;
  for (const ikd::robot::LinkShape& c : cover.capsules) {
    const Eigen::Vector3d ab = c.b - c.a;
    const double length2 = ab.squaredNorm();
    const double t = length2 > 0 ? std::clamp((x - c.a).dot(ab) / length2, 0.0, 1.0) : 0.0;
    least = std::min(least, (x - c.a - t * ab).norm() - c.radius);
  }
  return least;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto mesh = ikd::robot::ParseStl(bytes);
  if (!mesh.ok()) return 0;
  // Coordinates beyond any robot (the importer refuses those) overflow the squared distances.
  if (!(mesh->vertices.cwiseAbs().maxCoeff() <= 1e6)) return 0;
  const ikd::robot::CapsuleCover cover = ikd::robot::CoverMesh(mesh->vertices, mesh->triangles);
  const double scale = std::max(1.0, mesh->vertices.cwiseAbs().maxCoeff());
  for (int v = 0; v < mesh->vertices.cols(); ++v) {
    if (!(OutsideCover(cover, mesh->vertices.col(v)) <= 1e-9 * scale)) {
      std::fprintf(stderr, "vertex %d outside the mesh's capsule cover\n", v);
      __builtin_trap();
    }
  }
  return 0;
}
