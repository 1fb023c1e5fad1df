// The command-line flags that tune the scheduling cycle (docs/design.md §4), shared by `tessera sim`
// (timeline mode, scenarios with queues) and `tessera scheduler`: a cycle option added here
// reaches both.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <string>

#include "scheduler/cycle.h"

namespace tessera {

struct CycleFlags {
  bool no_consolidate = false;
  bool no_reclaim = false;
  bool no_preempt = false;
  bool reclaim_moves = CycleOptions{}.reclaim_moves;
  double usage_penalty = CycleOptions{}.fair_share.usage_penalty;
  double usage_half_life_seconds = CycleOptions{}.fair_share.usage_half_life_seconds;
  bool no_reservations = false;
  double reservation_wait_seconds = ReservationOptions{}.min_wait_seconds;
  double reservation_min_gpus = ReservationOptions{}.min_gpus;
  double reservation_max_nodes_pct = ReservationOptions{}.max_reserved_node_fraction * 100;

  CycleOptions options() const {
    CycleOptions options;
    options.consolidate = !no_consolidate;
    options.reclaim = !no_reclaim;
    options.preempt = !no_preempt;
    options.reclaim_moves = reclaim_moves;
    options.fair_share.usage_penalty = usage_penalty;
    options.fair_share.usage_half_life_seconds = usage_half_life_seconds;
    options.reservations = {!no_reservations, reservation_wait_seconds, reservation_min_gpus,
                            reservation_max_nodes_pct / 100};
    return options;
  }
};

// `scope` starts each flag's help ("Timeline mode, scenarios with queues: "); `reclaim_moves_note`
// ends that flag's help with what a move means where the command runs. `flags` holds the
// defaults the help shows.
inline void add_cycle_flags(CLI::App& command, CycleFlags& flags, const std::string& scope,
                            const std::string& reclaim_moves_note) {
  // Without a scope the sentence starts the help, capitalised.
  auto help = [&scope](std::string text) {
    if (scope.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return scope + text;
  };
  command.add_flag("--no-consolidate", flags.no_consolidate, help("never move running work to make room"));
  command.add_flag("--no-reclaim", flags.no_reclaim, help("never reclaim resources lent to other queues"));
  command.add_flag("--no-preempt", flags.no_preempt, help("never preempt within a queue"));
  command.add_flag("--reclaim-moves,!--no-reclaim-moves", flags.reclaim_moves,
                   help(fmt::format("let reclaim move work of queues at their fair share to gather the room it frees "
                                    "on one node (default {}){}",
                                    flags.reclaim_moves ? "on" : "off", reclaim_moves_note)));
  command
      .add_option("--usage-penalty", flags.usage_penalty,
                  help("time-based fairness: shrink the over-quota weight of queues that used more than their fair "
                       "share recently by this factor (0: off)"))
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  command
      .add_option("--usage-half-life", flags.usage_half_life_seconds,
                  help("time-based fairness: half-life in seconds of the remembered use (> 0)"))
      ->check(CLI::Range(1e-3, 1e12))
      ->capture_default_str();
  command.add_flag("--no-reservations", flags.no_reservations,
                   help("never reserve nodes for workloads that wait long for room"));
  command
      .add_option("--reservation-wait", flags.reservation_wait_seconds,
                  help("seconds a workload waits for room before it may reserve nodes, which then drain for it"))
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  command
      .add_option("--reservation-min-gpus", flags.reservation_min_gpus,
                  help("only workloads whose gang asks for at least this many GPUs reserve nodes"))
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  command
      .add_option("--reservation-max-nodes", flags.reservation_max_nodes_pct,
                  help("at most this % of the nodes is reserved at once (the first reservation may pass it)"))
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
}

}  // namespace tessera
