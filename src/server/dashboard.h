// The dashboard's assets (server/dashboard/: index.html, dashboard.css,
// dashboard.js), compiled into the binary: no files to install, no CDN. The
// page reads everything from GET /v1/status (it keeps its own short history for
// rates and sparklines), so it needs no route of its own beyond these.
#pragma once

#include <optional>
#include <string_view>

namespace sluice::server {

struct DashboardAsset {
  std::string_view content;
  std::string_view content_type;
};

// The asset served at `path` ("/", "/dashboard.css", "/dashboard.js"), if any.
std::optional<DashboardAsset> FindDashboardAsset(std::string_view path);

// The Content-Security-Policy the assets are served with: only this origin's
// scripts, styles and /v1/status; nothing inline.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

}  // namespace sluice::server
