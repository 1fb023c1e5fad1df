#include "sim/html_report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <system_error>
#include <tuple>
#include <vector>

#include "sim/json_report.h"
#include "sim/statistics.h"
#include "sim/svg_chart.h"

namespace tessera {

namespace {

constexpr int kChartWidth = 940;
constexpr int kChartHeight = 420;
// Past this many pod types a grouped bar chart is a comb of slivers; the table says it better.
constexpr size_t kMaxTypesInBarChart = 10;
constexpr std::string_view kMissing = "–";

// ---------------------------------------------------------------------------------------------
// Page frame

constexpr std::string_view kPageCss = R"css(
:root { color-scheme: light; }
body { margin: 0; background: #f3f4f6; color: #1f2328;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 32px 48px; background: #fff; }
h1 { font-size: 1.55rem; margin: 0 0 .3rem; line-height: 1.25; }
h2 { font-size: 1.15rem; margin: 2.2rem 0 .6rem; padding-bottom: .25rem; border-bottom: 1px solid #d8dbe0; }
p { margin: .4rem 0; }
.meta { color: #4b5563; margin: .15rem 0; }
.meta b { color: #1f2328; }
.sources { color: #6b7280; font-size: .85rem; word-break: break-all; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .92rem; font-variant-numeric: tabular-nums; }
th, td { padding: .36rem .6rem; border-bottom: 1px solid #e5e7eb; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #9ca3af; font-weight: 600; vertical-align: bottom; }
thead tr.group th { border-bottom: 1px solid #d1d5db; text-align: center; font-weight: 500; color: #4b5563;
                    font-size: .85rem; padding-bottom: .1rem; }
thead tr.group th:empty { border-bottom: none; }
td.best { background: #dff0e6; font-weight: 700; }
.swatch { display: inline-block; width: .85em; height: .85em; border-radius: 2px; margin-right: .45em;
          vertical-align: -.05em; }
.note { color: #4b5563; font-size: .9rem; }
table.by-type td { vertical-align: top; line-height: 1.25; }
table.by-type td .note { font-size: .8rem; }
figure { margin: 1.2rem 0 .4rem; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #4b5563; font-size: .9rem; margin-top: .3rem; }
.explain { background: #f5f7fa; border-left: 4px solid #0072B2; padding: .5rem 1rem; margin: 1rem 0; }
.explain dt { font-weight: 600; margin-top: .4rem; }
.explain dd { margin: 0 0 .2rem 0; }
footer { margin-top: 2.5rem; color: #6b7280; font-size: .8rem; }
h3 { font-size: 1rem; margin: 1.6rem 0 .4rem; }
.multiples { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: 0 16px; }
.multiples figure { margin: .6rem 0 .2rem; }
td.queue-name { padding-left: calc(.6rem + var(--depth, 0) * 1.2rem); }
tr.inner td { font-weight: 600; background: #f9fafb; }
td.message { white-space: normal; text-align: left; min-width: 24rem; }
@media print {
  body { background: #fff; font-size: 11pt; }
  td.best, .swatch { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  main { max-width: none; padding: 0; }
  figure, table, .explain { break-inside: avoid; }
  h2 { break-after: avoid; }
  .scroll { overflow: visible; }
}
)css";

std::string page_open(std::string_view title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
      escape_xml(title), kPageCss);
}

std::string page_close() {
  return fmt::format(
      "<footer>Written by <code>tessera sim</code>. The same results as JSON: <code>results.json</code>, schema "
      "<code>{}</code>.</footer>\n</main>\n</body>\n</html>\n",
      kSimJsonSchema);
}

// ---------------------------------------------------------------------------------------------
// Numbers as people read them

std::string format_number(double value, int decimals) {
  if (!std::isfinite(value)) return std::string(kMissing);
  if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // no "-0.0"
  return group_thousands(fmt::format("{:.{}f}", value, decimals));
}

// A mean of counts: a decimal where it tells something, none once the numbers are large.
std::string format_mean_count(double value) {
  return format_number(value, std::fabs(value) >= 10 || value == std::round(value) ? 0 : 1);
}

std::string format_count(int64_t value) { return group_thousands(fmt::format("{}", value)); }

std::string format_percent(double value, int decimals = 1) {
  if (!std::isfinite(value)) return std::string(kMissing);
  return format_number(value, decimals) + "%";
}

// A span of simulated time in the unit that keeps it short.
std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return std::string(kMissing);
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0) return "0 s";
  if (magnitude < 60) return fmt::format("{:.1f} s", seconds);
  if (magnitude < 3600) return fmt::format("{:.1f} min", seconds / 60);
  if (magnitude < 2 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} d", seconds / 86400);
}

std::string format_wall_time(double seconds) {
  if (!std::isfinite(seconds)) return std::string(kMissing);
  if (seconds < 0.0005) return "&lt;1 ms";  // HTML, like every format_* result (the others need no escaping)
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1000);
  return fmt::format("{:.2f} s", seconds);
}

// ---------------------------------------------------------------------------------------------
// Policies: colour, highlighting, table cells

std::string policy_colour(size_t index) { return std::string(palette_colour(index)); }

// Past the eight palette colours a colour repeats, so the repeat gets a dash pattern as well.
std::string policy_dash(size_t index) {
  static constexpr std::array<std::string_view, 4> kDashes = {"", "7 4", "2 3", "9 3 2 3"};
  return std::string(kDashes[(index / 8) % kDashes.size()]);
}

enum class Better { kHigher, kLower };

// Which of the values is best. Ties are judged as the reader sees them: every value that is
// shown (by `shown`) the same as the best one is highlighted too. Nothing is highlighted with fewer
// than two policies, or when all of them tie: there "best" says nothing.
template <typename Shown>
std::vector<bool> best_of(const std::vector<double>& values, Better better, Shown shown) {
  std::vector<bool> best(values.size(), false);
  if (values.size() < 2) return best;
  double target = better == Better::kHigher ? -INFINITY : INFINITY;
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    target = better == Better::kHigher ? std::max(target, value) : std::min(target, value);
  }
  if (!std::isfinite(target)) return best;
  const std::string target_text = shown(target);
  for (size_t i = 0; i < values.size(); ++i) best[i] = std::isfinite(values[i]) && shown(values[i]) == target_text;
  if (std::all_of(best.begin(), best.end(), [](bool b) { return b; })) return std::vector<bool>(values.size(), false);
  return best;
}

std::string shown_percent(double value) { return format_percent(value, 2); }

std::string cell(std::string_view html, bool best = false) {
  return fmt::format("<td{}>{}</td>", best ? " class=\"best\"" : "", html);
}

std::string policy_cell(std::string_view name, size_t index) {
  return fmt::format("<td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>", policy_colour(index),
                     escape_xml(name));
}

std::string figure(std::string_view svg, std::string_view caption_html) {
  return fmt::format("<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n", svg, caption_html);
}

// ---------------------------------------------------------------------------------------------
// Pod types and failures, shared by both reports

// "CPU only", then GPU shares, then whole GPUs by count, then anything else by name: the order of
// growing demand, rather than the map's alphabetical one, which puts "16 GPUs" before "2 GPUs".
std::tuple<int, long, std::string> type_order_key(const std::string& type) {
  if (type == "CPU only") return {0, 0, type};
  if (type.starts_with("GPU share")) return {1, 0, type};
  char* end = nullptr;
  const long gpus = std::strtol(type.c_str(), &end, 10);
  if (end != type.c_str() && std::string_view(end).starts_with(" GPU")) return {2, gpus, type};
  return {3, 0, type};
}

struct PolicyFailures {
  std::string policy;
  size_t colour_index = 0;
  const std::map<std::string, TypeCount>* by_type = nullptr;
  double divisor = 1;  // counts are shown per run: summed counts divided by the runs they cover
};

std::vector<std::string> ordered_types(const std::vector<PolicyFailures>& policies) {
  std::vector<std::string> types;
  for (const PolicyFailures& policy : policies) {
    for (const auto& [type, count] : *policy.by_type) {
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
    }
  }
  std::sort(types.begin(), types.end(),
            [](const std::string& a, const std::string& b) { return type_order_key(a) < type_order_key(b); });
  return types;
}

TypeCount count_of(const PolicyFailures& policy, const std::string& type) {
  const auto found = policy.by_type->find(type);
  return found == policy.by_type->end() ? TypeCount{} : found->second;
}

// One "arrived" column when every policy saw the same arrivals of each type (the replays give
// every policy the same workload, so this is the normal case); otherwise each cell says "of N".
bool same_arrivals_everywhere(const std::vector<PolicyFailures>& policies, const std::vector<std::string>& types) {
  for (const std::string& type : types) {
    for (const PolicyFailures& policy : policies) {
      const double per_run = static_cast<double>(count_of(policy, type).arrived) / policy.divisor;
      const double first_per_run =
          static_cast<double>(count_of(policies.front(), type).arrived) / policies.front().divisor;
      if (per_run != first_per_run) {
        return false;
      }
    }
  }
  return true;
}

// A count summed over `divisor` runs, shown per run.
std::string format_per_run(int64_t count, double divisor) {
  if (divisor > 1) return format_mean_count(static_cast<double>(count) / divisor);
  return format_count(count);
}

// The failed count over the share of arrivals it is, on a second line so that columns stay narrow.
std::string failed_cell_text(const TypeCount& count, double divisor, bool with_arrived) {
  std::string text = format_per_run(count.failed, divisor);
  if (with_arrived) text += " of " + format_per_run(count.arrived, divisor);
  if (count.arrived > 0) {
    text += fmt::format("<br><span class=\"note\">{}</span>",
                        format_percent(100.0 * static_cast<double>(count.failed) / static_cast<double>(count.arrived)));
  }
  return text;
}

std::string failures_table(const std::vector<PolicyFailures>& policies, const std::vector<std::string>& types,
                           std::string_view arrived_header) {
  const bool one_arrived_column = same_arrivals_everywhere(policies, types);
  std::string out = "<div class=\"scroll\"><table class=\"by-type\">\n<thead><tr><th>pod type</th>";
  if (one_arrived_column) out += fmt::format("<th>{}</th>", arrived_header);
  for (const PolicyFailures& policy : policies) {
    out += fmt::format("<th><span class=\"swatch\" style=\"background:{}\"></span>{}</th>",
                       policy_colour(policy.colour_index), escape_xml(policy.policy));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const std::string& type : types) {
    out += "<tr>" + cell(escape_xml(type));
    const PolicyFailures& first = policies.front();
    if (one_arrived_column) out += cell(format_per_run(count_of(first, type).arrived, first.divisor));
    std::vector<double> failed;
    failed.reserve(policies.size());
    for (const PolicyFailures& policy : policies) {
      failed.push_back(static_cast<double>(count_of(policy, type).failed) / policy.divisor);
    }
    const std::vector<bool> best = best_of(failed, Better::kLower, format_mean_count);
    for (size_t p = 0; p < policies.size(); ++p) {
      out += cell(failed_cell_text(count_of(policies[p], type), policies[p].divisor, !one_arrived_column), best[p]);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

std::string failures_chart(const std::vector<PolicyFailures>& policies, const std::vector<std::string>& types,
                           std::string title, std::string y_label) {
  GroupedBarChart chart;
  chart.title = std::move(title);
  chart.y_label = std::move(y_label);
  chart.categories = types;
  chart.width = kChartWidth;
  chart.height = 360;
  for (const PolicyFailures& policy : policies) {
    BarSeries series;
    series.name = policy.policy;
    series.colour = policy_colour(policy.colour_index);
    for (const std::string& type : types)
      series.values.push_back(static_cast<double>(count_of(policy, type).failed) / policy.divisor);
    chart.series.push_back(std::move(series));
  }
  return render_grouped_bar_chart(chart);
}

bool any_failed(const std::vector<PolicyFailures>& policies) {
  for (const PolicyFailures& policy : policies) {
    for (const auto& [type, count] : *policy.by_type) {
      if (count.failed > 0) return true;
    }
  }
  return false;
}

struct FailuresText {
  std::string none_failed;  // said instead of a chart of zeros
  std::string chart_title;
  std::string y_label;
  std::string arrived_header;
  std::string caption;
};

std::string failures_section(const std::vector<PolicyFailures>& policies, const FailuresText& text) {
  const std::vector<std::string> types = policies.empty() ? std::vector<std::string>{} : ordered_types(policies);
  if (types.empty()) return "<p class=\"note\">No pods were recorded by type.</p>\n";
  if (!any_failed(policies)) return fmt::format("<p>{}</p>\n", text.none_failed);
  std::string out;
  if (types.size() <= kMaxTypesInBarChart) {
    out += figure(failures_chart(policies, types, text.chart_title, text.y_label), text.caption);
  } else {
    out += fmt::format("<p class=\"note\">{} ({} pod types: a table instead of a chart.)</p>\n", text.caption,
                       types.size());
  }
  out += failures_table(policies, types, text.arrived_header);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Line charts with one line per policy

LineChart report_chart(std::string title, std::string x_label, std::string y_label) {
  LineChart chart;
  chart.title = std::move(title);
  chart.x_label = std::move(x_label);
  chart.y_label = std::move(y_label);
  chart.width = kChartWidth;
  chart.height = kChartHeight;
  return chart;
}

LineSeries policy_series(const std::string& policy, size_t index) {
  LineSeries series;
  series.name = policy;
  series.colour = policy_colour(index);
  series.dash = policy_dash(index);
  return series;
}

// Marks where the arrived workload equals the capacity: where the headline numbers are read.
ReferenceLine full_capacity_marker() {
  ReferenceLine marker = ReferenceLine::vertical(100, "100% of capacity arrived");
  marker.colour = "#9ca3af";
  marker.dash = "2 3";
  return marker;
}

// ---------------------------------------------------------------------------------------------
// The arrival report

template <typename Value>
double mean_over_runs(const ArrivalPolicyResult& policy, Value value_of) {
  if (policy.runs.empty()) return NAN;
  double sum = 0;
  for (const ArrivalRun& run : policy.runs) sum += value_of(run);
  return sum / static_cast<double>(policy.runs.size());
}

std::string arrival_header(const ArrivalReport& report) {
  std::string seeds;
  for (size_t i = 0; i < report.seeds.size(); ++i) seeds += (i ? ", " : "") + fmt::format("{}", report.seeds[i]);
  std::string out = fmt::format("<h1>GPU allocation as workload arrives: {}</h1>\n", escape_xml(report.scenario));
  out += fmt::format(
      "<p class=\"meta\"><b>{}</b> nodes, <b>{}</b> GPUs. Pods drawn at random from a population of <b>{}</b> until "
      "the "
      "arrived GPU requests reach <b>{}</b> of the GPU capacity; {} {} ({}); {} {}.</p>\n",
      format_count(report.nodes), format_count(report.gpus), format_count(report.workload_pods),
      format_percent(report.target_pct, 0), report.seeds.size(), report.seeds.size() == 1 ? "seed" : "seeds", seeds,
      report.policies.size(), report.policies.size() == 1 ? "policy" : "policies");
  out += fmt::format("<p class=\"sources\">cluster: {}<br>workload: {}</p>\n", escape_xml(report.cluster_source),
                     escape_xml(report.workload_source));
  return out;
}

std::string arrival_headline_table(const ArrivalReport& report) {
  std::vector<double> alloc, frag, final_alloc, failed, wall;
  for (const ArrivalPolicyResult& policy : report.policies) {
    alloc.push_back(policy.alloc_at_100_pct);
    frag.push_back(policy.frag_at_100_pct);
    final_alloc.push_back(mean_over_runs(policy, [](const ArrivalRun& run) { return run.final_allocated_pct; }));
    failed.push_back(
        mean_over_runs(policy, [](const ArrivalRun& run) { return static_cast<double>(run.pods_failed); }));
    wall.push_back(policy.wall_seconds_median);
  }
  const std::vector<bool> best_alloc = best_of(alloc, Better::kHigher, shown_percent);
  const std::vector<bool> best_frag = best_of(frag, Better::kLower, shown_percent);
  const std::vector<bool> best_final = best_of(final_alloc, Better::kHigher, shown_percent);
  const std::vector<bool> best_failed = best_of(failed, Better::kLower, format_mean_count);
  const std::vector<bool> best_wall = best_of(wall, Better::kLower, format_wall_time);

  std::string out = fmt::format(
      "<div class=\"scroll\"><table>\n<thead>"
      "<tr class=\"group\"><th></th><th colspan=\"3\">when 100% of capacity has arrived</th>"
      "<th colspan=\"2\">at the end ({} arrived)</th><th></th></tr>\n"
      "<tr><th>policy</th><th>GPU allocation<br>mean ± stddev</th><th>GPU allocation<br>min – max</th>"
      "<th>fragmentation<br>mean</th><th>GPU allocation<br>mean</th><th>failed pods<br>per run</th>"
      "<th>wall time<br>per run</th></tr></thead>\n<tbody>\n",
      format_percent(report.target_pct, 0));
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const ArrivalPolicyResult& policy = report.policies[i];
    const double arrived =
        mean_over_runs(policy, [](const ArrivalRun& run) { return static_cast<double>(run.pods_arrived); });
    std::string failed_text = format_mean_count(failed[i]);
    if (arrived > 0)
      failed_text += fmt::format(" <span class=\"note\">({})</span>", format_percent(100 * failed[i] / arrived));
    out += "<tr>" + policy_cell(policy.policy, i);
    out += cell(fmt::format("{} ± {}", format_percent(policy.alloc_at_100_pct, 2),
                            format_number(policy.alloc_at_100_pct_stddev, 2)),
                best_alloc[i]);
    out += cell(fmt::format("{} – {}", format_percent(policy.alloc_at_100_pct_min, 2),
                            format_percent(policy.alloc_at_100_pct_max, 2)));
    out += cell(format_percent(policy.frag_at_100_pct, 2), best_frag[i]);
    out += cell(format_percent(final_alloc[i], 2), best_final[i]);
    out += cell(failed_text, best_failed[i]);
    out += cell(format_wall_time(policy.wall_seconds_median), best_wall[i]);
    out += "</tr>\n";
  }
  out += fmt::format(
      "</tbody></table></div>\n<p class=\"note\">Best value of each column highlighted. Percentages are of the "
      "cluster's GPU capacity; means and spreads are over the {} {}. Failed pods: mean per run, in brackets as a share "
      "of the pods that arrived.</p>\n",
      report.seeds.size(), report.seeds.size() == 1 ? "seed" : "seeds");
  if (!report.offline_alloc_pct.empty()) {
    std::string closed;
    for (const ArrivalPolicyResult& policy : report.policies) {
      if (const std::optional<double> share = fgd_gap_closed(report, policy); share && policy.policy != "fgd") {
        closed += fmt::format("{}{}: {}", closed.empty() ? "" : "; ", escape_xml(policy.policy),
                              format_percent(100 * *share, 0));
      }
    }
    const ArrivedAsk asked = most_asked(report);
    const std::string chooses =
        offline_chooses_pods(report)
            ? fmt::format(
                  " The arrived pods ask up to {} of the cluster's CPU and {} of its memory: some must fail whatever "
                  "the placement, and the offline packing, serving the largest GPU requests first, chooses which. "
                  "Its figure measures that choice, not the packing, so no share of fgd's gap to it is given.",
                  format_percent(asked.cpu_pct, 0), format_percent(asked.memory_pct, 0))
            : "";
    out += fmt::format(
        "<p class=\"note\">Offline ceiling: the same arrived pods, packed knowing them all in advance (largest "
        "first; fractional pods a device at a time), allocate {} of the GPU capacity (mean over the seeds).{}{}</p>\n",
        format_percent(mean(report.offline_alloc_pct), 2),
        closed.empty() ? "" : fmt::format(" Share of fgd's gap to it that each policy closes: {}.", closed), chooses);
  }
  return out;
}

std::string arrival_how_to_read() {
  return R"html(<div class="explain">
<p><b>How to read this.</b> Pods arrive one at a time and never leave; each is placed by the policy or fails. The x axis
of the charts is the arrived workload: the GPUs requested by all pods so far, as a share of the cluster's GPU
capacity. Past 100% the cluster cannot hold everything, so failures there are expected.</p>
<dl>
<dt>GPU allocation ratio</dt><dd>allocated GPUs ÷ GPU capacity. On the dashed line <i>y = x</i> every arrived GPU
request is placed; the gap below it is requests that failed. The headline number is read where the arrived workload
first reaches 100%.</dd>
<dt>Fragmentation</dt><dd>as defined in the FGD paper (Weng et al., USENIX ATC'23): the free GPU capacity that the
expected workload mix cannot use — on a node where a pod type does not fit at all, all its free GPUs; otherwise the
devices with less free than the type needs — weighted by each type's share of the workload, as % of capacity.
Lower is better: fragmented capacity is free but wasted.</dd>
<dt>Failed pods</dt><dd>pods no node could take when they arrived, per run (mean over the seeds).</dd>
</dl>
</div>
)html";
}

// Allocation against arrived workload, one line per policy, with the ideal y = x and a marker at
// 100% arrived; the full and the zoomed chart differ only in title and ranges.
LineChart arrival_allocation_curves(const ArrivalReport& report, std::string title) {
  LineChart chart =
      report_chart(std::move(title), "arrived workload (% of GPU capacity)", "GPU allocation ratio (% of capacity)");
  for (size_t i = 0; i < report.policies.size(); ++i) {
    LineSeries series = policy_series(report.policies[i].policy, i);
    for (const ArrivalPoint& point : report.policies[i].mean_curve)
      series.points.push_back({point.arrived_pct, point.allocated_pct});
    chart.series.push_back(std::move(series));
  }
  ReferenceLine ideal;
  ideal.label = "ideal (y = x)";
  ideal.from = {0, 0};
  ideal.to = {1e6, 1e6};  // clipped to the plot
  chart.reference_lines.push_back(std::move(ideal));
  chart.reference_lines.push_back(full_capacity_marker());
  return chart;
}

std::string arrival_allocation_chart(const ArrivalReport& report, double x_max) {
  LineChart chart = arrival_allocation_curves(report, "GPU allocation ratio vs arrived workload");
  chart.x_min = 0;
  chart.x_max = x_max;
  chart.y_min = 0;
  chart.y_max = 100;
  return render_line_chart(chart);
}

// The same curves over the last stretch of arrivals, with the y axis fitted to them: on the full
// chart the policies differ by a few percent at the top right, which is where the comparison is.
// The stretch starts at 80% of capacity (or 30 points before the end, when arrivals stop early).
std::optional<std::string> arrival_allocation_zoom_chart(const ArrivalReport& report, double x_max) {
  if (report.policies.size() < 2) return std::nullopt;
  const double x_min = std::floor(std::min(80.0, x_max - 30) / 10) * 10;
  if (x_min <= 0) return std::nullopt;  // the full chart already is the zoom
  LineChart chart = arrival_allocation_curves(report, fmt::format("Zoom: arrived workload from {:.0f}%", x_min));
  chart.x_min = x_min;
  chart.x_max = x_max;
  return render_line_chart(chart);
}

std::string arrival_fragmentation_chart(const ArrivalReport& report, double x_max) {
  LineChart chart = report_chart("Fragmentation vs arrived workload", "arrived workload (% of GPU capacity)",
                                 "fragmentation (% of capacity)");
  for (size_t i = 0; i < report.policies.size(); ++i) {
    LineSeries series = policy_series(report.policies[i].policy, i);
    for (const ArrivalPoint& point : report.policies[i].mean_curve) {
      series.points.push_back({point.arrived_pct, point.fragmentation_pct});
    }
    chart.series.push_back(std::move(series));
  }
  chart.reference_lines.push_back(full_capacity_marker());
  chart.x_min = 0;
  chart.x_max = x_max;
  chart.y_min = 0;
  return render_line_chart(chart);
}

// The x axis ends at the target, or at the last point when a curve went past it.
double arrival_x_max(const ArrivalReport& report) {
  double x_max = std::isfinite(report.target_pct) && report.target_pct > 0 ? report.target_pct : 100;
  for (const ArrivalPolicyResult& policy : report.policies) {
    for (const ArrivalPoint& point : policy.mean_curve) {
      if (std::isfinite(point.arrived_pct)) x_max = std::max(x_max, point.arrived_pct);
    }
  }
  return x_max;
}

std::vector<PolicyFailures> arrival_failures(const ArrivalReport& report) {
  std::vector<PolicyFailures> failures;
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const ArrivalPolicyResult& policy = report.policies[i];
    failures.push_back(
        {policy.policy, i, &policy.by_type, static_cast<double>(std::max<size_t>(policy.runs.size(), 1))});
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------
// The timeline report

struct TimeUnit {
  double seconds;
  std::string_view name;
};

// Hours once the span exceeds a few hours, days past a couple of weeks.
TimeUnit time_unit_for_span(double span_seconds) {
  if (!std::isfinite(span_seconds) || span_seconds <= 3 * 60) return {1, "s"};
  if (span_seconds <= 3 * 3600) return {60, "min"};
  if (span_seconds <= 14 * 86400) return {3600, "h"};
  return {86400, "days"};
}

std::string timeline_header(const TimelineReport& report) {
  std::string out = fmt::format("<h1>Timeline replay: {}</h1>\n", escape_xml(report.scenario));
  const int64_t workloads = report.policies.empty() ? 0 : report.policies.front().workloads;
  out += fmt::format(
      "<p class=\"meta\"><b>{}</b> nodes, <b>{}</b> GPUs. <b>{}</b> workloads arrive over <b>{}</b> of simulated time "
      "and leave when they finish; {} {}.</p>\n",
      format_count(report.nodes), format_count(report.gpus), format_count(workloads),
      format_duration(report.end_seconds - report.start_seconds), report.policies.size(),
      report.policies.size() == 1 ? "policy" : "policies");
  if (report.replay == "cycle") {
    out += fmt::format(
        "<p class=\"meta\">Workloads wait in their queues; the scheduling cycle (fair share, then allocate, "
        "consolidate, reclaim and preempt) runs every <b>{}</b>. An evicted workload goes back to its queue and "
        "loses the work since its last checkpoint.</p>\n",
        format_duration(report.cycle_interval_seconds));
  }
  out += fmt::format("<p class=\"sources\">cluster: {}<br>workload: {}</p>\n", escape_xml(report.cluster_source),
                     escape_xml(report.workload_source));
  return out;
}

std::string timeline_headline_table(const TimelineReport& report) {
  std::vector<double> alloc, never, p50, p90, p99, max, mean, wall;
  for (const TimelinePolicyResult& policy : report.policies) {
    alloc.push_back(policy.mean_gpu_allocated_pct);
    never.push_back(static_cast<double>(policy.never_scheduled));
    p50.push_back(policy.pending_seconds.p50);
    p90.push_back(policy.pending_seconds.p90);
    p99.push_back(policy.pending_seconds.p99);
    max.push_back(policy.pending_seconds.max);
    mean.push_back(policy.pending_seconds.mean);
    wall.push_back(policy.wall_seconds);
  }
  const auto best_alloc = best_of(alloc, Better::kHigher, shown_percent);
  const auto best_never = best_of(never, Better::kLower, format_mean_count);
  const std::array<std::pair<const std::vector<double>*, std::vector<bool>>, 5> pending = {{
      {&p50, best_of(p50, Better::kLower, format_duration)},
      {&p90, best_of(p90, Better::kLower, format_duration)},
      {&p99, best_of(p99, Better::kLower, format_duration)},
      {&max, best_of(max, Better::kLower, format_duration)},
      {&mean, best_of(mean, Better::kLower, format_duration)},
  }};
  const auto best_wall = best_of(wall, Better::kLower, format_wall_time);

  std::string out =
      "<div class=\"scroll\"><table>\n<thead><tr><th>policy</th><th>mean GPU<br>allocation</th>"
      "<th>scheduled</th><th>never<br>scheduled</th><th>pending<br>p50</th><th>pending<br>p90</th>"
      "<th>pending<br>p99</th><th>pending<br>max</th><th>pending<br>mean</th><th>wall "
      "time</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const TimelinePolicyResult& policy = report.policies[i];
    out += "<tr>" + policy_cell(policy.policy, i);
    out += cell(format_percent(policy.mean_gpu_allocated_pct, 2), best_alloc[i]);
    out += cell(fmt::format("{} <span class=\"note\">of {}</span>", format_count(policy.scheduled),
                            format_count(policy.workloads)));
    out += cell(format_count(policy.never_scheduled), best_never[i]);
    for (const auto& [values, best] : pending) out += cell(format_duration((*values)[i]), best[i]);
    out += cell(format_wall_time(policy.wall_seconds), best_wall[i]);
    out += "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"note\">Best value of each column highlighted. Mean GPU allocation is "
      "time-weighted, as % of GPU capacity. Pending time runs from a workload's arrival to its start, over the "
      "workloads that started: a policy that never starts the hard ones can look fast here, so read it with "
      "the <i>never scheduled</i> column.</p>\n";
  return out;
}

// The allocation axis shows the whole capacity, unless the allocation stays so low that its line
// would lie flat on the floor of the chart; then it fits the data.
std::optional<double> gpu_axis_end(const TimelineReport& report) {
  double highest = 0;
  for (const TimelinePolicyResult& policy : report.policies) {
    for (const TimelinePoint& point : policy.series) {
      if (std::isfinite(point.gpu_allocated_pct)) highest = std::max(highest, point.gpu_allocated_pct);
    }
  }
  return highest >= 40 ? std::optional<double>(100) : std::nullopt;
}

template <typename Value>
std::string timeline_chart(const TimelineReport& report, std::string title, std::string y_label,
                           std::optional<double> y_max, Value value_of) {
  const TimeUnit unit = time_unit_for_span(report.end_seconds - report.start_seconds);
  LineChart chart =
      report_chart(std::move(title), fmt::format("time since the first arrival ({})", unit.name), std::move(y_label));
  for (size_t i = 0; i < report.policies.size(); ++i) {
    LineSeries series = policy_series(report.policies[i].policy, i);
    for (const TimelinePoint& point : report.policies[i].series) {
      series.points.push_back({(point.time_seconds - report.start_seconds) / unit.seconds, value_of(point)});
    }
    chart.series.push_back(std::move(series));
  }
  chart.x_min = 0;
  const double span = (report.end_seconds - report.start_seconds) / unit.seconds;
  if (std::isfinite(span) && span > 0) chart.x_max = span;
  chart.y_min = 0;
  chart.y_max = y_max;
  return render_line_chart(chart);
}

std::vector<PolicyFailures> timeline_failures(const TimelineReport& report) {
  std::vector<PolicyFailures> failures;
  for (size_t i = 0; i < report.policies.size(); ++i) {
    failures.push_back({report.policies[i].policy, i, &report.policies[i].by_type, 1});
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------
// The scheduling cycle: queues, churn and pending reasons

constexpr int kMultipleWidth = 500;
constexpr int kMultipleHeight = 300;
// Up to this many queues in all, every queue gets a chart; past it only the top-level ones do (an
// organisation's departments), and the table covers the rest.
constexpr size_t kMaxQueueCharts = 12;

bool is_cycle_replay(const TimelineReport& report) {
  return std::any_of(report.policies.begin(), report.policies.end(),
                     [](const TimelinePolicyResult& policy) { return policy.cycle.has_value(); });
}

std::string queue_chart(const TimelineReport& report, const QueueResult& queue) {
  const TimeUnit unit = time_unit_for_span(report.end_seconds - report.start_seconds);
  LineChart chart = report_chart(fmt::format("{}{}", queue.name, queue.leaf ? "" : " (all its queues)"),
                                 fmt::format("time since the first arrival ({})", unit.name), "GPUs");
  chart.width = kMultipleWidth;
  chart.height = kMultipleHeight;
  struct Line {
    const char* name;
    std::string colour;
    const char* dash;
    double QueuePoint::*value;
  };
  const Line lines[] = {{"allocated", std::string(palette_colour(0)), "", &QueuePoint::allocated_gpus},
                        {"fair share", std::string(palette_colour(1)), "7 4", &QueuePoint::fair_share_gpus},
                        {"deserved", "#555555", "2 3", &QueuePoint::deserved_gpus},
                        {"demand", std::string(palette_colour(2)), "9 3 2 3", &QueuePoint::demand_gpus}};
  for (const Line& line : lines) {
    LineSeries series;
    series.name = line.name;
    series.colour = line.colour;
    series.dash = line.dash;
    for (const QueuePoint& point : queue.series) {
      series.points.push_back({(point.time_seconds - report.start_seconds) / unit.seconds, point.*line.value});
    }
    chart.series.push_back(std::move(series));
  }
  chart.x_min = 0;
  const double span = (report.end_seconds - report.start_seconds) / unit.seconds;
  if (std::isfinite(span) && span > 0) chart.x_max = span;
  chart.y_min = 0;
  return render_line_chart(chart);
}

std::string queue_charts(const TimelineReport& report, const CycleReplayResult& cycle) {
  std::string out = "<div class=\"multiples\">\n";
  const bool all = cycle.queues.size() <= kMaxQueueCharts;
  for (const QueueResult& queue : cycle.queues) {
    if (!all && queue.depth > 0) continue;
    out +=
        figure(queue_chart(report, queue),
               fmt::format("{}: deserved {} GPUs{}; mean allocation {} against a mean fair share of {} GPUs.",
                           escape_xml(queue.name), format_number(queue.deserved_gpus, 1),
                           queue.limit_gpus >= 0 ? fmt::format(", limit {}", format_number(queue.limit_gpus, 1))
                                                 : std::string(),
                           format_number(queue.mean_allocated_gpus, 2), format_number(queue.mean_fair_share_gpus, 2)));
  }
  out += "</div>\n";
  if (!all) {
    out += fmt::format(
        "<p class=\"note\">{} queues: charts for the top-level ones (each the sum of its queues); every queue is "
        "in the table below.</p>\n",
        cycle.queues.size());
  }
  return out;
}

std::string time_to_deserved_cell(const StarvationSummary& starvation, double seconds, double cycles) {
  if (starvation.resolved == 0) return std::string(kMissing);
  return fmt::format("{} <span class=\"note\">{} {}</span>", format_duration(seconds), format_number(cycles, 0),
                     cycles == 1 ? "cycle" : "cycles");
}

std::string queue_table(const CycleReplayResult& cycle) {
  std::string out =
      "<div class=\"scroll\"><table>\n<thead><tr class=\"group\"><th></th><th colspan=\"3\">GPUs (time "
      "average)</th><th></th><th colspan=\"4\">starvation</th><th colspan=\"2\">evictions</th><th "
      "colspan=\"2\">wait</th><th colspan=\"2\">completion time</th></tr>\n"
      "<tr><th>queue</th><th>deserved</th><th>allocated</th><th>fair share</th><th>fairness<br>gap</th>"
      "<th>episodes</th><th>to deserved<br>median</th><th>to deserved<br>max</th><th>open at<br>the end</th>"
      "<th>workloads</th><th>GPU-hours<br>lost</th><th>p50</th><th>p90</th><th>p50</th><th>p90</th></tr></thead>\n"
      "<tbody>\n";
  for (const QueueResult& queue : cycle.queues) {
    out += queue.leaf ? "<tr>" : "<tr class=\"inner\">";
    out += fmt::format("<td class=\"queue-name\" style=\"--depth:{}\">{}</td>", queue.depth, escape_xml(queue.name));
    out += cell(format_number(queue.deserved_gpus, 1));
    out += cell(format_number(queue.mean_allocated_gpus, 2));
    out += cell(format_number(queue.mean_fair_share_gpus, 2));
    out += cell(queue.mean_fair_share_gpus > 0 ? format_percent(queue.fairness_gap_pct) : std::string(kMissing));
    const StarvationSummary& starvation = queue.starvation;
    out += cell(format_count(starvation.episodes));
    out += cell(time_to_deserved_cell(starvation, starvation.median_seconds, starvation.median_cycles));
    out += cell(time_to_deserved_cell(starvation, starvation.max_seconds, starvation.max_cycles));
    out += cell(starvation.episodes > starvation.resolved ? format_duration(starvation.longest_open_seconds)
                                                          : std::string(kMissing));
    out += cell(format_count(queue.evictions));
    out += cell(format_number(queue.lost_gpu_hours, 2));
    out += cell(queue.scheduled > 0 ? format_duration(queue.wait_seconds.p50) : std::string(kMissing));
    out += cell(queue.scheduled > 0 ? format_duration(queue.wait_seconds.p90) : std::string(kMissing));
    out += cell(queue.completed > 0 ? format_duration(queue.jct_seconds.p50) : std::string(kMissing));
    out += cell(queue.completed > 0 ? format_duration(queue.jct_seconds.p90) : std::string(kMissing));
    out += "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"note\">Inner queues (shaded) sum their queues. <i>Fairness gap</i>: the "
      "time-averaged |allocated &minus; fair share| as % of the time-averaged fair share, over the time the fair "
      "share is positive. <i>Starvation</i>: the queue is owed GPUs — a pending gang of it would fit within the "
      "deserved quota (of what it asks for) of every queue on the gang's path; an episode runs from the arrival or "
      "completion that caused it to the end of the cycle after which it is owed nothing. <i>Open at the end</i>: the "
      "longest episode still running when the replay "
      "stopped. Evictions count this queue's workloads taken off their nodes (moves included); GPU-hours lost are "
      "the work since each one's last checkpoint.</p>\n";
  return out;
}

std::string churn_table(const TimelineReport& report) {
  std::string out =
      "<div class=\"scroll\"><table>\n<thead><tr><th>policy</th><th>action</th><th>started</th>"
      "<th>workloads<br>evicted</th><th>of which<br>moved</th><th>elastic<br>extras</th><th>evicted<br>GPUs</th>"
      "<th>GPU-hours<br>lost</th><th>per 1,000<br>scheduled</th><th>eviction<br>groups</th>"
      "<th>max evicted /<br>needed GPUs</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const TimelinePolicyResult& policy = report.policies[i];
    if (!policy.cycle) continue;
    const ChurnSummary& churn = policy.cycle->churn;
    for (const ActionChurn& action : churn.by_action) {
      out += "<tr>" + policy_cell(policy.policy, i) + cell(escape_xml(action.action));
      out += cell(format_count(action.starts));
      out += cell(format_count(action.whole_workloads));
      out += cell(format_count(action.moved));
      out += cell(format_count(action.extras));
      out += cell(format_number(action.evicted_gpus, 1));
      out += cell(format_number(action.lost_gpu_hours, 2));
      out += cell(format_number(action.per_1000_scheduled, 1));
      out += cell(format_count(action.groups));
      out += cell(action.groups > 0 ? format_number(action.max_evicted_to_needed, 2) : std::string(kMissing));
      out += "</tr>\n";
    }
    int64_t starts = 0, moved = 0, extras = 0, groups = 0;
    double evicted = 0;
    for (const ActionChurn& action : churn.by_action) {
      starts += action.starts;
      moved += action.moved;
      extras += action.extras;
      groups += action.groups;
      evicted += action.evicted_gpus;
    }
    out += "<tr class=\"inner\">" + policy_cell(policy.policy, i) + cell("all");
    out += cell(format_count(starts)) + cell(format_count(churn.whole_workloads)) + cell(format_count(moved)) +
           cell(format_count(extras)) + cell(format_number(evicted, 1)) + cell(format_number(churn.lost_gpu_hours, 2)) +
           cell(format_number(churn.per_1000_scheduled, 1)) + cell(format_count(groups)) +
           cell(groups > 0 ? format_number(churn.max_evicted_to_needed, 2) : std::string(kMissing));
    out += "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"note\">An eviction group is the evictions of one cycle made for one "
      "pending workload; <i>max evicted / needed</i> compares the GPUs they freed with the GPUs that workload's gang "
      "asks for. A moved workload restarts from its last checkpoint in its new place.</p>\n";
  for (const TimelinePolicyResult& policy : report.policies) {
    if (!policy.cycle || policy.cycle->churn.worst_group.ratio <= 0) continue;
    const EvictionGroup& group = policy.cycle->churn.worst_group;
    out += fmt::format(
        "<p class=\"note\">{}: the largest group, at {}, evicted {} {} holding {} GPUs ({}) for <b>{}</b> of queue "
        "{}, which needs {} GPUs.</p>\n",
        escape_xml(policy.policy), format_duration(group.time_seconds - report.start_seconds),
        format_count(group.victims), group.victims == 1 ? "workload" : "workloads",
        format_number(group.evicted_gpus, 1), escape_xml(group.action), escape_xml(group.beneficiary),
        escape_xml(group.queue), format_number(group.needed_gpus, 1));
  }
  return out;
}

std::string pending_reasons_section(const TimelinePolicyResult& policy) {
  const CycleReplayResult& cycle = *policy.cycle;
  if (cycle.pending_by_code.empty()) return "<p>No workload was pending at the end of the replay.</p>\n";
  std::string out =
      "<div class=\"scroll\"><table>\n<thead><tr><th>reason</th><th>workloads</th></tr></thead>\n<tbody>\n";
  for (const auto& [code, count] : cycle.pending_by_code) {
    out += "<tr>" + cell(escape_xml(code)) + cell(format_count(count)) + "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  out +=
      "<div class=\"scroll\"><table>\n<thead><tr><th>workload</th><th>queue</th><th>reason</th><th>pending "
      "for</th><th>why</th></tr></thead>\n<tbody>\n";
  for (const PendingExample& example : cycle.pending_examples) {
    out += "<tr>" + cell(escape_xml(example.workload)) + cell(escape_xml(example.queue)) +
           cell(escape_xml(example.code)) + cell(format_duration(example.pending_seconds)) +
           fmt::format("<td class=\"message\">{}</td>", escape_xml(example.message)) + "</tr>\n";
  }
  out += fmt::format(
      "</tbody></table></div>\n<p class=\"note\">The reason each workload was given by the last cycle, longest "
      "pending first ({} of {} shown).</p>\n",
      cycle.pending_examples.size(), [&] {
        int64_t total = 0;
        for (const auto& [code, count] : cycle.pending_by_code) total += count;
        return total;
      }());
  return out;
}

std::string cycle_sections(const TimelineReport& report) {
  std::string out = "<h2>Queues: allocation against fair share</h2>\n";
  const bool several = report.policies.size() > 1;
  for (const TimelinePolicyResult& policy : report.policies) {
    if (!policy.cycle) continue;
    if (several) out += fmt::format("<h3>{}</h3>\n", escape_xml(policy.policy));
    out += queue_charts(report, *policy.cycle);
    out += queue_table(*policy.cycle);
  }
  out += "<h2>Evictions by action</h2>\n" + churn_table(report);
  out += "<h2>Why workloads are pending</h2>\n";
  for (const TimelinePolicyResult& policy : report.policies) {
    if (!policy.cycle) continue;
    if (several) out += fmt::format("<h3>{}</h3>\n", escape_xml(policy.policy));
    out += pending_reasons_section(policy);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files

std::string os_reason(int error_number) { return std::system_category().message(error_number); }

Error write_error(const std::filesystem::path& path, std::string_view what, int error_number) {
  return Error{fmt::format("cannot write {}: {}: {}", path.string(), what, os_reason(error_number))};
}

// Creates a new, empty file next to `path` that no one else has opened; the mode is the usual
// 0666 less the umask, which is what the renamed file keeps.
int create_temporary_beside(const std::filesystem::path& path, std::filesystem::path* temporary) {
  std::random_device entropy;
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temporary = directory / fmt::format(".{}.tmp-{}-{:08x}", path.filename().string(), ::getpid(), entropy());
    const int fd = ::open(temporary->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    content.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace

std::string arrival_report_html(const ArrivalReport& report) {
  const double x_max = arrival_x_max(report);
  std::string out = page_open(fmt::format("Tessera policy lab — arrival — {}", report.scenario));
  out += arrival_header(report);
  out += "<h2>Results</h2>\n" + arrival_headline_table(report);
  out += arrival_how_to_read();
  out += "<h2>GPU allocation</h2>\n";
  out += figure(arrival_allocation_chart(report, x_max),
                fmt::format("Mean over {} {} of the allocated GPUs, as % of capacity, against the arrived workload. "
                            "Higher is better; the dashed diagonal is the ideal.",
                            report.seeds.size(), report.seeds.size() == 1 ? "seed" : "seeds"));
  if (std::optional<std::string> zoom = arrival_allocation_zoom_chart(report, x_max)) {
    out += figure(*zoom, "The same curves over the last stretch of arrivals, with the y axis fitted to them.");
  }
  out += "<h2>Fragmentation</h2>\n";
  out += figure(arrival_fragmentation_chart(report, x_max),
                "Free GPU capacity that the workload's pod types cannot use (FGD's measure), as % of capacity, against "
                "the arrived workload. Lower is better.");
  out += "<h2>Failed pods by type</h2>\n";
  out +=
      failures_section(arrival_failures(report),
                       {.none_failed = "No pod failed: every policy placed every pod that arrived.",
                        .chart_title = "Failed pods by pod type",
                        .y_label = "failed pods per run (mean)",
                        .arrived_header = "arrived per run",
                        .caption = "Pods that no node could take, per run (mean over the seeds), by pod type; in the "
                                   "table, under each count, the share of that type's arrivals that failed."});
  out += page_close();
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The topology experiment (docs/topology.md)

std::string topology_header(const TopologyReport& report) {
  std::vector<std::string> nouns;
  for (const std::string& level : report.levels) nouns.push_back(escape_xml(level_noun(level)));
  std::string out = fmt::format("<h1>Topology: {}</h1>\n", escape_xml(report.scenario));
  out += fmt::format(
      "<p class=\"meta\"><b>{}</b> nodes, <b>{}</b> GPUs; topology levels <b>{}</b>, widest first; a gang's run "
      "time is multiplied by <b>{}</b> (across the widest level ... within the narrowest). Each policy runs with "
      "topology off (constraints ignored), under each domain rule, and without room made for required gangs "
      "(<i>no-room</i>).</p>\n",
      format_count(report.nodes), format_count(report.gpus), fmt::join(nouns, " &gt; "),
      report.run_time_factors.empty() ? std::string("1")
                                      : fmt::format("{}", fmt::join(report.run_time_factors, " / ")));
  out += fmt::format("<p class=\"sources\">cluster: {}<br>workload: {}</p>\n", escape_xml(report.cluster_source),
                     escape_xml(report.workload_source));
  return out;
}

std::string topology_table_html(const TopologyReport& report, const std::vector<std::string>& policies) {
  std::string out = "<div class=\"scroll\"><table>\n<thead><tr><th>policy</th><th>topology</th>";
  for (const std::string& level : report.levels)
    out += fmt::format("<th>in 1<br>{}</th>", escape_xml(level_noun(level)));
  out +=
      "<th>JCT<br>p50</th><th>JCT<br>p90</th><th>mean GPU<br>allocation</th><th>required<br>wait p50</th>"
      "<th>required<br>wait p90</th><th>required<br>started</th><th>evictions</th></tr></thead>\n<tbody>\n";
  for (const TopologyRun& run : report.runs) {
    const CycleReplayResult& cycle = *run.result.cycle;
    const TopologySummary& topology = cycle.topology;
    const auto index = static_cast<size_t>(std::find(policies.begin(), policies.end(), run.policy) - policies.begin());
    out += "<tr>" + policy_cell(run.policy, index) + cell(escape_xml(run.topology));
    for (size_t level = 0; level < topology.within.size(); ++level)
      out += cell(format_percent(within_share_pct(topology, level)));
    out += cell(format_duration(cycle.jct_seconds.p50)) + cell(format_duration(cycle.jct_seconds.p90));
    out += cell(format_percent(run.result.mean_gpu_allocated_pct));
    out += cell(format_duration(topology.required_wait_seconds.p50)) +
           cell(format_duration(topology.required_wait_seconds.p90));
    out += cell(fmt::format("{} <span class=\"note\">of {}</span>", format_count(topology.required_started),
                            format_count(topology.required_gangs)));
    out += cell(format_count(cycle.churn.whole_workloads)) + "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"note\">in 1 LEVEL: of the gangs that started on more than one node, "
      "those within one domain of the level. Required: gangs with a required level; their wait runs from arrival "
      "to first start. Evictions: whole workloads evicted, moves included.</p>\n";
  return out;
}

// One group of bars per run variant (off, each rule, no-room), one bar per policy.
std::string topology_chart(const TopologyReport& report, const std::vector<std::string>& policies, std::string title,
                           std::string y_label, double (*value_of)(const TopologyRun& run)) {
  GroupedBarChart chart{std::move(title), std::move(y_label), {}, {}};
  for (const TopologyRun& run : report.runs) {
    if (std::find(chart.categories.begin(), chart.categories.end(), run.topology) == chart.categories.end())
      chart.categories.push_back(run.topology);
  }
  for (size_t i = 0; i < policies.size(); ++i) {
    BarSeries series{policies[i], policy_colour(i), std::vector<double>(chart.categories.size(), NAN)};
    for (const TopologyRun& run : report.runs) {
      if (run.policy != policies[i]) continue;
      const auto category = std::find(chart.categories.begin(), chart.categories.end(), run.topology);
      series.values[static_cast<size_t>(category - chart.categories.begin())] = value_of(run);
    }
    chart.series.push_back(std::move(series));
  }
  return render_grouped_bar_chart(chart);
}

}  // namespace

std::string topology_report_html(const TopologyReport& report) {
  std::vector<std::string> policies;
  for (const TopologyRun& run : report.runs) {
    if (std::find(policies.begin(), policies.end(), run.policy) == policies.end()) policies.push_back(run.policy);
  }
  std::string out = page_open(fmt::format("Tessera policy lab — topology — {}", report.scenario));
  out += topology_header(report);
  out += "<h2>Summary</h2>\n" + topology_table_html(report, policies);
  if (!report.levels.empty()) {
    const std::string narrowest = level_noun(report.levels.back());
    out += "<h2>Gangs within one " + escape_xml(narrowest) + "</h2>\n";
    out += figure(
        topology_chart(report, policies, "Multi-node gangs within one " + narrowest, "% of multi-node gangs",
                       [](const TopologyRun& run) {
                         const TopologySummary& topology = run.result.cycle->topology;
                         return topology.within.empty() ? NAN : within_share_pct(topology, topology.within.size() - 1);
                       }),
        "Of the gangs that started on more than one node, the share whose nodes all lie in one domain "
        "of the narrowest level, per policy and topology setting.");
  }
  out += "<h2>Wait of gangs with a required level</h2>\n";
  out += figure(
      topology_chart(report, policies, "Required gangs: wait p50", "seconds",
                     [](const TopologyRun& run) { return run.result.cycle->topology.required_wait_seconds.p50; }),
      "Median time from arrival to first start of the gangs with a required level.");
  out += "<h2>Job completion time</h2>\n";
  out += figure(topology_chart(report, policies, "Job completion time p90", "seconds",
                               [](const TopologyRun& run) { return run.result.cycle->jct_seconds.p90; }),
                "90th percentile of the time from arrival to completion, over every job that completed.");
  out += page_close();
  return out;
}

std::string timeline_report_html(const TimelineReport& report) {
  std::string out = page_open(fmt::format("Tessera policy lab — timeline — {}", report.scenario));
  out += timeline_header(report);
  out += "<h2>Summary</h2>\n" + timeline_headline_table(report);
  out += "<h2>GPU allocation over time</h2>\n";
  out += figure(timeline_chart(report, "GPU allocation over time", "allocated GPUs (% of capacity)",
                               gpu_axis_end(report), [](const TimelinePoint& p) { return p.gpu_allocated_pct; }),
                "Allocated GPUs as % of the cluster's GPU capacity, sampled on a regular grid of simulated time.");
  if (is_cycle_replay(report)) out += cycle_sections(report);
  out += "<h2>Running and pending pods</h2>\n";
  out += figure(timeline_chart(report, "Running pods", "running pods", std::nullopt,
                               [](const TimelinePoint& p) { return static_cast<double>(p.running_pods); }),
                "Pods placed and not yet finished.");
  out += figure(
      timeline_chart(report, "Pending pods", "pending pods", std::nullopt,
                     [](const TimelinePoint& p) { return static_cast<double>(p.pending_pods); }),
      "Pods that have arrived and wait for room; a line that keeps climbing is a queue the policy cannot drain.");
  out += "<h2>Never scheduled, by pod type</h2>\n";
  out +=
      failures_section(timeline_failures(report),
                       {.none_failed = "None: under every policy, every workload started.",
                        .chart_title = "Workloads never scheduled, by pod type",
                        .y_label = "workloads never scheduled",
                        .arrived_header = "workloads",
                        .caption = "Workloads still pending at the end of the replay, or unplaceable even on an empty "
                                   "cluster, by the type of their pods; in the table, under each count, the share of "
                                   "that type's workloads."});
  out += page_close();
  return out;
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  if (!path.has_filename()) return Error{fmt::format("cannot write {}: not a file name", path.string())};
  std::filesystem::path temporary;
  const int fd = create_temporary_beside(path, &temporary);
  if (fd < 0) return write_error(path, "cannot create a temporary file", errno);
  // fsync before the rename: otherwise a crash soon after could leave an empty file in its place.
  if (!write_all(fd, content) || ::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return write_error(path, "cannot write the temporary file", saved);
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return write_error(path, "cannot close the temporary file", saved);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return write_error(path, "cannot rename the temporary file into place", saved);
  }
  return Ok{};
}

Status write_html_report(const std::filesystem::path& dir, const std::string& html) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Error{fmt::format("cannot create directory {}: {}", dir.string(), error.message())};
  return write_file_atomically(dir / "index.html", html);
}

}  // namespace tessera
