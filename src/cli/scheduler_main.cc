// tessera-scheduler: the Kubernetes scheduler alone, for deployment. It links the engine, the
// scheduler, the API client and the adapter only: no simulator, embedded traces or API server
// (those are `tessera`'s, which also has this command as `tessera scheduler`).
// `tessera-scheduler webhook` is the GPU-memory admission webhook, so that one image serves both;
// it runs as a Deployment of its own (deploy/webhook.yaml): every replica must answer the API
// server, while only the leader schedules, and either may restart without stopping the other.
#include <CLI/CLI.hpp>
#include <string_view>

#include "cli/entry_point.h"
#include "cli/scheduler_command.h"
#include "cli/webhook_command.h"

int main(int argc, char** argv) {
  // The scheduler's flags sit on the binary itself, so the webhook is chosen before they are parsed.
  if (argc > 1 && std::string_view(argv[1]) == "webhook") {
    CLI::App webhook{tessera::kWebhookDescription, "tessera-scheduler webhook"};
    int exit_code = 0;
    tessera::add_webhook_options(&webhook, exit_code);
    return tessera::run_app(webhook, argc - 1, argv + 1, exit_code);
  }
  CLI::App app{tessera::kSchedulerDescription, "tessera-scheduler"};
  app.set_version_flag("--version", "tessera-scheduler 0.1.0");
  int exit_code = 0;
  tessera::add_scheduler_options(&app, exit_code);
  app.footer("tessera-scheduler webhook --help: the GPU memory admission webhook, in the same binary");
  return tessera::run_app(app, argc, argv, exit_code);
}
