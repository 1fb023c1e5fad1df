// `tessera bench`: timing benchmarks that print figures (never run by the tests).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace tessera
