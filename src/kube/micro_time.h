// metav1.MicroTime text: RFC 3339 in UTC with microseconds, "2026-11-21T10:00:00.123456Z".
#pragma once

#include <chrono>
#include <string>

namespace tessera::kube {

std::string format_micro_time(std::chrono::system_clock::time_point time);

}  // namespace tessera::kube
