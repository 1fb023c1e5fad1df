// tessera: the command-line entry point.
#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/dev_cluster_command.h"
#include "cli/dev_nodes_command.h"
#include "cli/entry_point.h"
#include "cli/scheduler_command.h"
#include "cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU-aware batch scheduler and policy lab"};
  app.set_version_flag("--version", "tessera 0.1.0");
  app.require_subcommand(1);
  int exit_code = 0;
  tessera::add_sim_command(app, exit_code);
  tessera::add_bench_command(app, exit_code);
  tessera::add_dev_cluster_command(app, exit_code);
  tessera::add_dev_nodes_command(app, exit_code);
  tessera::add_scheduler_command(app, exit_code);
  return tessera::run_app(app, argc, argv, exit_code);
}
