#include "sim/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace tessera {

namespace {

// Text metrics are estimated, not measured (no font is loaded): an average glyph of a sans-serif
// face is a little over half its size wide; 0.6 errs on the side of leaving room.
constexpr double kGlyphWidthRatio = 0.6;
constexpr double kTickFontSize = 12;
constexpr double kLabelFontSize = 13;
constexpr double kTitleFontSize = 15;
constexpr double kLegendFontSize = 12;
constexpr double kLegendRowHeight = 18;
constexpr double kLegendSwatchWidth = 24;
constexpr size_t kMaxLegendChars = 28;
constexpr size_t kMaxCategoryChars = 24;
// Reference lines that must span the plot whatever its range; clipped before any scaling.
constexpr double kUnbounded = 1e12;
constexpr std::string_view kFontFamily = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

double text_width(std::string_view text, double font_size) {
  // Counts code points, not bytes, so that "–" or "≥" is one glyph wide.
  size_t glyphs = 0;
  for (unsigned char c : text) glyphs += (c & 0xC0) != 0x80 ? 1 : 0;
  return static_cast<double>(glyphs) * font_size * kGlyphWidthRatio;
}

// Shortens a label to at most `max_glyphs` code points, ending in an ellipsis when cut.
std::string truncate_label(std::string_view text, size_t max_glyphs) {
  size_t glyphs = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (glyphs == max_glyphs - 1) {
      size_t rest = 0;
      for (size_t j = i; j < text.size(); ++j) rest += (static_cast<unsigned char>(text[j]) & 0xC0) != 0x80 ? 1 : 0;
      if (rest <= 1) return std::string(text);
      return std::string(text.substr(0, i)) + "…";
    }
    ++glyphs;
  }
  return std::string(text);
}

// SVG coordinates with one decimal; a non-finite value (which the callers rule out) would make
// the whole drawing invalid, so it is written as 0 rather than "nan".
std::string coord(double value) {
  if (!std::isfinite(value)) return "0";
  if (std::fabs(value) < 0.05) return "0";
  return fmt::format("{:.1f}", value);
}

struct Range {
  double low = 0;
  double high = 1;
};

// A range with a positive, finite span: the tick and scale arithmetic divides by it.
Range widen_degenerate(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high)) return {0, 1};
  if (high < low) std::swap(low, high);
  if (high - low > std::fabs(high) * 1e-12 && high - low > 0) return {low, high};
  if (low == 0) return {0, 1};
  const double pad = std::fabs(low) * 0.1;
  return {low - pad, high + pad};
}

struct LinearScale {
  double domain_low, domain_high, pixel_low, pixel_high;
  double operator()(double value) const {
    return pixel_low + (value - domain_low) / (domain_high - domain_low) * (pixel_high - pixel_low);
  }
};

struct Box {
  double left, top, right, bottom;
  double width() const { return right - left; }
  double height() const { return bottom - top; }
};

// Liang–Barsky: the part of segment a-b inside the rectangle, if any.
std::optional<std::pair<ChartPoint, ChartPoint>> clip_segment(ChartPoint a, ChartPoint b, Range x, Range y) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  double t0 = 0, t1 = 1;
  const std::array<std::pair<double, double>, 4> edges = {
      {{-dx, a.x - x.low}, {dx, x.high - a.x}, {-dy, a.y - y.low}, {dy, y.high - a.y}}};
  for (const auto& [p, q] : edges) {
    if (p == 0) {
      if (q < 0) return std::nullopt;
      continue;
    }
    const double t = q / p;
    if (p < 0) {
      if (t > t1) return std::nullopt;
      t0 = std::max(t0, t);
    } else {
      if (t < t0) return std::nullopt;
      t1 = std::min(t1, t);
    }
  }
  return std::pair{ChartPoint{a.x + t0 * dx, a.y + t0 * dy}, ChartPoint{a.x + t1 * dx, a.y + t1 * dy}};
}

bool is_finite(ChartPoint p) { return std::isfinite(p.x) && std::isfinite(p.y); }

bool inside(ChartPoint p, Range x, Range y) { return p.x >= x.low && p.x <= x.high && p.y >= y.low && p.y <= y.high; }

// An axis end from the data, rounded out to the tick step, unless the caller fixed it.
Range axis_range(std::optional<double> fixed_low, std::optional<double> fixed_high, double data_low, double data_high) {
  const bool have_data = data_low <= data_high;
  double low = fixed_low.value_or(have_data ? data_low : 0);
  double high = fixed_high.value_or(have_data ? data_high : (fixed_low ? *fixed_low + 1 : 1));
  if (fixed_low && !fixed_high && high < low) high = low;
  if (fixed_high && !fixed_low && low > high) low = high;
  const Range widened = widen_degenerate(low, high);
  const double step = nice_tick_step(widened.low, widened.high);
  Range result = widened;
  if (!fixed_low) result.low = std::floor(widened.low / step + 1e-9) * step;
  if (!fixed_high) result.high = std::ceil(widened.high / step - 1e-9) * step;
  return widen_degenerate(result.low, result.high);
}

enum class SwatchKind { kLine, kBox };

struct LegendEntry {
  std::string name;
  std::string colour;
  std::string dash;
  SwatchKind kind = SwatchKind::kLine;
};

double legend_width(const std::vector<LegendEntry>& entries) {
  double widest = 0;
  for (const LegendEntry& entry : entries) {
    widest = std::max(widest, text_width(truncate_label(entry.name, kMaxLegendChars), kLegendFontSize));
  }
  return entries.empty() ? 0 : kLegendSwatchWidth + 8 + widest;
}

void append_legend(std::string& out, const std::vector<LegendEntry>& entries, double left, double top) {
  out += fmt::format(R"(<g class="legend" font-size="{}">)", kLegendFontSize);
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& entry = entries[i];
    const double middle = top + kLegendRowHeight * (static_cast<double>(i) + 0.5);
    if (entry.kind == SwatchKind::kBox) {
      out += fmt::format(R"(<rect x="{}" y="{}" width="14" height="10" fill="{}"/>)", coord(left + 5),
                         coord(middle - 5), escape_xml(entry.colour));
    } else {
      out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2.5")", coord(left),
                         coord(middle), coord(left + kLegendSwatchWidth), coord(middle), escape_xml(entry.colour));
      if (!entry.dash.empty()) out += fmt::format(R"( stroke-dasharray="{}")", escape_xml(entry.dash));
      out += "/>";
    }
    const std::string shown = truncate_label(entry.name, kMaxLegendChars);
    out += fmt::format(R"(<text x="{}" y="{}" dominant-baseline="central">)", coord(left + kLegendSwatchWidth + 8),
                       coord(middle));
    if (shown != entry.name) out += fmt::format("<title>{}</title>", escape_xml(entry.name));
    out += escape_xml(shown) + "</text>";
  }
  out += "</g>";
}

void append_svg_open(std::string& out, double width, double height, std::string_view title) {
  out += fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" )"
      R"(font-family="{2}" font-size="{3}" fill="#222">)",
      coord(width), coord(height), kFontFamily, kTickFontSize);
  // The <title> child is the accessible name of the image and its tooltip.
  out += fmt::format("<title>{}</title>", escape_xml(title));
  out += fmt::format(R"(<rect width="{}" height="{}" fill="#ffffff"/>)", coord(width), coord(height));
  if (!title.empty()) {
    out += fmt::format(R"(<text x="{}" y="22" font-size="{}" font-weight="600">{}</text>)", coord(12), kTitleFontSize,
                       escape_xml(title));
  }
}

double widest_tick_label(const std::vector<double>& ticks, double step) {
  double widest = 0;
  for (double tick : ticks) widest = std::max(widest, text_width(format_tick(tick, step), kTickFontSize));
  return widest;
}

// Horizontal gridlines, y tick labels and the rotated y axis title.
void append_y_axis(std::string& out, const Box& plot, const LinearScale& y, const std::vector<double>& ticks,
                   double step, std::string_view label, double label_x) {
  for (double tick : ticks) {
    const double py = y(tick);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/>)", coord(plot.left), coord(py),
                       coord(plot.right), coord(py));
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)", coord(plot.left - 4), coord(py),
                       coord(plot.left), coord(py));
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" dominant-baseline="central">{}</text>)",
                       coord(plot.left - 7), coord(py), format_tick(tick, step));
  }
  if (!label.empty()) {
    const double middle = (plot.top + plot.bottom) / 2;
    out += fmt::format(
        R"svg(<text transform="translate({},{}) rotate(-90)" text-anchor="middle" font-size="{}">{}</text>)svg",
        coord(label_x), coord(middle), kLabelFontSize, escape_xml(label));
  }
}

void append_axis_frame(std::string& out, const Box& plot) {
  out += fmt::format(R"(<path d="M{} {}V{}H{}" fill="none" stroke="#444" class="axis"/>)", coord(plot.left),
                     coord(plot.top), coord(plot.bottom), coord(plot.right));
}

// One <path> per series: connected runs of visible points become subpaths; a lone point becomes a
// zero-length subpath, which the round line cap draws as a dot.
std::string series_path_data(const std::vector<ChartPoint>& points, Range x, Range y, const LinearScale& px,
                             const LinearScale& py) {
  std::string d;
  bool pen_down = false;
  auto move_to = [&](ChartPoint p) { d += fmt::format("M{} {}", coord(px(p.x)), coord(py(p.y))); };
  auto line_to = [&](ChartPoint p) { d += fmt::format("L{} {}", coord(px(p.x)), coord(py(p.y))); };
  for (size_t i = 0; i < points.size(); ++i) {
    const ChartPoint& point = points[i];
    if (!is_finite(point)) {
      pen_down = false;
      continue;
    }
    const bool has_prev = i > 0 && is_finite(points[i - 1]);
    const bool has_next = i + 1 < points.size() && is_finite(points[i + 1]);
    if (!has_prev && !has_next) {
      if (inside(point, x, y)) {
        move_to(point);
        d += "l0 0";
      }
      pen_down = false;
      continue;
    }
    if (!has_prev) continue;  // the segment from this point is drawn when its end is reached
    const auto clipped = clip_segment(points[i - 1], point, x, y);
    if (!clipped) {
      pen_down = false;
      continue;
    }
    const bool starts_at_prev = clipped->first.x == points[i - 1].x && clipped->first.y == points[i - 1].y;
    if (!pen_down || !starts_at_prev) move_to(clipped->first);
    line_to(clipped->second);
    pen_down = clipped->second.x == point.x && clipped->second.y == point.y;
  }
  return d;
}

Range data_extent_x(const LineChart& chart) {
  Range extent{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (const LineSeries& series : chart.series) {
    for (const ChartPoint& p : series.points) {
      if (!is_finite(p)) continue;
      extent.low = std::min(extent.low, p.x);
      extent.high = std::max(extent.high, p.x);
    }
  }
  return extent;
}

// The y extent of the points whose x lies on the x axis (a fixed x range hides the others).
Range data_extent_y(const LineChart& chart, Range x) {
  Range extent{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (const LineSeries& series : chart.series) {
    for (const ChartPoint& p : series.points) {
      if (!is_finite(p) || p.x < x.low || p.x > x.high) continue;
      extent.low = std::min(extent.low, p.y);
      extent.high = std::max(extent.high, p.y);
    }
  }
  return extent;
}

bool has_visible_point(const LineChart& chart) {
  for (const LineSeries& series : chart.series) {
    for (const ChartPoint& p : series.points) {
      if (is_finite(p)) return true;
    }
  }
  return false;
}

// The most x ticks (up to 8) whose labels fit side by side without touching.
int x_tick_count_that_fits(Range x, double plot_width) {
  int target = 8;
  for (; target > 2; --target) {
    const std::vector<double> ticks = nice_ticks(x.low, x.high, target);
    const double widest = widest_tick_label(ticks, nice_tick_step(x.low, x.high, target));
    if (static_cast<double>(ticks.size()) * (widest + 14) <= plot_width) break;
  }
  return target;
}

// Category labels under bar groups: on one line if they all fit, else broken at a space into two
// lines if that fits, else turned 35 degrees.
struct CategoryLabels {
  enum class Layout { kOneLine, kTwoLines, kRotated };
  Layout layout = Layout::kOneLine;
  std::vector<std::vector<std::string>> lines;  // per category
  double space_below = 30;
};

// Breaks at the space closest to the middle; a label without a space stays whole.
std::vector<std::string> split_in_two(const std::string& label) {
  size_t best = std::string::npos;
  for (size_t i = label.find(' '); i != std::string::npos; i = label.find(' ', i + 1)) {
    const auto distance = [&](size_t at) { return std::max(at, label.size() - at) - std::min(at, label.size() - at); };
    if (best == std::string::npos || distance(i) < distance(best)) best = i;
  }
  if (best == std::string::npos) return {label};
  return {label.substr(0, best), label.substr(best + 1)};
}

CategoryLabels lay_out_category_labels(const std::vector<std::string>& categories, double group_width) {
  CategoryLabels labels;
  const double room = group_width - 6;
  double widest_whole = 0, widest_part = 0;
  std::vector<std::string> shortened;
  for (const std::string& category : categories) {
    shortened.push_back(truncate_label(category, kMaxCategoryChars));
    widest_whole = std::max(widest_whole, text_width(shortened.back(), kTickFontSize));
    for (const std::string& part : split_in_two(shortened.back())) {
      widest_part = std::max(widest_part, text_width(part, kTickFontSize));
    }
  }
  if (widest_whole <= room) {
    for (const std::string& label : shortened) labels.lines.push_back({label});
  } else if (widest_part <= room) {
    labels.layout = CategoryLabels::Layout::kTwoLines;
    labels.space_below = 30 + kTickFontSize + 3;
    for (const std::string& label : shortened) {
      labels.lines.push_back(text_width(label, kTickFontSize) <= room ? std::vector<std::string>{label}
                                                                      : split_in_two(label));
    }
  } else {
    labels.layout = CategoryLabels::Layout::kRotated;
    labels.space_below = widest_whole * 0.58 + kTickFontSize + 16;
    for (const std::string& label : shortened) labels.lines.push_back({label});
  }
  return labels;
}

void append_category_label(std::string& out, const CategoryLabels& labels, size_t index, double centre, double axis_y) {
  const std::vector<std::string>& lines = labels.lines[index];
  if (labels.layout == CategoryLabels::Layout::kRotated) {
    out += fmt::format(R"svg(<text transform="translate({},{}) rotate(-35)" text-anchor="end">{}</text>)svg",
                       coord(centre), coord(axis_y + 14), escape_xml(lines.front()));
    return;
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">)", coord(centre), coord(axis_y + 18));
  for (size_t i = 0; i < lines.size(); ++i) {
    out +=
        fmt::format(R"(<tspan x="{}" dy="{}">{}</tspan>)", coord(centre), i == 0 ? "0" : "1.2em", escape_xml(lines[i]));
  }
  out += "</text>";
}

void append_no_data(std::string& out, const Box& plot) {
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" fill="#777" font-size="{}">no data</text>)",
                     coord((plot.left + plot.right) / 2), coord((plot.top + plot.bottom) / 2), kLabelFontSize);
}

}  // namespace

ReferenceLine ReferenceLine::vertical(double x, std::string label) {
  ReferenceLine line;
  line.label = std::move(label);
  line.from = {x, -kUnbounded};
  line.to = {x, kUnbounded};
  return line;
}

ReferenceLine ReferenceLine::horizontal(double y, std::string label) {
  ReferenceLine line;
  line.label = std::move(label);
  line.from = {-kUnbounded, y};
  line.to = {kUnbounded, y};
  return line;
}

double nice_tick_step(double low, double high, int target_count) {
  const Range range = widen_degenerate(low, high);
  const double raw = (range.high - range.low) / std::max(1, target_count - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double residual = raw / magnitude;
  // The nearest of 1, 2, 5 and 10 on a log scale, so that the count stays close to the target.
  if (residual < 1.5) return magnitude;
  if (residual < 3.0) return 2 * magnitude;
  if (residual < 7.0) return 5 * magnitude;
  return 10 * magnitude;
}

std::vector<double> nice_ticks(double low, double high, int target_count) {
  const Range range = widen_degenerate(low, high);
  const double step = nice_tick_step(range.low, range.high, target_count);
  // Ticks are multiples of the step, computed from an integer index so that errors do not add up.
  const double first_index = std::ceil(range.low / step - 1e-9);
  std::vector<double> ticks;
  for (double index = first_index; ticks.size() < 1000; index += 1) {
    double tick = index * step;
    if (tick > range.high + step * 1e-9) break;
    if (std::fabs(tick) < step * 1e-9) tick = 0;
    ticks.push_back(tick);
  }
  if (ticks.empty()) ticks.push_back(range.low);  // unreachable for a widened range; kept as a guard
  return ticks;
}

std::string format_tick(double value, double step) {
  if (!std::isfinite(value)) return "";
  if (std::fabs(value) < std::fabs(step) * 1e-6) value = 0;
  int decimals = 0;
  if (std::isfinite(step) && step > 0 && step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  std::string text = fmt::format("{:.{}f}", value, std::min(decimals, 12));
  // Thousands separators for large values, which axes of pod counts reach.
  if (std::fabs(value) >= 10000) text = group_thousands(text);
  return text;
}

std::string group_thousands(std::string_view number) {
  const size_t sign = !number.empty() && number[0] == '-' ? 1 : 0;
  const size_t integer_end = std::min(number.find('.'), number.size());
  const size_t digits = integer_end - sign;
  // Built by appending rather than by inserting commas: no reallocation in the middle of the text.
  std::string out(number.substr(0, sign));
  for (size_t i = 0; i < digits; ++i) {
    if (i > 0 && (digits - i) % 3 == 0) out += ',';
    out += number[sign + i];
  }
  out += number.substr(integer_end);
  return out;
}

std::string_view palette_colour(size_t index) {
  static constexpr std::array<std::string_view, 8> kOkabeIto = {
      "#0072B2",  // blue
      "#D55E00",  // vermillion
      "#009E73",  // bluish green
      "#E69F00",  // orange
      "#CC79A7",  // reddish purple
      "#56B4E9",  // sky blue
      "#000000",  // black
      "#F0E442",  // yellow
  };
  return kOkabeIto[index % kOkabeIto.size()];
}

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_line_chart(const LineChart& chart) {
  const Range x_extent = data_extent_x(chart);
  const Range x = axis_range(chart.x_min, chart.x_max, x_extent.low, x_extent.high);
  const Range y_extent = data_extent_y(chart, x);
  const Range y = axis_range(chart.y_min, chart.y_max, y_extent.low, y_extent.high);
  const double y_step = nice_tick_step(y.low, y.high);
  const std::vector<double> y_ticks = nice_ticks(y.low, y.high);

  std::vector<LegendEntry> legend;
  for (const LineSeries& series : chart.series) legend.push_back({series.name, series.colour, series.dash});
  for (const ReferenceLine& line : chart.reference_lines) {
    if (!line.label.empty()) legend.push_back({line.label, line.colour, line.dash});
  }

  const double y_label_width = widest_tick_label(y_ticks, y_step);
  const double width = std::max(chart.width, 240);
  const double legend_space = legend.empty() ? 0 : legend_width(legend) + 24;
  const double title_space = chart.title.empty() ? 12 : 38;
  const double min_height = title_space + kLegendRowHeight * static_cast<double>(legend.size()) + 60;
  const double height = std::max<double>({static_cast<double>(chart.height), min_height, 160});
  const Box plot{.left = 14 + kLabelFontSize + 10 + y_label_width + 8,
                 .top = title_space,
                 .right = width - 16 - legend_space,
                 .bottom = height - 50};
  const LinearScale px{x.low, x.high, plot.left, plot.right};
  const LinearScale py{y.low, y.high, plot.bottom, plot.top};
  const int x_tick_target = x_tick_count_that_fits(x, plot.width());
  const double x_step = nice_tick_step(x.low, x.high, x_tick_target);
  const std::vector<double> x_ticks = nice_ticks(x.low, x.high, x_tick_target);

  std::string out;
  append_svg_open(out, width, height, chart.title);
  for (double tick : x_ticks) {
    const double tx = px(tick);
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#e3e3e3"/>)", coord(tx), coord(plot.top),
                       coord(plot.bottom));
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/>)", coord(tx), coord(plot.bottom),
                       coord(plot.bottom + 4));
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", coord(tx), coord(plot.bottom + 18),
                       format_tick(tick, x_step));
  }
  append_y_axis(out, plot, py, y_ticks, y_step, chart.y_label, 14 + kLabelFontSize / 2);
  if (!chart.x_label.empty()) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="{}">{}</text>)",
                       coord((plot.left + plot.right) / 2), coord(plot.bottom + 40), kLabelFontSize,
                       escape_xml(chart.x_label));
  }

  // The first series is drawn last, on top: callers list the series that matters most first.
  out += R"(<g fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">)";
  for (auto series = chart.series.rbegin(); series != chart.series.rend(); ++series) {
    out += fmt::format(R"(<path class="series" d="{}" stroke="{}")", series_path_data(series->points, x, y, px, py),
                       escape_xml(series->colour));
    if (!series->dash.empty()) out += fmt::format(R"( stroke-dasharray="{}")", escape_xml(series->dash));
    out += fmt::format("><title>{}</title></path>", escape_xml(series->name));
  }
  out += "</g>";
  // Reference lines go over the data: they are thin and dashed, and a line that the data runs
  // along (the ideal y = x, say) would otherwise disappear under it.
  for (const ReferenceLine& line : chart.reference_lines) {
    if (!is_finite(line.from) || !is_finite(line.to)) continue;
    const auto clipped = clip_segment(line.from, line.to, x, y);
    if (!clipped) continue;
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.3" stroke-dasharray="{}">)",
                       coord(px(clipped->first.x)), coord(py(clipped->first.y)), coord(px(clipped->second.x)),
                       coord(py(clipped->second.y)), escape_xml(line.colour), escape_xml(line.dash));
    out += fmt::format("<title>{}</title></line>", escape_xml(line.label));
  }
  append_axis_frame(out, plot);
  if (!has_visible_point(chart)) append_no_data(out, plot);
  append_legend(out, legend, plot.right + 24, plot.top);
  out += "</svg>";
  return out;
}

std::string render_grouped_bar_chart(const GroupedBarChart& chart) {
  double data_low = 0, data_high = 0;  // bars stand on zero, so zero is always on the axis
  bool any_value = false;
  for (const BarSeries& series : chart.series) {
    for (size_t i = 0; i < series.values.size() && i < chart.categories.size(); ++i) {
      if (!std::isfinite(series.values[i])) continue;
      data_low = std::min(data_low, series.values[i]);
      data_high = std::max(data_high, series.values[i]);
      any_value = true;
    }
  }
  const Range y = axis_range(std::nullopt, std::nullopt, data_low, data_high);
  const double y_step = nice_tick_step(y.low, y.high);
  const std::vector<double> y_ticks = nice_ticks(y.low, y.high);

  std::vector<LegendEntry> legend;
  for (const BarSeries& series : chart.series) legend.push_back({series.name, series.colour, "", SwatchKind::kBox});

  const double y_label_width = widest_tick_label(y_ticks, y_step);
  const double width = std::max(chart.width, 240);
  const double legend_space = legend.empty() ? 0 : legend_width(legend) + 24;
  const double title_space = chart.title.empty() ? 12 : 38;
  const double left = 14 + kLabelFontSize + 10 + y_label_width + 8;
  const double right = width - 16 - legend_space;
  const size_t group_count = std::max<size_t>(chart.categories.size(), 1);
  const double group_width = (right - left) / static_cast<double>(group_count);

  const CategoryLabels labels = lay_out_category_labels(chart.categories, group_width);
  const double label_space = labels.space_below;
  const double min_height = title_space + kLegendRowHeight * static_cast<double>(legend.size()) + label_space + 20;
  const double height = std::max<double>({static_cast<double>(chart.height), min_height, 160});
  const Box plot{.left = left, .top = title_space, .right = right, .bottom = height - label_space};
  const LinearScale py{y.low, y.high, plot.bottom, plot.top};

  std::string out;
  append_svg_open(out, width, height, chart.title);
  append_y_axis(out, plot, py, y_ticks, y_step, chart.y_label, 14 + kLabelFontSize / 2);

  const double bar_width = group_width * 0.8 / static_cast<double>(std::max<size_t>(chart.series.size(), 1));
  const double zero_y = py(0);
  out += "<g>";
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const double group_left = plot.left + group_width * static_cast<double>(c) + group_width * 0.1;
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const BarSeries& series = chart.series[s];
      if (c >= series.values.size() || !std::isfinite(series.values[c])) continue;
      const double value = series.values[c];
      const double value_y = py(value);
      out += fmt::format(R"(<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}">)",
                         coord(group_left + bar_width * static_cast<double>(s)), coord(std::min(zero_y, value_y)),
                         coord(std::max(bar_width - 1, 1.0)), coord(std::fabs(zero_y - value_y)),
                         escape_xml(series.colour));
      out += fmt::format("<title>{} — {}: {}</title></rect>", escape_xml(series.name), escape_xml(chart.categories[c]),
                         format_tick(value, value == std::round(value) ? 1 : 0.1));
    }
    append_category_label(out, labels, c, plot.left + group_width * (static_cast<double>(c) + 0.5), plot.bottom);
  }
  out += "</g>";
  // The zero line, drawn over the bars, is the baseline they stand on.
  out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)", coord(plot.left), coord(zero_y),
                     coord(plot.right), coord(zero_y));
  out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/>)", coord(plot.left), coord(plot.top),
                     coord(plot.bottom));
  if (!any_value) append_no_data(out, plot);
  append_legend(out, legend, plot.right + 24, plot.top);
  out += "</svg>";
  return out;
}

}  // namespace tessera
