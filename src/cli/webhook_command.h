// `tessera webhook` and `tessera-scheduler webhook`: the mutating admission webhook that puts the
// GPU-memory interposer into pods at creation (docs/gpu-memory.md §Deploying).
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

inline constexpr const char* kWebhookDescription =
    "Serve the admission webhook that injects the GPU memory interposer into GPU-memory pods of schedulerName: tessera";

// The webhook's flags and run callback on `command` (its own CLI::App in tessera-scheduler, whose
// top level is the scheduler's).
void add_webhook_options(CLI::App* command, int& exit_code);

}  // namespace tessera
