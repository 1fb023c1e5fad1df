// A workload (PodGroup): the unit of queueing and gang scheduling.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod.h"
#include "core/utilisation_profile.h"

namespace tessera {

enum class WorkloadKind : uint8_t { kTrain, kInteractive, kInference };
inline constexpr size_t kWorkloadKindCount = 3;

inline std::string_view workload_kind_name(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kTrain:
      return "train";
    case WorkloadKind::kInteractive:
      return "interactive";
    case WorkloadKind::kInference:
      return "inference";
  }
  return "unknown";
}

struct WorkloadSpec {
  std::string name;
  std::string queue;
  WorkloadKind kind = WorkloadKind::kTrain;
  int priority = 0;
  bool preemptible = true;
  std::vector<PodSpec> pods;
  // Pods that must be placed together or not at all; the rest are elastic extras.
  int min_member = 1;
  double arrival_seconds = 0;
  // Run time once all of min_member run; negative means it runs until the end of the replay.
  double duration_seconds = -1;
  // The workload saves its progress this often (seconds of run time); an evicted workload
  // resumes from its last checkpoint. 0: no checkpoints, an evicted workload starts over.
  double checkpoint_interval_seconds = 0;
  // The longest one run may last (seconds from its start); it is ended when it expires. 0: none.
  // A workload with a limit may backfill room reserved for another that it would leave in time.
  double time_limit_seconds = 0;
  // Shorter limits than its queue's rules give (docs/design.md §6); a longer one is clamped to the
  // queue's. Absent: the queue's.
  std::optional<double> max_runtime_seconds;
  std::optional<double> idle_limit_seconds;
  // How busy it keeps its GPUs while it runs (the simulator's stand-in for GPU telemetry).
  UtilisationProfile utilisation;
};

}  // namespace tessera
