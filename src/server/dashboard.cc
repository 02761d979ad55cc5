#include "server/dashboard.h"

#include "server/dashboard_assets.h"  // generated: kIndexHtml, kDashboardCss, kDashboardJs

namespace sluice::server {

std::optional<DashboardAsset> FindDashboardAsset(std::string_view path) {
  if (path == "/" || path == "/index.html") {
    return DashboardAsset{dashboard_assets::kIndexHtml, "text/html; charset=utf-8"};
  }
  if (path == "/dashboard.css") {
    return DashboardAsset{dashboard_assets::kDashboardCss, "text/css; charset=utf-8"};
  }
  if (path == "/dashboard.js") {
    return DashboardAsset{dashboard_assets::kDashboardJs, "text/javascript; charset=utf-8"};
  }
  return std::nullopt;
}

}  // namespace sluice::server
