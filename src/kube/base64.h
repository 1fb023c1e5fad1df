// Base64 decoding for the *-data fields of a kubeconfig.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::kube {

// Standard alphabet; whitespace (line breaks in long values) is skipped and padding is
// optional. nullopt for any other character or a truncated quantum.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace tessera::kube
