// What every Tessera binary's main does around its commands: ignore SIGPIPE, exit 2 on any usage
// error, and turn an escaped exception into a message and an exit status.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>

namespace tessera {

// Parses the command line into `app` (whose callbacks set `exit_code`) and returns the exit status.
inline int run_app(CLI::App& app, int argc, char** argv, const int& exit_code) {
  // A peer that closes a connection mid-write (an API server, a metrics scraper) must give the
  // writer an error, not end the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Errors travel as Result values; this catches what cannot (out of memory, a library bug), so a
  // user sees a message and an exit status rather than an abort.
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      // CLI11 prints help, the version or the error; every usage error exits 2, as documented
      // (CLI11's own codes, such as 105 for a value out of range, would be one per error kind).
      const int code = app.exit(error);
      return code == 0 ? 0 : 2;
    }
    return exit_code;
  } catch (const std::exception& error) {
    std::fputs(fmt::format("error: {}\n", error.what()).c_str(), stderr);
  } catch (...) {
    std::fputs("error: unexpected failure\n", stderr);
  }
  return 3;
}

}  // namespace tessera
