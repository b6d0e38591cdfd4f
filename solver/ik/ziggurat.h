// Internal: standard normal deviates by the ziggurat method (Marsaglia & Tsang, J. Stat. Softw.
// 5(8), 2000), 256 layers. About 99% of the deviates cost one 64-bit engine draw, a multiply
// and a compare (std::normal_distribution's polar method costs two draws, a log and a root per
// pair). A deterministic function of the engine's stream: a seeded engine reproduces it.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace ikd::internal {

class ZigguratNormal {
 public:
  ZigguratNormal() : tables_(Tables()) {}

  template <typename Engine>
  double operator()(Engine& engine) const {
    for (;;) {
      const uint64_t bits = engine();
      const int i = static_cast<int>(bits & 0xff);             // the layer: low 8 bits
      const double u = 2.0 * Unit(bits) - 1.0;                 // in [-1, 1): top 53 bits
      const double x = u * tables_.x[i];
      if (std::abs(x) < tables_.x[i + 1]) return x;            // inside the layer's core
      if (i == 0) return u < 0.0 ? -Tail(engine) : Tail(engine);
      // The wedge between the layer and the density: accept under the curve.
      const double y = tables_.f[i + 1] + (tables_.f[i] - tables_.f[i + 1]) * Unit(engine());
      if (y < std::exp(-0.5 * x * x)) return x;
    }
  }

 private:
  static constexpr int kLayers = 256;
  static constexpr double kR = 3.6541528853610088;  // right edge of the base layer

  struct Table {
    std::array<double, kLayers + 1> x;  // layer edges, x[0] = V / f(R) (the base), x[256] = 0
    std::array<double, kLayers + 1> f;  // exp(-x^2 / 2)
  };

  static double Unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

  // Beyond R (Marsaglia 1964): x = -ln(u1) / R, accepted when -2 ln(u2) > x^2.
  template <typename Engine>
  static double Tail(Engine& engine) {
    for (;;) {
      const double x = -std::log(1.0 - Unit(engine())) / kR;
      const double y = -std::log(1.0 - Unit(engine()));
      if (2.0 * y > x * x) return kR + x;
    }
  }

  // Layers of equal area V (base layer: the rectangle up to R plus the tail beyond it).
  static Table MakeTable() {
    auto density = [](double x) { return std::exp(-0.5 * x * x); };
    const double v = kR * density(kR) + std::sqrt(std::numbers::pi / 2.0) * std::erfc(kR / std::sqrt(2.0));
    Table t;
    t.x[0] = v / density(kR);
    t.x[1] = kR;
    for (int i = 1; i < kLayers - 1; ++i) {
      t.x[i + 1] = std::sqrt(-2.0 * std::log(v / t.x[i] + density(t.x[i])));
    }
    t.x[kLayers] = 0.0;
    for (int i = 0; i <= kLayers; ++i) t.f[i] = density(t.x[i]);
    return t;
  }

  static const Table& Tables() {
    static const Table table = MakeTable();
    return table;
  }

  const Table& tables_;
};

}  // namespace ikd::internal
