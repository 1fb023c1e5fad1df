// The command-line flags that tune reservations (docs/design.md §4 step 2), shared by `tessera sim` and
// `tessera scheduler`.
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <string>

#include "scheduler/cycle.h"

namespace tessera {

struct ReservationFlags {
  bool no_reservations = false;
  double wait_seconds = ReservationOptions{}.min_wait_seconds;
  double min_gpus = ReservationOptions{}.min_gpus;
  double max_nodes_pct = ReservationOptions{}.max_reserved_node_fraction * 100;

  ReservationOptions reservations() const { return {!no_reservations, wait_seconds, min_gpus, max_nodes_pct / 100}; }
};

// `scope` starts each flag's help ("Timeline mode, scenarios with queues: ").
inline void add_reservation_flags(CLI::App& command, ReservationFlags& flags, const std::string& scope) {
  // Without a scope the sentence starts the help, capitalised.
  auto help = [&scope](std::string text) {
    if (scope.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return scope + text;
  };
  command.add_flag("--no-reservations", flags.no_reservations,
                   help("never reserve nodes for workloads that wait long for room"));
  command
      .add_option("--reservation-wait", flags.wait_seconds,
                  help("seconds a workload waits for room before it may reserve nodes, which then drain for it"))
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  command
      .add_option("--reservation-min-gpus", flags.min_gpus,
                  help("only workloads whose gang asks for at least this many GPUs reserve nodes"))
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  command
      .add_option("--reservation-max-nodes", flags.max_nodes_pct,
                  help("at most this % of the nodes is reserved at once (the first reservation may pass it)"))
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
}

}  // namespace tessera
