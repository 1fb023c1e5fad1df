// The body of a watch: one JSON event per line, delivered in chunks that need not end at a
// line break (an event may span chunks, one chunk may hold several events).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/api_client.h"

namespace tessera::kube {

class LineSplitter {
 public:
  using LineHandler = std::function<bool(std::string_view line)>;

  // Calls `on_line` for every line completed by `chunk` (without its line break; blank lines
  // are skipped). Returns false as soon as `on_line` does.
  bool feed(std::string_view chunk, const LineHandler& on_line);
  // The end of the stream: a last line without a line break, if any.
  bool finish(const LineHandler& on_line);

 private:
  static bool emit(std::string_view line, const LineHandler& on_line);

  std::string partial_;  // the unfinished line carried over from earlier chunks
};

// {"type": "...", "object": {...}} -> WatchEvent.
Result<WatchEvent> parse_watch_event(std::string_view line);

}  // namespace tessera::kube
