// `tessera bench dashboard`: what the scheduler's dashboard costs on a large synthetic cluster —
// the time to build its picture after a cycle, and each endpoint's JSON size and render time;
// with --serve, the same picture served at /ui for a browser to load (tests/dashboard/).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_bench_dashboard_command(CLI::App& bench, int& exit_code);

}  // namespace tessera
