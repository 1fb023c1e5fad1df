// `tessera bench bind`: pods bound per second end to end, through the API server.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_bench_bind_command(CLI::App& bench, int& exit_code);

}  // namespace tessera
