#include "sim/svg_chart.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "text_checks.h"

namespace tessera {
namespace {

using testing::count_of;
using testing::has_non_finite_token;

// NaN or infinity written into an attribute or a label makes a broken drawing.
void expect_no_non_finite(const std::string& svg) { EXPECT_FALSE(has_non_finite_token(svg)) << svg; }

void expect_one_svg_element(const std::string& svg) {
  EXPECT_TRUE(svg.starts_with("<svg ")) << svg.substr(0, 80);
  EXPECT_TRUE(svg.ends_with("</svg>"));
  EXPECT_EQ(count_of(svg, "<svg"), 1u);
  EXPECT_EQ(count_of(svg, "</svg>"), 1u);
}

// The mantissa of a tick step: 1, 2 or 5.
double mantissa(double step) { return step / std::pow(10.0, std::floor(std::log10(step) + 1e-12)); }

void expect_one_two_five_ticks(double low, double high) {
  SCOPED_TRACE(::testing::Message() << "range [" << low << ", " << high << "]");
  const std::vector<double> ticks = nice_ticks(low, high);
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_LE(ticks.size(), 12u);
  const double step = nice_tick_step(low, high);
  const double m = mantissa(step);
  EXPECT_TRUE(std::fabs(m - 1) < 1e-9 || std::fabs(m - 2) < 1e-9 || std::fabs(m - 5) < 1e-9) << "step " << step;
  for (size_t i = 0; i < ticks.size(); ++i) {
    EXPECT_GE(ticks[i], low - step * 1e-6);
    EXPECT_LE(ticks[i], high + step * 1e-6);
    EXPECT_NEAR(std::remainder(ticks[i], step), 0, step * 1e-6)
        << "tick " << ticks[i] << " is not a multiple of " << step;
    if (i > 0) {
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-6);
    }
  }
}

TEST(NiceTicks, PercentAxisStepsByTwenty) {
  EXPECT_EQ(nice_ticks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 130), (std::vector<double>{0, 20, 40, 60, 80, 100, 120}));
}

TEST(NiceTicks, SmallAndFractionalRanges) {
  const std::vector<double> ticks = nice_ticks(0, 1);
  ASSERT_EQ(ticks.size(), 6u);
  EXPECT_DOUBLE_EQ(ticks[1], 0.2);
  EXPECT_DOUBLE_EQ(ticks.back(), 1.0);
  EXPECT_DOUBLE_EQ(nice_tick_step(0, 0.05), 0.01);
  EXPECT_DOUBLE_EQ(nice_tick_step(0, 25), 5);
}

TEST(NiceTicks, StepsAreOneTwoOrFiveTimesAPowerOfTen) {
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> exponent(-4, 7);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int i = 0; i < 500; ++i) {
    const double scale = std::pow(10.0, exponent(random));
    double low = unit(random) * scale, high = unit(random) * scale;
    if (low > high) std::swap(low, high);
    if (high - low < scale * 1e-3) continue;
    expect_one_two_five_ticks(low, high);
  }
  expect_one_two_five_ticks(-37, 12);
  expect_one_two_five_ticks(1e6, 1e6 + 3);
}

TEST(NiceTicks, DegenerateRangesAreWidened) {
  for (auto [low, high] : std::vector<std::pair<double, double>>{
           {0, 0}, {5, 5}, {-3, -3}, {10, 2}, {std::nan(""), 1}, {0, std::numeric_limits<double>::infinity()}}) {
    SCOPED_TRACE(::testing::Message() << low << ", " << high);
    const std::vector<double> ticks = nice_ticks(low, high);
    ASSERT_GE(ticks.size(), 2u);
    for (double tick : ticks) EXPECT_TRUE(std::isfinite(tick));
  }
  EXPECT_EQ(nice_ticks(0, 0).front(), 0);
  EXPECT_EQ(nice_ticks(0, 0).back(), 1);
}

TEST(FormatTick, DecimalsFollowTheStep) {
  EXPECT_EQ(format_tick(20, 20), "20");
  EXPECT_EQ(format_tick(0.4, 0.2), "0.4");
  EXPECT_EQ(format_tick(0.05, 0.01), "0.05");
  EXPECT_EQ(format_tick(-1e-17, 0.1), "0.0");
  EXPECT_EQ(format_tick(-1e-17, 1), "0");
  EXPECT_EQ(format_tick(25000, 5000), "25,000");
  EXPECT_EQ(format_tick(-1250000, 250000), "-1,250,000");
}

TEST(GroupThousands, InsertsCommasInTheIntegerPartOnly) {
  EXPECT_EQ(group_thousands("1234567.891"), "1,234,567.891");
  EXPECT_EQ(group_thousands("-1000"), "-1,000");
  EXPECT_EQ(group_thousands("999"), "999");
  EXPECT_EQ(group_thousands(""), "");
}

TEST(EscapeXml, EscapesMarkupAndQuotes) {
  EXPECT_EQ(escape_xml(R"(<script>&"')"), "&lt;script&gt;&amp;&quot;&#39;");
  EXPECT_EQ(escape_xml("plain – text"), "plain – text");
}

TEST(Palette, OkabeItoColoursCycle) {
  EXPECT_EQ(palette_colour(0), "#0072B2");
  EXPECT_EQ(palette_colour(8), palette_colour(0));
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = i + 1; j < 8; ++j) EXPECT_NE(palette_colour(i), palette_colour(j));
  }
}

LineChart three_series_chart() {
  LineChart chart;
  chart.title = "GPU allocation";
  chart.x_label = "arrived (%)";
  chart.y_label = "allocated (%)";
  for (int s = 0; s < 3; ++s) {
    LineSeries series;
    series.name = "policy " + std::to_string(s);
    series.colour = std::string(palette_colour(static_cast<size_t>(s)));
    for (int x = 0; x <= 130; x += 10) series.points.push_back({double(x), std::min<double>(x, 90 + s)});
    chart.series.push_back(series);
  }
  chart.reference_lines.push_back(ReferenceLine{"ideal", {0, 0}, {1e6, 1e6}, "#555555", "6 4"});
  chart.x_min = 0;
  chart.x_max = 130;
  chart.y_min = 0;
  chart.y_max = 100;
  return chart;
}

TEST(LineChart, OnePathPerSeriesWithAxesAndLegend) {
  const std::string svg = render_line_chart(three_series_chart());
  expect_one_svg_element(svg);
  expect_no_non_finite(svg);
  EXPECT_EQ(count_of(svg, R"(<path class="series")"), 3u);
  for (int s = 0; s < 3; ++s) EXPECT_NE(svg.find(">policy " + std::to_string(s) + "</text>"), std::string::npos);
  EXPECT_NE(svg.find(">ideal</text>"), std::string::npos);  // reference lines are in the legend
  EXPECT_NE(svg.find(">arrived (%)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">allocated (%)</text>"), std::string::npos);
  for (const char* tick : {">0<", ">20<", ">100<", ">120<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(svg.find(">140<"), std::string::npos);  // a fixed axis end is not rounded out
}

TEST(LineChart, ReferenceLineIsClippedToThePlot) {
  const LineChart chart = three_series_chart();
  const std::string svg = render_line_chart(chart);
  const std::regex dashed_line(
      R"svg(<line x1="([-\d.]+)" y1="([-\d.]+)" x2="([-\d.]+)" y2="([-\d.]+)" stroke="#555555" stroke-width="[\d.]+" stroke-dasharray)svg");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(svg, match, dashed_line)) << svg;
  for (int i = 1; i <= 4; ++i) {
    const double value = std::stod(match[i].str());
    EXPECT_GE(value, 0);
    EXPECT_LE(value, chart.width);
  }
}

TEST(LineChart, SeriesOutsideAFixedRangeAreClippedNotScaledAway) {
  LineChart chart;
  LineSeries series;
  series.name = "overshoot";
  series.colour = "#000";
  series.points = {{0, 0}, {1, 500}, {2, 50}};
  chart.series.push_back(series);
  chart.y_min = 0;
  chart.y_max = 100;
  const std::string svg = render_line_chart(chart);
  expect_no_non_finite(svg);
  EXPECT_EQ(svg.find(">500<"), std::string::npos);
  // Two visible pieces: up to the top edge, and back down from it.
  const size_t path = svg.find(R"(<path class="series" d=")");
  ASSERT_NE(path, std::string::npos);
  const std::string d = svg.substr(path, svg.find('"', path + 25) - path);
  EXPECT_EQ(count_of(d, "M"), 2u) << d;
}

TEST(LineChart, EdgeCasesGiveFiniteOutput) {
  const std::vector<std::vector<ChartPoint>> cases = {
      {},                                              // no points
      {{3, 7}},                                        // one point
      {{0, 5}, {1, 5}, {2, 5}},                        // all equal
      {{-10, -50}, {0, -20}, {10, -70}},               // negative
      {{0, 1}, {1, std::nan("")}, {2, 3}, {3, 4}},     // a gap
      {{std::numeric_limits<double>::infinity(), 1}},  // nothing finite
      {{5, 5}, {5, 5}},                                // zero-length segment
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    LineChart chart;
    chart.title = "edge";
    LineSeries series;
    series.name = "s";
    series.colour = "#0072B2";
    series.points = cases[i];
    chart.series.push_back(series);
    const std::string svg = render_line_chart(chart);
    expect_one_svg_element(svg);
    expect_no_non_finite(svg);
    EXPECT_EQ(count_of(svg, R"(<path class="series")"), 1u);
  }
}

TEST(LineChart, LonePointIsDrawnAsADot) {
  LineChart chart;
  chart.series.push_back(LineSeries{"one", "#000", {{3, 7}}, ""});
  const std::string svg = render_line_chart(chart);
  EXPECT_NE(svg.find("l0 0"), std::string::npos) << svg;
  EXPECT_NE(svg.find(R"(stroke-linecap="round")"), std::string::npos);
}

TEST(LineChart, NoSeriesSaysNoData) {
  const std::string svg = render_line_chart(LineChart{});
  expect_one_svg_element(svg);
  expect_no_non_finite(svg);
  EXPECT_NE(svg.find("no data"), std::string::npos);
}

TEST(LineChart, NamesAreEscaped) {
  LineChart chart;
  chart.title = "a <b> & c";
  chart.series.push_back(LineSeries{R"(<script>&")", "#000", {{0, 0}, {1, 1}}, ""});
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;&amp;&quot;"), std::string::npos);
}

TEST(GroupedBarChart, OneBarPerSeriesAndCategory) {
  GroupedBarChart chart;
  chart.title = "failed";
  chart.y_label = "pods";
  chart.categories = {"CPU only", "GPU share (<0.5)", "1 GPU", "8 GPUs"};
  chart.series = {{"a", "#0072B2", {1, 2, 3, 4}}, {"b", "#D55E00", {0, 5, 10, 20}}, {"c", "#009E73", {7, 7, 7, 7}}};
  const std::string svg = render_grouped_bar_chart(chart);
  expect_one_svg_element(svg);
  expect_no_non_finite(svg);
  EXPECT_EQ(count_of(svg, R"(<rect class="bar")"), 12u);
  for (const char* category : {"CPU only", "1 GPU", "8 GPUs"}) EXPECT_NE(svg.find(category), std::string::npos);
  for (const char* name : {">a<", ">b<", ">c<"}) EXPECT_NE(svg.find(name), std::string::npos);
}

TEST(GroupedBarChart, NegativeMissingAndNonFiniteValues) {
  GroupedBarChart chart;
  chart.categories = {"x", "y", "z"};
  chart.series = {{"a", "#000", {-5, std::nan(""), 3}}, {"b", "#111", {2}}};  // b lacks y and z
  const std::string svg = render_grouped_bar_chart(chart);
  expect_no_non_finite(svg);
  EXPECT_EQ(count_of(svg, R"(<rect class="bar")"), 3u);
  EXPECT_NE(svg.find(">-"), std::string::npos);  // a negative tick: the axis reaches below zero
  EXPECT_EQ(svg.find(R"(height="-)"), std::string::npos);
}

TEST(GroupedBarChart, AllZeroAndEmpty) {
  GroupedBarChart zeros;
  zeros.categories = {"x"};
  zeros.series = {{"a", "#000", {0}}};
  expect_no_non_finite(render_grouped_bar_chart(zeros));
  const std::string empty = render_grouped_bar_chart(GroupedBarChart{});
  expect_one_svg_element(empty);
  expect_no_non_finite(empty);
  EXPECT_NE(empty.find("no data"), std::string::npos);
}

TEST(GroupedBarChart, LongCategoryLabelsAreWrappedOrTurned) {
  GroupedBarChart chart;
  chart.width = 400;
  for (int i = 0; i < 8; ++i) chart.categories.push_back("a rather long pod type name " + std::to_string(i));
  chart.series = {{"a", "#000", std::vector<double>(8, 1.0)}};
  const std::string svg = render_grouped_bar_chart(chart);
  EXPECT_NE(svg.find("rotate(-35)"), std::string::npos);
  chart.categories = {"GPU share (<0.5)", "GPU share (>=0.5)", "CPU only", "8 GPUs"};
  chart.series = {{"a", "#000", std::vector<double>(4, 1.0)}};
  chart.width = 560;
  const std::string wrapped = render_grouped_bar_chart(chart);
  EXPECT_EQ(wrapped.find("rotate(-35)"), std::string::npos);
  EXPECT_NE(wrapped.find("<tspan"), std::string::npos);
}

}  // namespace
}  // namespace tessera
