#include "svg_plot.h"

#include <Eigen/Geometry>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ikd::clients {
namespace {

using Eigen::Vector2d;
using Eigen::Vector3d;

constexpr double kWidthPx = 800;
constexpr double kMarginFraction = 0.08;

Vector3d ToEigen(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

// An absent or all-zero quaternion is the identity (types.proto).
Eigen::Quaterniond ToEigen(const v1::Quaternion& q) {
  if (q.x() == 0 && q.y() == 0 && q.z() == 0 && q.w() == 0) {
    return Eigen::Quaterniond::Identity();
  }
  return Eigen::Quaterniond(q.w(), q.x(), q.y(), q.z()).normalized();
}

// The world axes (e1, e2) spanning the drawing plane.
struct Projection {
  int u_axis = 0;
  int v_axis = 1;
  int depth_axis = 2;
  Vector2d operator()(const Vector3d& p) const { return {p[u_axis], p[v_axis]}; }
  const char* Name() const {
    static const char* kNames[3][3] = {{"", "xy", "xz"}, {"", "", "yz"}, {"", "", ""}};
    return kNames[u_axis][v_axis];
  }
};

Projection ProjectionOf(SweepPlot::View view, const std::vector<Vector3d>& points) {
  switch (view) {
    case SweepPlot::View::kXY: return {0, 1, 2};
    case SweepPlot::View::kXZ: return {0, 2, 1};
    case SweepPlot::View::kYZ: return {1, 2, 0};
    case SweepPlot::View::kAuto: break;
  }
  Vector3d low = Vector3d::Constant(INFINITY), high = Vector3d::Constant(-INFINITY);
  for (const Vector3d& p : points) {
    low = low.cwiseMin(p);
    high = high.cwiseMax(p);
  }
  if (points.empty()) return {0, 1, 2};
  Eigen::Index flattest = 0;
  (high - low).minCoeff(&flattest);
  if (flattest == 0) return {1, 2, 0};
  if (flattest == 1) return {0, 2, 1};
  return {0, 1, 2};
}

// Axis-aligned box of the drawing plane that grows to hold what is added.
struct Bounds {
  Vector2d low = Vector2d::Constant(INFINITY);
  Vector2d high = Vector2d::Constant(-INFINITY);
  void Add(const Vector2d& p, double radius = 0) {
    low = low.cwiseMin(p - Vector2d::Constant(radius));
    high = high.cwiseMax(p + Vector2d::Constant(radius));
  }
  bool empty() const { return !(low.x() <= high.x()); }
};

// Maps drawing-plane metres onto SVG pixels (y up on screen).
class Canvas {
 public:
  explicit Canvas(Bounds bounds) {
    if (bounds.empty()) bounds = {Vector2d(-1, -1), Vector2d(1, 1)};
    Vector2d size = (bounds.high - bounds.low).cwiseMax(Vector2d::Constant(1e-3));
    const double pad = kMarginFraction * size.maxCoeff();
    low_ = bounds.low - Vector2d::Constant(pad);
    high_ = bounds.high + Vector2d::Constant(pad);
    scale_ = kWidthPx / (high_.x() - low_.x());
  }
  Vector2d Px(const Vector2d& p) const {
    return {(p.x() - low_.x()) * scale_, (high_.y() - p.y()) * scale_};
  }
  double Length(double metres) const { return metres * scale_; }
  double height_px() const { return (high_.y() - low_.y()) * scale_; }
  // The corners of the visible region, counter-clockwise, in metres.
  std::vector<Vector2d> Frame() const {
    return {low_, {high_.x(), low_.y()}, high_, {low_.x(), high_.y()}};
  }

 private:
  Vector2d low_, high_;
  double scale_ = 1;
};

std::string Points(const Canvas& canvas, const std::vector<Vector2d>& points) {
  std::string text;
  for (const Vector2d& p : points) {
    const Vector2d px = canvas.Px(p);
    absl::StrAppendFormat(&text, "%s%.2f,%.2f", text.empty() ? "" : " ", px.x(), px.y());
  }
  return text;
}

// Andrew's monotone chain; the hull of a box's projected corners.
std::vector<Vector2d> ConvexHull(std::vector<Vector2d> points) {
  if (points.size() < 3) return points;
  std::sort(points.begin(), points.end(), [](const Vector2d& a, const Vector2d& b) {
    return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y());
  });
  auto cross = [](const Vector2d& o, const Vector2d& a, const Vector2d& b) {
    return (a - o).x() * (b - o).y() - (a - o).y() * (b - o).x();
  };
  std::vector<Vector2d> hull(2 * points.size());
  size_t k = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  for (size_t i = points.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k > 1 ? k - 1 : k);
  return hull;
}

// The part of `polygon` where normal . p <= offset (Sutherland-Hodgman against one line).
std::vector<Vector2d> ClipToHalfPlane(const std::vector<Vector2d>& polygon,
                                      const Vector2d& normal, double offset) {
  std::vector<Vector2d> out;
  for (size_t i = 0; i < polygon.size(); ++i) {
    const Vector2d& a = polygon[i];
    const Vector2d& b = polygon[(i + 1) % polygon.size()];
    const double da = normal.dot(a) - offset, db = normal.dot(b) - offset;
    if (da <= 0) out.push_back(a);
    if ((da < 0 && db > 0) || (da > 0 && db < 0)) out.push_back(a + (b - a) * (da / (da - db)));
  }
  return out;
}

std::array<Vector3d, 8> BoxCorners(const v1::Box& box) {
  const Eigen::Matrix3d rotation = ToEigen(box.orientation()).toRotationMatrix();
  const Vector3d half = ToEigen(box.half_extents());
  std::array<Vector3d, 8> corners;
  for (int k = 0; k < 8; ++k) {
    const Vector3d sign(k & 1 ? 1 : -1, k & 2 ? 1 : -1, k & 4 ? 1 : -1);
    corners[k] = ToEigen(box.center()) + rotation * sign.cwiseProduct(half);
  }
  return corners;
}

std::vector<Vector3d> SitesOf(const v1::JointState& state) {
  std::vector<Vector3d> sites;
  for (const auto& site : state.sites()) sites.push_back(ToEigen(site));
  return sites;
}

// Indices of at most `count` states spread evenly from the first to the last.
std::vector<size_t> SpreadIndices(size_t size, int count) {
  std::vector<size_t> picked;
  if (size == 0 || count <= 0) return picked;
  if (size <= static_cast<size_t>(count)) {
    for (size_t k = 0; k < size; ++k) picked.push_back(k);
    return picked;
  }
  for (int k = 0; k < count; ++k) {
    picked.push_back(static_cast<size_t>(std::llround(double(k) * (size - 1) / (count - 1))));
  }
  return picked;
}

class SvgBuilder {
 public:
  SvgBuilder(const Projection& projection, const Canvas& canvas)
      : project_(projection), canvas_(canvas) {}

  void Obstacle(const v1::Obstacle& obstacle) {
    const std::string title = absl::StrCat("<title>", obstacle.id(), "</title>");
    const char* style = R"(fill="#d9a441" fill-opacity="0.55" stroke="#8a5a00")";
    if (obstacle.has_sphere()) {
      Disc(canvas_.Px(project_(ToEigen(obstacle.sphere().center()))),
           canvas_.Length(obstacle.sphere().radius()), style, title);
    } else if (obstacle.has_capsule()) {
      // A capsule projects onto a stadium: a segment stroked 2 r wide with round caps.
      const Vector2d a = canvas_.Px(project_(ToEigen(obstacle.capsule().a())));
      const Vector2d b = canvas_.Px(project_(ToEigen(obstacle.capsule().b())));
      if ((a - b).norm() < 1e-6) {  // seen along its axis: a disc
        Disc(a, canvas_.Length(obstacle.capsule().radius()), style, title);
        return;
      }
      absl::StrAppendFormat(
          &body_,
          "<line class=\"obstacle\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
          "stroke=\"#d9a441\" stroke-opacity=\"0.7\" stroke-linecap=\"round\" "
          "stroke-width=\"%.2f\">%s</line>\n",
          a.x(), a.y(), b.x(), b.y(),
          std::max(1.0, canvas_.Length(2 * obstacle.capsule().radius())), title);
    } else if (obstacle.has_box()) {
      std::vector<Vector2d> corners;
      for (const Vector3d& corner : BoxCorners(obstacle.box())) corners.push_back(project_(corner));
      Polygon(ConvexHull(corners), style, title);
    } else if (obstacle.has_half_space()) {
      HalfSpace(obstacle.half_space(), title);
    }
  }

  void Polyline(const std::vector<Vector2d>& points, const std::string& attributes) {
    if (points.size() < 2) return;
    absl::StrAppend(&body_, "<polyline fill=\"none\" ", attributes, " points=\"",
                    Points(canvas_, points), "\"/>\n");
  }

  void Dot(const Vector2d& p, double radius_px, const std::string& attributes) {
    const Vector2d px = canvas_.Px(p);
    absl::StrAppendFormat(&body_, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" %s/>\n", px.x(),
                          px.y(), radius_px, attributes);
  }

  void Caption(const std::string& text) {
    absl::StrAppendFormat(&body_,
                          "<text x=\"8\" y=\"18\" font-family=\"sans-serif\" font-size=\"13\" "
                          "fill=\"#333\">%s</text>\n",
                          text);
  }

  std::string Finish() const {
    return absl::StrFormat(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
        "viewBox=\"0 0 %.0f %.0f\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
        "%s</svg>\n",
        kWidthPx, canvas_.height_px(), kWidthPx, canvas_.height_px(), body_);
  }

  const Projection& project() const { return project_; }

 private:
  void Disc(const Vector2d& center_px, double radius_px, const char* style,
            const std::string& title) {
    absl::StrAppendFormat(&body_,
                          "<circle class=\"obstacle\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" "
                          "%s>%s</circle>\n",
                          center_px.x(), center_px.y(), radius_px, style, title);
  }

  void Polygon(const std::vector<Vector2d>& points, const char* style, const std::string& title) {
    if (points.size() < 3) {  // nothing of it inside the view
      absl::StrAppend(&body_, "<!-- not in view: ", title, " -->\n");
      return;
    }
    absl::StrAppend(&body_, "<polygon class=\"obstacle\" ", style, " points=\"",
                    Points(canvas_, points), "\">", title, "</polygon>\n");
  }

  // Only a half-space whose boundary is seen edge-on can be drawn; one seen face-on covers
  // the whole view or none of it, so it is left out (its title still lists it).
  void HalfSpace(const v1::HalfSpace& half_space, const std::string& title) {
    const Vector3d normal = ToEigen(half_space.normal());
    if (std::abs(normal[project_.depth_axis]) > 1e-9 * normal.norm()) {
      absl::StrAppend(&body_, "<!-- half-space not drawn in this view: ", title, " -->\n");
      return;
    }
    const Vector2d in_plane(normal[project_.u_axis], normal[project_.v_axis]);
    Polygon(ClipToHalfPlane(canvas_.Frame(), in_plane, half_space.offset()),
            R"(fill="#9e9e9e" fill-opacity="0.35" stroke="#616161")", title);
  }

  Projection project_;
  Canvas canvas_;
  std::string body_;
};

}  // namespace

absl::StatusOr<SweepPlot::View> SweepPlot::ParseView(absl::string_view text) {
  if (text == "auto") return View::kAuto;
  if (text == "xy") return View::kXY;
  if (text == "xz") return View::kXZ;
  if (text == "yz") return View::kYZ;
  return absl::InvalidArgumentError(
      absl::StrCat("--svg_view must be auto, xy, xz or yz, got \"", text, "\""));
}

void SweepPlot::AddScene(const v1::SceneSpec& scene) {
  for (const auto& obstacle : scene.obstacles()) *scene_.add_obstacles() = obstacle;
}

void SweepPlot::AddState(const v1::JointState& state) { states_.push_back(state); }

std::string SweepPlot::Render() const {
  std::vector<Vector3d> content;
  for (const auto& state : states_) {
    for (const Vector3d& site : SitesOf(state)) content.push_back(site);
    content.push_back(ToEigen(state.target()));
  }
  const Projection project = ProjectionOf(view_, content);
  Bounds bounds;
  for (const Vector3d& p : content) bounds.Add(project(p));
  for (const auto& obstacle : scene_.obstacles()) {
    if (obstacle.has_sphere()) {
      bounds.Add(project(ToEigen(obstacle.sphere().center())), obstacle.sphere().radius());
    } else if (obstacle.has_capsule()) {
      bounds.Add(project(ToEigen(obstacle.capsule().a())), obstacle.capsule().radius());
      bounds.Add(project(ToEigen(obstacle.capsule().b())), obstacle.capsule().radius());
    } else if (obstacle.has_box()) {
      for (const Vector3d& corner : BoxCorners(obstacle.box())) bounds.Add(project(corner));
    }
  }
  SvgBuilder svg(project, Canvas(bounds));
  for (const auto& obstacle : scene_.obstacles()) svg.Obstacle(obstacle);

  auto projected = [&](const std::vector<Vector3d>& points) {
    std::vector<Vector2d> out;
    for (const Vector3d& p : points) out.push_back(project(p));
    return out;
  };
  for (size_t k : SpreadIndices(states_.size(), max_arms_)) {
    svg.Polyline(projected(SitesOf(states_[k])),
                 R"(class="sweep" stroke="#4682b4" stroke-opacity="0.3" stroke-width="1.5")");
  }
  std::vector<Vector3d> targets, hands;
  int reached = 0;
  for (const auto& state : states_) {
    targets.push_back(ToEigen(state.target()));
    if (state.sites_size() > 0) hands.push_back(ToEigen(*state.sites().rbegin()));
    if (state.status() == v1::STEP_STATUS_REACHED) ++reached;
  }
  svg.Polyline(projected(targets),
               R"(class="target-path" stroke="#777" stroke-width="2" stroke-dasharray="6 4")");
  svg.Polyline(projected(hands), R"(class="hand-path" stroke="#1a237e" stroke-width="1.5")");
  for (const auto& state : states_) {
    if (state.status() != v1::STEP_STATUS_REACHED && state.sites_size() > 0) {
      svg.Dot(project(ToEigen(*state.sites().rbegin())), 3.5,
              R"(class="not-reached" fill="#d32f2f")");
    }
  }
  if (!states_.empty()) {
    const std::vector<Vector2d> last = projected(SitesOf(states_.back()));
    svg.Polyline(last, R"(class="arm" stroke="#0d47a1" stroke-width="4" stroke-linecap="round")");
    for (const Vector2d& site : last) svg.Dot(site, 4, R"(class="site" fill="#0d47a1")");
  }
  svg.Caption(absl::StrFormat("ikd: %d samples, %d reached, %d obstacles; view %s (m)",
                              states_.size(), reached, scene_.obstacles_size(), project.Name()));
  return svg.Finish();
}

namespace {

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot open ", path, " for writing"));
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::Status SweepPlot::WriteFile(const std::string& path) const {
  return WriteText(path, Render());
}

std::string PosePlot::Render(const v1::FittedFrame& fitted,
                             const std::vector<v1::SkeletonBone>& bones,
                             const v1::PoseFrame& observed) const {
  std::vector<Vector3d> sites, points;
  for (const auto& site : fitted.sites()) sites.push_back(ToEigen(site));
  for (const auto& point : observed.points()) points.push_back(ToEigen(point.position()));
  std::vector<Vector3d> content = sites;
  content.insert(content.end(), points.begin(), points.end());
  const Projection project = ProjectionOf(view_, content);
  Bounds bounds;
  for (const Vector3d& p : content) bounds.Add(project(p));
  SvgBuilder svg(project, Canvas(bounds));
  int outliers = 0;
  for (int k = 0; k < observed.points_size(); ++k) {
    const bool outlier = k < fitted.observations_size() && fitted.observations(k).outlier();
    outliers += outlier;
    svg.Dot(project(points[k]), outlier ? 5 : 3,
            outlier ? R"(class="outlier" fill="#d32f2f")"
                    : R"(class="observation" fill="#9e9e9e")");
  }
  for (const v1::SkeletonBone& bone : bones) {
    if (bone.i() < 0 || bone.j() < 0 || bone.i() >= static_cast<int>(sites.size()) ||
        bone.j() >= static_cast<int>(sites.size())) {
      continue;
    }
    svg.Polyline({project(sites[bone.i()]), project(sites[bone.j()])},
                 R"(class="bone" stroke="#0d47a1" stroke-width="4" stroke-linecap="round")");
  }
  for (const Vector3d& site : sites) svg.Dot(project(site), 4, R"(class="site" fill="#0d47a1")");
  svg.Caption(absl::StrFormat("ikd pose: t = %.3f s, %s, %d sites, %d observations, %d outliers; "
                              "view %s (m)",
                              fitted.timestamp(), v1::FrameOutcome_Name(fitted.outcome()),
                              fitted.sites_size(), observed.points_size(), outliers,
                              project.Name()));
  return svg.Finish();
}

absl::Status PosePlot::WriteFile(const std::string& path, const v1::FittedFrame& fitted,
                                 const std::vector<v1::SkeletonBone>& bones,
                                 const v1::PoseFrame& observed) const {
  return WriteText(path, Render(fitted, bones, observed));
}

}  // namespace ikd::clients
