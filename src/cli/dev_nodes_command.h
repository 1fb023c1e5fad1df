// `tessera dev nodes`: the v1 Node objects of a cluster file as a v1 List, to create on a real
// Kubernetes API server whose nodes KWOK simulates (scripts/real-cluster.sh).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

// Adds `nodes` to the `dev` subcommand group, creating the group if `dev cluster` has not.
void add_dev_nodes_command(CLI::App& app, int& exit_code);

}  // namespace tessera
