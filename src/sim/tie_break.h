// How an arrival experiment breaks ties between equally good nodes (`tessera sim --tie-break`).
#pragma once

#include <optional>
#include <string_view>

namespace tessera {

enum class TieBreak {
  kLowestIndex,  // the lowest node index (the default)
  kRandomOrder,  // the first in a random order of the nodes, drawn once per seed (the FGD paper's simulator)
  kRandomEach,   // uniformly at random, afresh each time (the stock Kubernetes scheduler)
};

std::string_view tie_break_name(TieBreak tie_break);         // "lowest-index", "random", "random-each"
std::string_view tie_break_description(TieBreak tie_break);  // "to the lowest index", ...
std::optional<TieBreak> parse_tie_break(std::string_view name);

}  // namespace tessera
