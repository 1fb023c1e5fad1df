// `tessera completion bash`: the shell completion script, made from the commands themselves.
#include <cstdio>
#include <memory>

#include "cli/user/bash_completion.h"
#include "cli/user/user_commands.h"

namespace tessera::cli {

void add_completion_command(CLI::App& app, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "completion", "Print a shell completion script: source <(tessera completion bash), or save it under "
                    "/etc/bash_completion.d/");
  command->add_option("shell", *shell, "The shell (bash)")->required()->check(CLI::IsMember({"bash"}));
  command->callback([shell, &app, &exit_code] {
    std::fputs(bash_completion_script(app, "tessera").c_str(), stdout);
    exit_code = 0;
  });
}

}  // namespace tessera::cli
