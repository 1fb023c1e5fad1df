#include "sim/html_report.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text_checks.h"
#include "topology_report_fixture.h"

namespace tessera {
namespace {

using testing::count_of;
using testing::has_non_finite_token;

namespace fs = std::filesystem;

constexpr const char* kHostileName = R"(evil<script>alert(1)</script>&"x")";

// The <svg> elements of a page, each from "<svg" to its "</svg>".
std::vector<std::string> svg_elements(const std::string& html) {
  std::vector<std::string> svgs;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 4)) {
    const size_t end = html.find("</svg>", at);
    if (end == std::string::npos) break;
    svgs.push_back(html.substr(at, end + 6 - at));
  }
  return svgs;
}

std::vector<ArrivalPoint> curve(double plateau) {
  std::vector<ArrivalPoint> points;
  for (int x = 0; x <= 130; ++x) {
    const double allocated = std::min<double>(x, plateau);
    points.push_back({double(x), allocated, 2 + 0.02 * x});
  }
  return points;
}

ArrivalReport arrival_report(const std::vector<std::string>& policies) {
  ArrivalReport report;
  report.scenario = "demo <scenario>";
  report.cluster_source = "builtin:nodes.csv";
  report.workload_source = "builtin:pods.csv";
  report.nodes = 100;
  report.gpus = 800;
  report.workload_pods = 5000;
  report.target_pct = 130;
  report.seeds = {1, 2, 3};
  for (size_t i = 0; i < policies.size(); ++i) {
    ArrivalPolicyResult policy;
    policy.policy = policies[i];
    policy.alloc_at_100_pct = 90 + static_cast<double>(i);
    policy.alloc_at_100_pct_stddev = 0.5;
    policy.alloc_at_100_pct_min = 89.5 + static_cast<double>(i);
    policy.alloc_at_100_pct_max = 90.5 + static_cast<double>(i);
    policy.frag_at_100_pct = 5 - static_cast<double>(i);
    policy.wall_seconds_median = 0.25;
    policy.mean_curve = curve(90 + static_cast<double>(i));
    policy.by_type = {{"CPU only", {300, 3}}, {"GPU share", {600, 30}}, {"1 GPU", {900, 90}}, {"8 GPUs", {30, 15}}};
    for (uint64_t seed : report.seeds) {
      ArrivalRun run;
      run.seed = seed;
      run.alloc_at_100_pct = policy.alloc_at_100_pct;
      run.pods_arrived = 610;
      run.pods_failed = 46;
      run.final_allocated_pct = 95;
      policy.runs.push_back(run);
    }
    report.policies.push_back(policy);
  }
  return report;
}

TimelineReport timeline_report(const std::vector<std::string>& policies, double span_seconds) {
  TimelineReport report;
  report.scenario = "timeline <demo>";
  report.cluster_source = "s.yaml";
  report.workload_source = "s.yaml";
  report.nodes = 4;
  report.gpus = 32;
  report.start_seconds = 1000;
  report.end_seconds = 1000 + span_seconds;
  for (size_t i = 0; i < policies.size(); ++i) {
    TimelinePolicyResult policy;
    policy.policy = policies[i];
    for (int k = 0; k <= 100; ++k) {
      const double t = report.start_seconds + span_seconds * k / 100;
      policy.series.push_back({t, 50 + 10 * std::sin(k / 10.0), 30, 20, 10 + k, 100 - k});
    }
    policy.mean_gpu_allocated_pct = 50 + static_cast<double>(i);
    policy.workloads = 200;
    policy.scheduled = 190 + static_cast<int64_t>(i);
    policy.never_scheduled = 10 - static_cast<int64_t>(i);
    policy.pending_seconds = {12, 600, 4000, 9000, 300};
    policy.by_type = {{"1 GPU", {150, 2}}, {"8 GPUs", {50, 8}}};
    policy.wall_seconds = 0.1;
    report.policies.push_back(policy);
  }
  return report;
}

// What every report page must be: one document, balanced charts, nothing fetched from outside,
// no script, no NaN.
void expect_self_contained_page(const std::string& html) {
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg"), count_of(html, "</svg>"));
  EXPECT_EQ(count_of(html, "<table"), count_of(html, "</table>"));
  EXPECT_EQ(count_of(html, "<figure>"), count_of(html, "</figure>"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_FALSE(has_non_finite_token(html));
}

// Each line chart draws one path per policy.
void expect_one_path_per_policy(const std::string& html, size_t policies, size_t min_line_charts) {
  size_t line_charts = 0;
  for (const std::string& svg : svg_elements(html)) {
    const size_t paths = count_of(svg, R"(<path class="series")");
    if (paths == 0) continue;
    ++line_charts;
    EXPECT_EQ(paths, policies);
  }
  EXPECT_GE(line_charts, min_line_charts);
}

TEST(ArrivalReportHtml, SelfContainedWithChartsForEveryPolicy) {
  const std::vector<std::string> policies = {"tessera", "fgd", "best-fit"};
  const std::string html = arrival_report_html(arrival_report(policies));
  expect_self_contained_page(html);
  for (const std::string& policy : policies) EXPECT_GE(count_of(html, policy), 4u) << policy;
  expect_one_path_per_policy(html, policies.size(), 2);
  EXPECT_GE(svg_elements(html).size(), 3u);  // allocation, fragmentation, failures
  EXPECT_NE(html.find("class=\"bar\""), std::string::npos);
  EXPECT_NE(html.find("ideal (y = x)"), std::string::npos);
  EXPECT_NE(html.find("How to read this"), std::string::npos);
  EXPECT_NE(html.find("demo &lt;scenario&gt;"), std::string::npos);
}

TEST(ArrivalReportHtml, HighlightsTheBestAllocation) {
  const std::string html = arrival_report_html(arrival_report({"low", "high"}));
  // "high" has the larger allocation (91%) and the smaller fragmentation.
  const size_t high_row = html.find("</span>high</td>");
  ASSERT_NE(high_row, std::string::npos);
  const std::string row = html.substr(high_row, html.find("</tr>", high_row) - high_row);
  EXPECT_NE(row.find(R"(<td class="best">91.00% ± 0.50</td>)"), std::string::npos) << row;
  EXPECT_NE(row.find(R"(<td class="best">4.00%</td>)"), std::string::npos) << row;
}

// "low" allocates 90%, "high" 91%: against an offline packing of 92% with "low" as fgd, "high"
// closes half of fgd's gap.
TEST(ArrivalReportHtml, StatesTheOfflineCeilingAndTheShareOfFgdsGapClosed) {
  ArrivalReport report = arrival_report({"fgd", "high"});
  report.policies[0].alloc_at_100_pct = 90;
  report.policies[1].alloc_at_100_pct = 91;
  EXPECT_EQ(arrival_report_html(report).find("Offline ceiling"), std::string::npos);  // none computed
  report.offline_alloc_pct = {91.5, 92.5};
  const std::string html = arrival_report_html(report);
  EXPECT_NE(html.find("allocate 92.00% of the GPU capacity"), std::string::npos);
  EXPECT_NE(html.find("closes: high: 50%."), std::string::npos);

  // Where the arrived pods ask more CPU than the cluster has, the offline packing's figure is
  // its choice of pods to serve: no share is given, and the page says why.
  report.offline_arrived_cpu_pct = {97.0, 149.0};
  report.offline_arrived_memory_pct = {80.0, 81.0};
  EXPECT_TRUE(offline_chooses_pods(report));
  EXPECT_FALSE(fgd_gap_closed(report, report.policies[1]).has_value());
  const std::string choosing = arrival_report_html(report);
  EXPECT_EQ(choosing.find("closes: high"), std::string::npos);
  EXPECT_NE(choosing.find("ask up to 149% of the cluster's CPU and 81% of its memory"), std::string::npos);
  report.offline_arrived_cpu_pct = {97.0, 99.0};
  EXPECT_FALSE(offline_chooses_pods(report));
  EXPECT_NE(arrival_report_html(report).find("closes: high: 50%."), std::string::npos);
}

TEST(ArrivalReportHtml, EscapesNamesFromInput) {
  ArrivalReport report = arrival_report({kHostileName, "fgd"});
  report.scenario = kHostileName;
  report.policies[0].by_type[kHostileName] = {5, 5};
  const std::string html = arrival_report_html(report);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find(R"(&"x")"), std::string::npos);
  EXPECT_NE(html.find("evil&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&quot;"), std::string::npos);
  expect_self_contained_page(html);
}

TEST(ArrivalReportHtml, ManyPodTypesGiveATableInsteadOfBars) {
  ArrivalReport report = arrival_report({"a", "b"});
  for (int i = 0; i < 20; ++i) report.policies[0].by_type[std::to_string(i + 9) + " GPUs"] = {10, 1};
  const std::string html = arrival_report_html(report);
  EXPECT_EQ(html.find("class=\"bar\""), std::string::npos);
  EXPECT_NE(html.find("28 GPUs"), std::string::npos);
  expect_self_contained_page(html);
}

TEST(ArrivalReportHtml, PodTypesInOrderOfDemand) {
  const std::string html = arrival_report_html(arrival_report({"a"}));
  const std::string table = html.substr(html.find("<table class=\"by-type\""));
  const size_t cpu = table.find(">CPU only<"), share = table.find(">GPU share<"), one = table.find(">1 GPU<"),
               eight = table.find(">8 GPUs<");
  ASSERT_NE(eight, std::string::npos);
  EXPECT_LT(cpu, share);
  EXPECT_LT(share, one);
  EXPECT_LT(one, eight);
}

TEST(ArrivalReportHtml, EmptyAndDegenerateReports) {
  expect_self_contained_page(arrival_report_html(ArrivalReport{}));
  ArrivalReport report = arrival_report({"only"});
  report.policies[0].mean_curve.clear();
  report.policies[0].runs.clear();
  report.policies[0].alloc_at_100_pct = NAN;
  const std::string html = arrival_report_html(report);
  expect_self_contained_page(html);
  EXPECT_NE(html.find("no data"), std::string::npos);
}

TEST(TimelineReportHtml, SelfContainedWithChartsForEveryPolicy) {
  const std::vector<std::string> policies = {"tessera", "fgd", "spread", "first-fit"};
  const std::string html = timeline_report_html(timeline_report(policies, 48 * 3600));
  expect_self_contained_page(html);
  for (const std::string& policy : policies) EXPECT_GE(count_of(html, policy), 4u) << policy;
  expect_one_path_per_policy(html, policies.size(), 3);  // GPU allocation, running, pending
  EXPECT_NE(html.find("time since the first arrival (h)"), std::string::npos);
  EXPECT_NE(html.find("pending<br>p99"), std::string::npos);
  EXPECT_NE(html.find("1.1 h"), std::string::npos);  // p99 = 4000 s
  EXPECT_NE(html.find("timeline &lt;demo&gt;"), std::string::npos);
}

TEST(TimelineReportHtml, ShortSpansUseMinutesOrSeconds) {
  EXPECT_NE(timeline_report_html(timeline_report({"a"}, 1800)).find("(min)"), std::string::npos);
  EXPECT_NE(timeline_report_html(timeline_report({"a"}, 90)).find("(s)"), std::string::npos);
}

TEST(TimelineReportHtml, EscapesNamesFromInput) {
  TimelineReport report = timeline_report({kHostileName}, 3600);
  report.cluster_source = kHostileName;
  const std::string html = timeline_report_html(report);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("evil&lt;script&gt;"), std::string::npos);
  expect_self_contained_page(html);
}

TEST(TimelineReportHtml, EmptyReport) { expect_self_contained_page(timeline_report_html(TimelineReport{})); }

// Two policies, each with topology off and under one rule.
TopologyReport topology_report(const std::string& policy_name) {
  return testing::topology_report_of(timeline_report({policy_name, "best-fit"}, 3600).policies);
}

TEST(TopologyReportHtml, ATableRowPerRunAndBarsPerPolicy) {
  const std::string html = topology_report_html(topology_report("tessera"));
  expect_self_contained_page(html);
  EXPECT_EQ(count_of(html, "<tr>"), 1u + 4u);  // the header and one row per run
  EXPECT_NE(html.find("in 1<br>rack"), std::string::npos);
  EXPECT_NE(html.find("87.5%"), std::string::npos);  // 7 of 8 gangs within one rack
  EXPECT_NE(html.find("37.5%"), std::string::npos);  // 3 of 8 with topology off
  EXPECT_NE(html.find("Multi-node gangs within one rack"), std::string::npos);
  EXPECT_NE(html.find("racks &lt;demo&gt;"), std::string::npos);
  EXPECT_EQ(svg_elements(html).size(), 3u);
}

TEST(TopologyReportHtml, EscapesNamesFromInput) {
  const std::string html = topology_report_html(topology_report(kHostileName));
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("evil&lt;script&gt;"), std::string::npos);
  expect_self_contained_page(html);
}

TEST(TopologyReportHtml, EmptyReport) { expect_self_contained_page(topology_report_html(TopologyReport{})); }

// A fresh directory under the system's temporary directory, removed at the end of the test.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tessera-report-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}

std::vector<std::string> entries(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteFileAtomically, WritesTheContentAndLeavesNoTemporaryFile) {
  ScratchDirectory scratch;
  const fs::path target = scratch.path() / "results.json";
  ASSERT_TRUE(write_file_atomically(target, "{\"a\": 1}\n").ok());
  EXPECT_EQ(read(target), "{\"a\": 1}\n");
  ASSERT_TRUE(write_file_atomically(target, "replaced").ok());
  EXPECT_EQ(read(target), "replaced");
  EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"results.json"});
}

TEST(WriteFileAtomically, WritesEmptyAndLargeContent) {
  ScratchDirectory scratch;
  ASSERT_TRUE(write_file_atomically(scratch.path() / "empty", "").ok());
  EXPECT_EQ(fs::file_size(scratch.path() / "empty"), 0u);
  const std::string large(5 << 20, 'x');
  ASSERT_TRUE(write_file_atomically(scratch.path() / "large", large).ok());
  EXPECT_EQ(fs::file_size(scratch.path() / "large"), large.size());
  EXPECT_EQ(entries(scratch.path()), (std::vector<std::string>{"empty", "large"}));
}

TEST(WriteFileAtomically, ErrorNamesThePathAndCreatesNothing) {
  ScratchDirectory scratch;
  const fs::path regular_file = scratch.path() / "not-a-directory";
  ASSERT_TRUE(write_file_atomically(regular_file, "data").ok());
  const fs::path impossible = regular_file / "out.json";
  const Status written = write_file_atomically(impossible, "content");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find(impossible.string()), std::string::npos) << written.error().message;
  EXPECT_NE(written.error().message.find("Not a directory"), std::string::npos) << written.error().message;
  EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"not-a-directory"});
  EXPECT_EQ(read(regular_file), "data");
}

TEST(WriteFileAtomically, ADirectoryInTheWayIsAnError) {
  ScratchDirectory scratch;
  fs::create_directory(scratch.path() / "taken");
  const Status written = write_file_atomically(scratch.path() / "taken", "content");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find("taken"), std::string::npos);
  EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"taken"});
}

TEST(WriteHtmlReport, CreatesTheDirectoryAndIndex) {
  ScratchDirectory scratch;
  const fs::path dir = scratch.path() / "nested" / "report";
  ASSERT_TRUE(write_html_report(dir, "<!DOCTYPE html>").ok());
  EXPECT_EQ(read(dir / "index.html"), "<!DOCTYPE html>");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"index.html"});
}

TEST(WriteHtmlReport, DirectoryUnderARegularFileIsAnError) {
  ScratchDirectory scratch;
  const fs::path regular_file = scratch.path() / "file";
  ASSERT_TRUE(write_file_atomically(regular_file, "x").ok());
  const Status written = write_html_report(regular_file / "report", "<html>");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find((regular_file / "report").string()), std::string::npos)
      << written.error().message;
  EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"file"});
}

}  // namespace
}  // namespace tessera
