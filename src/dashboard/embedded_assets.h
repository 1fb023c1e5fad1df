// The dashboard's page, style, script and icon (src/dashboard/assets/), assembled into the binary so
// that the scheduler serves every byte of its dashboard itself: no CDN, no network.
#pragma once

#include <string_view>
#include <vector>

namespace tessera::dashboard {

struct Asset {
  std::string_view path;  // under /ui/: "" for the page
  std::string_view content_type;
  std::string_view body;
};

const std::vector<Asset>& dashboard_assets();

}  // namespace tessera::dashboard
