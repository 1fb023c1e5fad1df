#include "cli/webhook_command.h"

#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "admission/webhook_server.h"

namespace tessera {
namespace {

// Serves until SIGTERM or SIGINT: the signals are blocked in every thread and taken here by
// sigwait, so no handler and no global flag are needed.
int run_webhook(const admission::WebhookServerOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto server = admission::WebhookServer::bind(options);
  if (!server) {
    std::fputs(fmt::format("error: {}\n", server.error().message).c_str(), stderr);
    return 1;
  }
  std::fputs(
      fmt::format("tessera webhook: serving https on {}:{} (/mutate, /healthz)\n", options.host, (*server)->port())
          .c_str(),
      stderr);
  std::atomic<bool> served{false};
  std::thread serving([&server, &served] {
    (*server)->serve();
    served = true;
  });
  int received = 0;
  sigwait(&signals, &received);
  // httplib stops a running server only, and once: a signal that came before it ran waits for it.
  while (!served && !(*server)->running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (*server)->stop();
  serving.join();
  return 0;
}

}  // namespace

void add_webhook_options(CLI::App* command, int& exit_code) {
  auto options = std::make_shared<admission::WebhookServerOptions>();
  command->add_option("--host", options->host, "Address to listen on")->capture_default_str();
  command->add_option("--port", options->port, "HTTPS port")->check(CLI::Range(0, 65535))->capture_default_str();
  command->add_option("--tls-cert-file", options->certificate_file, "Server certificate, PEM")->required();
  command->add_option("--tls-private-key-file", options->private_key_file, "Server private key, PEM")->required();
  command
      ->add_option("--library-dir", options->layout.library_dir,
                   "Host folder where the node agent puts libtessera-gpumem.so (mounted at the same path)")
      ->capture_default_str();
  command
      ->add_option("--ledger-dir", options->layout.ledger_dir,
                   "Host folder of the node's GPU memory ledger (mounted at the same path)")
      ->capture_default_str();
  command->callback([options, &exit_code] { exit_code = run_webhook(*options); });
}

}  // namespace tessera
