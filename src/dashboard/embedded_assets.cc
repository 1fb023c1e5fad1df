#include "dashboard/embedded_assets.h"

#include <cstddef>

extern "C" {
extern const char tessera_ui_html_begin[];
extern const char tessera_ui_html_end[];
extern const char tessera_ui_css_begin[];
extern const char tessera_ui_css_end[];
extern const char tessera_ui_js_begin[];
extern const char tessera_ui_js_end[];
extern const char tessera_ui_icon_begin[];
extern const char tessera_ui_icon_end[];
}

namespace tessera::dashboard {

namespace {

std::string_view between(const char* begin, const char* end) { return {begin, static_cast<size_t>(end - begin)}; }

}  // namespace

const std::vector<Asset>& dashboard_assets() {
  static const std::vector<Asset> assets = {
      {"", "text/html; charset=utf-8", between(tessera_ui_html_begin, tessera_ui_html_end)},
      {"dashboard.css", "text/css; charset=utf-8", between(tessera_ui_css_begin, tessera_ui_css_end)},
      {"dashboard.js", "text/javascript; charset=utf-8", between(tessera_ui_js_begin, tessera_ui_js_end)},
      {"favicon.svg", "image/svg+xml", between(tessera_ui_icon_begin, tessera_ui_icon_end)},
  };
  return assets;
}

}  // namespace tessera::dashboard
