#include "ikd/urdf/stl.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ikd::robot {
namespace {

constexpr size_t kBinaryHeader = 84, kBinaryTriangle = 50;

float LittleEndianFloat(const char* p) {
  uint32_t bits = 0;
  for (int i = 3; i >= 0; --i) bits = (bits << 8) | static_cast<unsigned char>(p[i]);
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t LittleEndianCount(const char* p) {
  uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(p[i]);
  return n;
}

// Triangles as they are read; Mesh() lays them out.
class MeshBuilder {
 public:
  absl::Status Add(const Eigen::Matrix3d& corners) {
    const int index = static_cast<int>(coordinates_.size() / 9);
    if (!corners.allFinite()) {
      return absl::InvalidArgumentError(
          absl::StrCat("STL: triangle ", index, " has a non-finite coordinate"));
    }
    coordinates_.insert(coordinates_.end(), corners.data(), corners.data() + 9);
    return absl::OkStatus();
  }
  int size() const { return static_cast<int>(coordinates_.size() / 9); }
  TriangleMesh Mesh() const {
    TriangleMesh mesh;
    mesh.vertices = Eigen::Map<const Eigen::Matrix3Xd>(coordinates_.data(), 3, 3 * size());
    for (int t = 0; t < size(); ++t) mesh.triangles.push_back({3 * t, 3 * t + 1, 3 * t + 2});
    return mesh;
  }

 private:
  std::vector<double> coordinates_;
};

absl::StatusOr<TriangleMesh> ParseBinary(const std::string& bytes, uint32_t count) {
  MeshBuilder mesh;
  for (uint32_t t = 0; t < count; ++t) {
    const char* p = bytes.data() + kBinaryHeader + t * kBinaryTriangle + 12;  // after the normal
    Eigen::Matrix3d corners;
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 3; ++i) corners(i, c) = LittleEndianFloat(p + 4 * (3 * c + i));
    }
    if (absl::Status s = mesh.Add(corners); !s.ok()) return s;
  }
  return mesh.Mesh();
}

absl::StatusOr<TriangleMesh> ParseAscii(const std::string& bytes) {
  std::istringstream in(bytes);
  std::string word;
  MeshBuilder mesh;
  Eigen::Matrix3d corners;
  int corner = 0, triangle = 0;
  while (in >> word) {
    if (word == "vertex") {
      if (corner == 3) {
        return absl::InvalidArgumentError(
            absl::StrCat("ASCII STL: facet ", triangle, " has more than 3 vertices"));
      }
      for (int i = 0; i < 3; ++i) {
        std::string number;
        in >> number;
        char* end = nullptr;
        corners(i, corner) = std::strtod(number.c_str(), &end);
        if (number.empty() || end != number.c_str() + number.size()) {
          return absl::InvalidArgumentError(absl::StrCat("ASCII STL: facet ", triangle, " vertex ",
                                                         corner, ": '", number,
                                                         "' is not a number"));
        }
      }
      ++corner;
    } else if (word == "endloop") {
      if (corner != 3) {
        return absl::InvalidArgumentError(
            absl::StrCat("ASCII STL: facet ", triangle, " has ", corner, " vertices, not 3"));
      }
      if (absl::Status s = mesh.Add(corners); !s.ok()) return s;
      if (++triangle > kMaxStlTriangles) break;
      corner = 0;
    }
  }
  if (corner != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ASCII STL: facet ", triangle, " ends before its endloop"));
  }
  return mesh.Mesh();
}

}  // namespace

absl::StatusOr<TriangleMesh> ParseStl(const std::string& bytes) {
  absl::StatusOr<TriangleMesh> mesh;
  const bool binary_size =
      bytes.size() >= kBinaryHeader &&
      bytes.size() == kBinaryHeader + kBinaryTriangle * static_cast<uint64_t>(
                                                            LittleEndianCount(bytes.data() + 80));
  if (binary_size) {
    const uint32_t count = LittleEndianCount(bytes.data() + 80);
    if (count > static_cast<uint32_t>(kMaxStlTriangles)) {
      return absl::InvalidArgumentError(
          absl::StrCat("STL: ", count, " triangles, at most ", kMaxStlTriangles));
    }
    mesh = ParseBinary(bytes, count);
  } else if (bytes.compare(0, 5, "solid") == 0) {
    mesh = ParseAscii(bytes);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("not an STL file: ", bytes.size(),
                     " bytes is no binary STL (84 + 50 per triangle its "
                     "header counts) and it does not begin with 'solid'"));
  }
  if (!mesh.ok()) return mesh.status();
  if (mesh->triangles.size() > static_cast<size_t>(kMaxStlTriangles)) {
    return absl::InvalidArgumentError(
        absl::StrCat("STL: more than ", kMaxStlTriangles, " triangles"));
  }
  if (mesh->triangles.empty()) return absl::InvalidArgumentError("STL: no triangle");
  return mesh;
}

}  // namespace ikd::robot
