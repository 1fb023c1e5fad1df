// A small writer of line and grouped-bar charts as standalone <svg> elements, for the simulator's
// HTML report. The output is plain SVG 1.1 (no script, no external font or stylesheet) so that it
// can be inlined into a page, opened on its own, or printed.
//
// Non-finite values are never written: a non-finite point breaks a line, a non-finite bar value is
// drawn as no bar, and empty or degenerate data (no points, one point, all values equal) still
// gives a chart with a sensible axis.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct LineSeries {
  std::string name;
  std::string colour;  // any SVG colour, e.g. "#0072B2"
  std::vector<ChartPoint> points;
  std::string dash;  // SVG stroke-dasharray, e.g. "6 3"; empty for a solid line
};

// A straight dashed line in data coordinates, clipped to the plot area; it does not widen the
// axes. Shown in the legend under its label.
struct ReferenceLine {
  std::string label;
  ChartPoint from;
  ChartPoint to;
  std::string colour = "#555555";
  std::string dash = "6 4";

  // Lines that span the whole plot whatever the axis range turns out to be.
  static ReferenceLine vertical(double x, std::string label);
  static ReferenceLine horizontal(double y, std::string label);
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<LineSeries> series;
  std::vector<ReferenceLine> reference_lines;
  // Fixed axis ends; an unset end is taken from the data and rounded out to a tick.
  std::optional<double> x_min, x_max, y_min, y_max;
  int width = 760;
  int height = 400;
};

struct BarSeries {
  std::string name;
  std::string colour;
  std::vector<double> values;  // one per category of the chart; missing values count as no bar
};

struct GroupedBarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;  // one group of bars per category, one bar per series
  std::vector<BarSeries> series;
  int width = 760;
  int height = 400;
};

std::string render_line_chart(const LineChart& chart);
std::string render_grouped_bar_chart(const GroupedBarChart& chart);

// Tick values covering [low, high] in steps of 1, 2 or 5 times a power of ten, about
// `target_count` of them, every tick inside [low, high]. A degenerate or non-finite range is
// widened first, so the result is never empty.
std::vector<double> nice_ticks(double low, double high, int target_count = 6);

// The step nice_ticks uses for this range: 1, 2 or 5 times a power of ten.
double nice_tick_step(double low, double high, int target_count = 6);

// A tick label with as many decimals as the step needs ("0.25", "20", never "-0").
std::string format_tick(double value, double step);

// "1234567.5" as "1,234,567.5"; the decimal part and a leading minus are kept as they are.
std::string group_thousands(std::string_view number);

// The Okabe–Ito colour-blind-safe palette, reordered so that the first colours have the most
// contrast on white (its yellow comes last); cycles past the end.
std::string_view palette_colour(size_t index);

// Escapes text for an XML/HTML text node or a quoted attribute value.
std::string escape_xml(std::string_view text);

}  // namespace tessera
