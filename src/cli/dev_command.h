// `tessera dev`, the parent of the development tools (nodes, gpu-metrics): made by whichever of
// them is added first.
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

namespace tessera {

inline CLI::App* dev_command(CLI::App& app) {
  const std::vector<CLI::App*> existing =
      app.get_subcommands([](CLI::App* subcommand) { return subcommand->get_name() == "dev"; });
  if (!existing.empty()) return existing.front();
  CLI::App* dev = app.add_subcommand("dev", "Development tools");
  dev->require_subcommand(1);
  return dev;
}

}  // namespace tessera
