// `tessera dev gpu-metrics`: serves dcgm-exporter's GPU utilisation metric for the pods of a
// cluster with simulated GPUs (the dev cluster, or KWOK's fake nodes), for a Prometheus to scrape.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_dev_gpu_metrics_command(CLI::App& app, int& exit_code);

}  // namespace tessera
