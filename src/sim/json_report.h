// The simulator's results as JSON, schema "tessera.sim/v1" (docs/sim-json-schema.md).
//
// Numbers are rounded for reading (percentages and seconds to 3 decimals, wall-clock times to
// 4); a value that is NaN or infinite is written as null, never as an invalid JSON token.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/sim_results.h"
#include "sim/topology_experiment.h"

namespace tessera {

inline constexpr const char* kSimJsonSchema = "tessera.sim/v1";

nlohmann::json arrival_report_json(const ArrivalReport& report);
nlohmann::json timeline_report_json(const TimelineReport& report);
nlohmann::json topology_report_json(const TopologyReport& report);

}  // namespace tessera
