// `tessera sim`: the policy lab on the command line.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

// Adds the subcommand; its callback runs the replay and sets `exit_code`.
void add_sim_command(CLI::App& app, int& exit_code);

}  // namespace tessera
