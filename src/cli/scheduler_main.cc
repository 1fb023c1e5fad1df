// tessera-scheduler: the Kubernetes scheduler alone, for deployment. It links the engine, the
// scheduler, the API client and the adapter only: no simulator, embedded traces or API server
// (those are `tessera`'s, which also has this command as `tessera scheduler`).
#include <CLI/CLI.hpp>

#include "cli/entry_point.h"
#include "cli/scheduler_command.h"

int main(int argc, char** argv) {
  CLI::App app{tessera::kSchedulerDescription, "tessera-scheduler"};
  app.set_version_flag("--version", "tessera-scheduler 0.1.0");
  int exit_code = 0;
  tessera::add_scheduler_options(&app, exit_code);
  return tessera::run_app(app, argc, argv, exit_code);
}
