// tessera: the command-line entry point.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>

#include "cli/bench_command.h"
#include "cli/dev_cluster_command.h"
#include "cli/dev_nodes_command.h"
#include "cli/scheduler_command.h"
#include "cli/sim_command.h"

namespace {

int run(int argc, char** argv) {
  // A peer that closes a connection mid-write (an API server, a metrics scraper) must give the
  // writer an error, not end the process.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Tessera: a GPU-aware batch scheduler and policy lab"};
  app.set_version_flag("--version", "tessera 0.1.0");
  app.require_subcommand(1);
  int exit_code = 0;
  tessera::add_sim_command(app, exit_code);
  tessera::add_bench_command(app, exit_code);
  tessera::add_dev_cluster_command(app, exit_code);
  tessera::add_dev_nodes_command(app, exit_code);
  tessera::add_scheduler_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11 prints help, the version or the error; every usage error exits 2, as documented
    // (CLI11's own codes, such as 105 for a value out of range, would be one per error kind).
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Errors travel as Result values; this catches what cannot (out of memory, a library bug), so a
  // user sees a message and an exit status rather than an abort.
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fputs(fmt::format("error: {}\n", error.what()).c_str(), stderr);
  } catch (...) {
    std::fputs("error: unexpected failure\n", stderr);
  }
  return 3;
}
