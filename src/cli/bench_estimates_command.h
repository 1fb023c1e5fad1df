// `tessera bench estimates`: what the start-time estimates cost on a large synthetic cluster.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_bench_estimates_command(CLI::App& bench, int& exit_code);

}  // namespace tessera
