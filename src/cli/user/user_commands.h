// The commands researchers and admins run against a cluster, as `tessera COMMAND` or, installed
// as kubectl-tessera, `kubectl tessera COMMAND` (docs/cli.md): list, describe (explain), top
// queues, top nodes, submit, delete, and completion.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

void add_list_command(CLI::App& app, int& exit_code);
void add_describe_command(CLI::App& app, int& exit_code);
void add_top_command(CLI::App& app, int& exit_code);
void add_submit_command(CLI::App& app, int& exit_code);
void add_delete_command(CLI::App& app, int& exit_code);
// Add it last: the script it prints is made from the commands and options `app` has by then.
void add_completion_command(CLI::App& app, int& exit_code);

inline void add_user_commands(CLI::App& app, int& exit_code) {
  add_list_command(app, exit_code);
  add_describe_command(app, exit_code);
  add_top_command(app, exit_code);
  add_submit_command(app, exit_code);
  add_delete_command(app, exit_code);
  add_completion_command(app, exit_code);
}

}  // namespace tessera::cli
