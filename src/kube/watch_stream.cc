#include "kube/watch_stream.h"

#include <fmt/format.h>

namespace tessera::kube {

bool LineSplitter::feed(std::string_view chunk, const LineHandler& on_line) {
  while (!chunk.empty()) {
    const size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(chunk);
      return true;
    }
    const std::string_view tail = chunk.substr(0, newline);
    chunk.remove_prefix(newline + 1);
    if (partial_.empty()) {
      if (!emit(tail, on_line)) return false;
    } else {
      std::string line = std::move(partial_);
      partial_.clear();
      line.append(tail);
      if (!emit(line, on_line)) return false;
    }
  }
  return true;
}

bool LineSplitter::finish(const LineHandler& on_line) {
  std::string line = std::move(partial_);
  partial_.clear();
  return emit(line, on_line);
}

bool LineSplitter::emit(std::string_view line, const LineHandler& on_line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return true;
  return on_line(line);
}

Result<WatchEvent> parse_watch_event(std::string_view line) {
  nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("type") || !parsed["type"].is_string()) {
    constexpr size_t kShown = 200;
    return Error{fmt::format("malformed watch event: {}{}", line.substr(0, kShown), line.size() > kShown ? "..." : "")};
  }
  WatchEvent event;
  event.type = parsed["type"].get<std::string>();
  if (auto object = parsed.find("object"); object != parsed.end()) event.object = std::move(*object);
  return event;
}

}  // namespace tessera::kube
