#include "sim/tie_break.h"

#include <array>

namespace tessera {
namespace {

struct TieBreakText {
  TieBreak tie_break;
  std::string_view name;
  std::string_view description;
};

constexpr std::array<TieBreakText, 3> kTieBreaks = {{
    {TieBreak::kLowestIndex, "lowest-index", "to the lowest index"},
    {TieBreak::kRandomOrder, "random", "to the first in a random node order"},
    {TieBreak::kRandomEach, "random-each", "at random each time"},
}};

const TieBreakText& tie_break_text(TieBreak tie_break) {
  for (const TieBreakText& text : kTieBreaks) {
    if (text.tie_break == tie_break) return text;
  }
  return kTieBreaks.front();
}

}  // namespace

std::string_view tie_break_name(TieBreak tie_break) { return tie_break_text(tie_break).name; }
std::string_view tie_break_description(TieBreak tie_break) { return tie_break_text(tie_break).description; }

std::optional<TieBreak> parse_tie_break(std::string_view name) {
  for (const TieBreakText& text : kTieBreaks) {
    if (text.name == name) return text.tie_break;
  }
  return std::nullopt;
}

}  // namespace tessera
