// The roofline plot of a run, as hand-written SVG (see report.hpp): x = arithmetic intensity (FLOP per byte of
// the datasheet bytes: W as stored + x + out), y = achieved FLOP/s (2 m N K / time), both log scale. Roofs: the
// HBM datasheet (4.8 TB/s x intensity), the measured streaming-read ceiling (the best bandwidth measured for
// the practical ceiling, dashed) and the BF16 tensor-core peak (989 TFLOP/s). One marker per timed shape and
// side (filled circles: the implementation; hollow squares: the baseline), with a tooltip.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "report.hpp"

namespace solgemm::judge {
namespace {

constexpr double kW = 900, kH = 600, kL = 90, kR = 30, kT = 50, kB = 70;  // size and margins

struct Axes {
  double x0, x1, y0, y1;  // data range (decades)
  double px(double x) const { return kL + (std::log10(x) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)) * (kW - kL - kR); }
  double py(double y) const { return kH - kB - (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) * (kH - kT - kB); }
};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string pow10_label(int e) { return fmt::format("10<tspan baseline-shift=\"super\" font-size=\"9\">{}</tspan>", e); }

// A roof y = min(bw * x, peak) drawn across the x range.
// The label sits above the line (dy < 0) or below it (dy > 0).
std::string roof(const Axes& a, double bw, const char* style, const std::string& label, double dy) {
  const double ridge = kTensorFlops / bw;
  std::ostringstream o;
  const double xa = a.x0, xb = std::clamp(ridge, a.x0, a.x1);
  o << fmt::format("<polyline fill=\"none\" {} points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"/>\n", style, a.px(xa),
                   a.py(std::max(bw * xa, a.y0)), a.px(xb), a.py(std::min(bw * xb, kTensorFlops)));
  (void)ridge;
  const double lx = a.x0 * 1.3;  // at the left end, where no shape of the judge sits
  o << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" transform=\"rotate({:.1f} {:.1f} {:.1f})\">{}</text>\n",
                   a.px(lx), a.py(bw * lx) + dy,
                   -std::atan2(a.py(bw * a.x0) - a.py(bw * a.x1), a.px(a.x1) - a.px(a.x0)) * 180 / M_PI, a.px(lx),
                   a.py(bw * lx) + dy, esc(label));
  return o.str();
}

}  // namespace

std::string roofline_svg(const RunResult& r) {
  struct Pt {
    double ai, impl, base;
    std::string tip_impl, tip_base;
  };
  std::vector<Pt> pts;
  double best_bw = 0;
  for (const ShapeResult& s : r.shapes) {
    if (!s.timed) continue;
    const double ai = s.floor.flops / s.floor.bytes;
    const std::string name = fmt::format("{} {} m={}", s.shape.load >= 0 ? std::string(loads()[static_cast<size_t>(s.shape.load)].name) : "extra",
                                         s.shape.info().name, s.shape.m);
    pts.push_back({ai, s.floor.flops / (s.speed.impl_us * 1e-6), s.floor.flops / (s.speed.base_us * 1e-6),
                   fmt::format("{}: {} {:.2f} us ({:.1f}% of the floor)", name, r.impl, s.speed.impl_us, 100 * s.floor.us / s.speed.impl_us),
                   fmt::format("{}: {} {:.2f} us ({:.1f}% of the floor)", name, r.baseline, s.speed.base_us, 100 * s.floor.us / s.speed.base_us)});
    if (s.ceiling_us > 0) best_bw = std::max(best_bw, s.stored_floor.bytes / (s.ceiling_us * 1e-6));
    if (s.datasheet_ceiling_us > 0) best_bw = std::max(best_bw, s.floor.bytes / (s.datasheet_ceiling_us * 1e-6));
  }
  double ai_lo = 1, ai_hi = 1000, y_lo = 1e12;
  for (const Pt& p : pts) {
    ai_lo = std::min(ai_lo, p.ai);
    ai_hi = std::max(ai_hi, p.ai);
    y_lo = std::min({y_lo, p.impl, p.base});
  }
  Axes a{std::pow(10.0, std::floor(std::log10(ai_lo))), std::pow(10.0, std::ceil(std::log10(ai_hi))),
         std::pow(10.0, std::floor(std::log10(y_lo))), 1e15};
  std::ostringstream o;
  o << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                   "font-family=\"sans-serif\">\n",
                   kW, kH);
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << fmt::format("<text x=\"{:.0f}\" y=\"28\" font-size=\"15\" text-anchor=\"middle\">{} vs {} on {} (commit "
                   "{:.12}): roofline</text>\n",
                   kW / 2, esc(r.impl), esc(r.baseline), esc(r.gpu.name), esc(r.commit));
  // Grid and decade ticks.
  for (int e = static_cast<int>(std::round(std::log10(a.x0))); e <= static_cast<int>(std::round(std::log10(a.x1))); ++e) {
    const double X = a.px(std::pow(10.0, e));
    o << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", X, kT, kH - kB);
    o << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", X,
                     kH - kB + 18, pow10_label(e));
  }
  for (int e = static_cast<int>(std::round(std::log10(a.y0))); e <= 15; ++e) {
    const double Y = a.py(std::pow(10.0, e));
    o << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n", kL, Y, kW - kR);
    o << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n", kL - 8,
                     Y + 4, pow10_label(e));
  }
  o << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", kL, kT,
                   kW - kL - kR, kH - kT - kB);
  o << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"13\" text-anchor=\"middle\">arithmetic intensity "
                   "(FLOP per byte of W as stored + x + out)</text>\n",
                   (kL + kW - kR) / 2, kH - 25);
  o << fmt::format("<text x=\"22\" y=\"{0:.0f}\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 22 "
                   "{0:.0f})\">achieved FLOP/s (2 m N K / time)</text>\n",
                   (kT + kH - kB) / 2);
  // Roofs.
  o << roof(a, kHbmBytesPerSecond, "stroke=\"black\" stroke-width=\"1.5\"", "HBM datasheet 4.8 TB/s", -6);
  if (best_bw > 0)
    o << roof(a, best_bw, "stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"6,4\"",
              fmt::format("measured streaming read {:.2f} TB/s", best_bw / 1e12), 15);
  o << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\" "
                   "stroke-width=\"1.5\"/>\n",
                   a.px(kTensorFlops / kHbmBytesPerSecond), a.py(kTensorFlops), kW - kR);
  o << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">BF16 tensor peak 989 "
                   "TFLOP/s</text>\n",
                   kW - kR - 6, a.py(kTensorFlops) - 6);
  // Points.
  for (const Pt& p : pts) {
    o << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"#d95f02\" "
                     "stroke-width=\"1.5\"><title>{}</title></rect>\n",
                     a.px(p.ai) - 4, a.py(p.base) - 4, esc(p.tip_base));
    o << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#1b63b5\" fill-opacity=\"0.85\"><title>{}"
                     "</title></circle>\n",
                     a.px(p.ai), a.py(p.impl), esc(p.tip_impl));
  }
  // Legend.
  const double lx = kL + 20, ly = kT + 20;
  o << fmt::format("<circle cx=\"{:.0f}\" cy=\"{:.0f}\" r=\"4.5\" fill=\"#1b63b5\"/><text x=\"{:.0f}\" y=\"{:.0f}\" "
                   "font-size=\"12\">{}</text>\n",
                   lx, ly, lx + 12, ly + 4, esc(r.impl));
  o << fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"#d95f02\" "
                   "stroke-width=\"1.5\"/><text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"12\">{}</text>\n",
                   lx - 4, ly + 14, lx + 12, ly + 22, esc(r.baseline));
  if (pts.empty())
    o << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"14\" text-anchor=\"middle\">no timed shapes "
                     "(--check-only)</text>\n",
                     kW / 2, kH / 2);
  o << "</svg>\n";
  return o.str();
}

}  // namespace solgemm::judge
