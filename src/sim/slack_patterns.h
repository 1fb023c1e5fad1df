// One-device patterns of fractional GPU pods, by the minimum-bin-slack rule (Gupta and Ho, "A
// new heuristic algorithm for the one-dimensional bin-packing problem", 1999): each pattern
// holds the largest share still unassigned and, with it, the shares that fill the device as
// fully as what is left allows. Sorted largest-first placement fills a device with whatever
// comes next and strands the rest (on `default`, 470s beside 470s and 810s beside nothing);
// choosing each device's contents as a whole leaves about the least a device can. The offline
// ceiling places the patterns (sim/offline_packing.h).
#pragma once

#include <span>
#include <vector>

namespace tessera {

struct SlackPattern {
  std::vector<size_t> members;  // indices into the shares given
  int total_milli = 0;          // at most one device: 1000
};

// Every share (milli of one device, 1..1000) in exactly one pattern; patterns in the order they
// were made, so their largest members do not grow.
std::vector<SlackPattern> minimum_slack_patterns(std::span<const int> shares_milli);

}  // namespace tessera
