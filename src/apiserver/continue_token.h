// The opaque `continue` token of a paginated list, in the real server's format: base64url of
// {"v":"meta.k8s.io/v1","rv":REVISION,"start":"NAMESPACE/NAME\u0000"}. The next page is served
// from the same revision, starting after the named object.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::apiserver {

struct ContinuePoint {
  uint64_t revision = 0;
  std::string namespace_name;  // empty for cluster-scoped resources
  std::string name;            // the last object of the previous page
};

std::string encode_continue_token(const ContinuePoint& point);
std::optional<ContinuePoint> decode_continue_token(std::string_view token);

}  // namespace tessera::apiserver
