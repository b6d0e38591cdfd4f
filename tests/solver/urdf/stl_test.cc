// STL reading: binary and ASCII files written by the test give back their triangles; malformed
// files are refused with the triangle or token named.
#include "ikd/urdf/stl.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;

void AppendFloat(std::string& out, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

// A binary STL of the given triangles (9 floats each), little-endian as the format says.
std::string BinaryStl(const std::vector<std::array<float, 9>>& triangles,
                      const std::string& header = "binary test mesh") {
  std::string out = header;
  out.resize(80, ' ');
  const uint32_t n = static_cast<uint32_t>(triangles.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  for (const auto& t : triangles) {
    for (int i = 0; i < 3; ++i) AppendFloat(out, 0.0f);  // the normal, unused
    for (float v : t) AppendFloat(out, v);
    out += std::string(2, '\0');
  }
  return out;
}

const std::vector<std::array<float, 9>> kTwoTriangles = {{0, 0, 0, 1, 0, 0, 0, 1, 0},
                                                         {0.5f, -0.25f, 2, 1, 1, 1, -3, 0.125f, 0}};

TEST(StlTest, BinaryTrianglesComeBackInOrder) {
  // A header that begins with "solid" (as some exporters write) is still binary by its size.
  for (const std::string& header : {std::string("mesh"), std::string("solid but binary")}) {
    auto mesh = ParseStl(BinaryStl(kTwoTriangles, header));
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    ASSERT_EQ(mesh->triangles.size(), 2u);
    for (int t = 0; t < 2; ++t) {
      for (int c = 0; c < 3; ++c) {
        const Eigen::Vector3d v = mesh->vertices.col(mesh->triangles[t][c]);
        for (int i = 0; i < 3; ++i) EXPECT_EQ(v[i], kTwoTriangles[t][3 * c + i]);
      }
    }
  }
}

TEST(StlTest, AsciiTrianglesComeBackInOrder) {
  const std::string text =
      "solid part\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n"
      "   vertex 0 1 0\n  endloop\n endfacet\n facet normal 0 0 1\n  outer loop\n"
      "   vertex 0.5 -0.25 2\n   vertex 1 1 1\n   vertex -3 1.25e-1 0\n  endloop\n endfacet\n"
      "endsolid part\n";
  auto mesh = ParseStl(text);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  ASSERT_EQ(mesh->triangles.size(), 2u);
  EXPECT_EQ(mesh->vertices.col(mesh->triangles[1][2]), Eigen::Vector3d(-3, 0.125, 0));
  EXPECT_EQ(mesh->vertices.col(mesh->triangles[0][1]), Eigen::Vector3d(1, 0, 0));
}

TEST(StlTest, MalformedFilesAreRefusedWithTheReason) {
  std::string truncated = BinaryStl(kTwoTriangles);
  truncated.resize(truncated.size() - 10);
  EXPECT_THAT(ParseStl(truncated).status().message(), HasSubstr("not an STL file"));
  EXPECT_THAT(
      ParseStl("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n").status().message(),
      HasSubstr("'zero' is not a number"));
  EXPECT_THAT(ParseStl("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                       "endloop\nendfacet\nendsolid\n")
                  .status()
                  .message(),
              HasSubstr("facet 0 has 2 vertices, not 3"));
  EXPECT_THAT(ParseStl("solid empty\nendsolid empty\n").status().message(),
              HasSubstr("no triangle"));
  EXPECT_THAT(ParseStl(BinaryStl({})).status().message(), HasSubstr("no triangle"));
  auto with_nan = kTwoTriangles;
  with_nan[1][4] = NAN;
  EXPECT_THAT(ParseStl(BinaryStl(with_nan)).status().message(),
              HasSubstr("triangle 1 has a non-finite coordinate"));
  EXPECT_FALSE(ParseStl("").ok());
}

}  // namespace
}  // namespace ikd::robot
