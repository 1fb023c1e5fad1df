// The parts of a kubeconfig `server` URL that an HTTP client needs.
#pragma once

#include <string>

#include "core/result.h"

namespace tessera::kube {

struct ServerAddress {
  bool tls = true;
  std::string host;  // without the brackets of an IPv6 literal
  int port = 443;
  std::string path_prefix;  // "" or "/some/proxy/prefix" (no trailing slash)
};

// "https://host[:port][/prefix]" or "http://..."; an IPv6 host is written "[::1]".
Result<ServerAddress> parse_server_address(const std::string& url);

}  // namespace tessera::kube
