// The simulator's results as one self-contained HTML page: inline CSS and SVG charts, no script,
// no external font, image or stylesheet, so that the file can be mailed, archived or printed as
// it is. Every string that comes from the input (scenario, sources, policy and pod type names) is
// escaped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"
#include "sim/sim_results.h"
#include "sim/topology_experiment.h"

namespace tessera {

std::string arrival_report_html(const ArrivalReport& report);
std::string timeline_report_html(const TimelineReport& report);
std::string topology_report_html(const TopologyReport& report);

// Writes `content` to a temporary file in the directory of `path`, then renames it over `path`, so
// that a reader or a failure never sees a partial file. The error names the path and the reason
// the operating system gave; nothing is left behind on failure.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Creates `dir` (and its parents) if needed and writes `dir`/index.html atomically.
Status write_html_report(const std::filesystem::path& dir, const std::string& html);

}  // namespace tessera
