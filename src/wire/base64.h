// Base64 as Kubernetes uses it: the standard alphabet in kubeconfig *-data fields and Secrets, the
// URL alphabet without padding in a list's `continue` token.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::wire {

// Standard alphabet, padded with '='.
std::string encode_base64(std::string_view bytes);
// URL alphabet ('-' and '_'), unpadded: Go's base64.RawURLEncoding.
std::string encode_base64url(std::string_view bytes);

// Standard alphabet; whitespace (line breaks in long values) is skipped and padding is optional.
// nullopt for any other character, data after padding, or a truncated quantum.
std::optional<std::string> decode_base64(std::string_view text);
// URL alphabet (the standard one's '+' and '/' are taken too), padding optional, no whitespace.
std::optional<std::string> decode_base64url(std::string_view text);

}  // namespace tessera::wire
