// `tessera scheduler`: the engine as a Kubernetes scheduler (docs/kubernetes.md).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_scheduler_command(CLI::App& app, int& exit_code);

}  // namespace tessera
