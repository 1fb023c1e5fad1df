// tessera: the command-line entry point. Installed (or linked) as kubectl-tessera it is also
// the kubectl plugin: `kubectl tessera list` runs it with argv[0] kubectl-tessera.
#include <CLI/CLI.hpp>
#include <string_view>

#include "cli/bench_command.h"
#include "cli/dev_cluster_command.h"
#include "cli/dev_gpu_metrics_command.h"
#include "cli/dev_nodes_command.h"
#include "cli/entry_point.h"
#include "cli/scheduler_command.h"
#include "cli/sim_command.h"
#include "cli/user/user_commands.h"
#include "cli/webhook_command.h"

namespace {

// How the program was called, for its help: "kubectl tessera" as a kubectl plugin.
std::string program_name(const char* argv0) {
  std::string_view name = argv0 == nullptr ? "tessera" : argv0;
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  return name == "kubectl-tessera" ? "kubectl tessera" : "tessera";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU-aware batch scheduler and policy lab", program_name(argc > 0 ? argv[0] : nullptr)};
  app.set_version_flag("--version", "tessera 0.1.0");
  app.require_subcommand(1);
  int exit_code = 0;
  tessera::add_sim_command(app, exit_code);
  tessera::add_bench_command(app, exit_code);
  tessera::add_dev_cluster_command(app, exit_code);
  tessera::add_dev_nodes_command(app, exit_code);
  tessera::add_dev_gpu_metrics_command(app, exit_code);
  tessera::add_scheduler_command(app, exit_code);
  tessera::add_webhook_options(app.add_subcommand("webhook", tessera::kWebhookDescription), exit_code);
  tessera::cli::add_user_commands(app, exit_code);
  return tessera::run_app(app, argc, argv, exit_code);
}
