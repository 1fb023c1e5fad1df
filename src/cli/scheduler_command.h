// `tessera scheduler` and `tessera-scheduler`: the engine as a Kubernetes scheduler (docs/kubernetes.md).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

inline constexpr const char* kSchedulerDescription =
    "Schedule the pods of a Kubernetes cluster that name schedulerName: tessera";

// The scheduler's flags and run callback, on `command`: the `tessera scheduler` subcommand, or
// the whole of the lean `tessera-scheduler` binary.
void add_scheduler_options(CLI::App* command, int& exit_code);
void add_scheduler_command(CLI::App& app, int& exit_code);

}  // namespace tessera
