// tessera: the command-line entry point.
#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU-aware batch scheduler and policy lab"};
  app.set_version_flag("--version", "tessera 0.1.0");
  app.require_subcommand(1);
  int exit_code = 0;
  tessera::add_sim_command(app, exit_code);
  tessera::add_bench_command(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
