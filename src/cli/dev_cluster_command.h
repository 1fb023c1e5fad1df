// `tessera dev cluster`: a local Kubernetes API server with simulated GPU nodes to run the
// scheduler and kubectl against.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

// Adds `dev` with its `cluster` subcommand; the callback serves until SIGINT or SIGTERM.
void add_dev_cluster_command(CLI::App& app, int& exit_code);

}  // namespace tessera
