// A bash completion script made from a CLI11 app's own commands and options, so that it never
// lags behind them: subcommands (aliases included) and options at every level, the choices of an
// option that has a fixed set (-o table|wide|json|yaml), and file names for the rest that take
// a value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tessera::cli {

// The script for `program` (the name completion is registered for; "tessera").
std::string bash_completion_script(const CLI::App& app, const std::string& program);

}  // namespace tessera::cli
