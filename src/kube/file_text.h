// Whole-file reads with errors that name the file.
#pragma once

#include <string>

#include "core/result.h"

namespace tessera::kube {

// The file's contents, or Error "cannot read <path>: <reason>".
Result<std::string> read_file_text(const std::string& path);

// `text` without leading and trailing whitespace (token files end with a newline).
std::string trim_whitespace(std::string text);

}  // namespace tessera::kube
