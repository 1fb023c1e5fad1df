// dcgm-exporter's GPU utilisation metric for simulated GPUs (`tessera dev gpu-metrics`): what NVIDIA's
// exporter would publish for the pods bound on the dev cluster's or KWOK's fake nodes, from the
// utilisation profile each pod declares in the annotation scheduling.tessera.dev/gpu-utilisation.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/utilisation_profile.h"

namespace tessera::cli {

// "busy", "idle_after 2m", "warmup 20m", "bursty 15m/1h" (durations as Go writes them). Errors
// quote the text and say what was expected.
Result<UtilisationProfile> parse_utilisation_annotation(std::string_view text);

// The Prometheus text exposition of DCGM_FI_DEV_GPU_UTIL, one series per device of every running,
// bound pod in `pods` (a v1 PodList) that declares a profile: its utilisation at `now` (Unix
// seconds) by the run time since status.startTime, with the labels dcgm-exporter writes (gpu,
// UUID, device, modelName, Hostname, container, namespace, pod). Devices come from the
// scheduler's gpu-index annotation. A pod whose annotation does not parse gets no series and a
// comment line saying why.
std::string dcgm_utilisation_metrics(const nlohmann::json& pods, double now);

}  // namespace tessera::cli
