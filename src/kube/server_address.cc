#include "kube/server_address.h"

#include <fmt/format.h>

#include <charconv>

namespace tessera::kube {
namespace {

Error bad(const std::string& url, std::string_view why) { return Error{fmt::format("server \"{}\": {}", url, why)}; }

}  // namespace

Result<ServerAddress> parse_server_address(const std::string& url) {
  ServerAddress address;
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    address.tls = false;
    address.port = 80;
    rest.remove_prefix(7);
  } else {
    return bad(url, "expected an https:// or http:// URL");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash);
    while (prefix.ends_with('/')) prefix.remove_suffix(1);
    address.path_prefix = std::string(prefix);
  }
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad(url, "unterminated IPv6 address");
    address.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(':')) return bad(url, "unexpected text after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    address.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (address.host.empty()) return bad(url, "no host");
  if (!port_text.empty()) {
    int port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 || port > 65535) {
      return bad(url, fmt::format("invalid port \"{}\"", port_text));
    }
    address.port = port;
  }
  return address;
}

}  // namespace tessera::kube
