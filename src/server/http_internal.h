// Private to src/server: the pieces shared by the server's lifecycle code
// (http_server.cc) and its ingest route (ingest_handler.cc). Includes cpp-httplib,
// which must be compiled with the flags its pkg-config file gives (see CMakeLists.txt).
#pragma once

#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http_server.h"
#include "server/metrics.h"

namespace sluice::server::internal {

// Routes as the metrics label them.
enum class Route { kRecords, kMetrics, kStatus, kHealthz, kOther };
constexpr int kRouteCount = 5;
std::string_view RouteName(Route route);
Route RouteOf(const httplib::Request& req);

// The server's request metrics. A series is created at its first use (route/code
// pairs that never happen are not exported) and its handle cached, so counting is an
// atomic load plus an add. Everything is a no-op without a registry.
class RequestMetrics {
 public:
  Status Init(Registry* registry);  // before the server starts
  void Count(Route route, int code);
  void ObserveSeconds(Route route, double seconds);

 private:
  static constexpr std::array<int, 11> kCodes = {200, 400, 401, 404, 405, 409,
                                                 413, 415, 429, 500, 503};
  Family<Counter>* requests_ = nullptr;
  Family<Histogram>* durations_ = nullptr;
  std::array<std::array<std::atomic<Counter*>, kCodes.size()>, kRouteCount> counters_{};
  std::array<std::atomic<Histogram*>, kRouteCount> histograms_{};
};

// Sets a JSON error body {"error": message} plus the given extra field when
// `field` is non-empty.
void SetError(httplib::Response& res, int status, std::string_view message,
              std::string_view field = {}, int64_t field_value = 0);

// True when the request carries a body (Content-Length > 0 or chunked).
bool HasBody(const httplib::Request& req);

// What the POST records route needs from the server.
struct IngestContext {
  IngestTarget* target;
  int64_t max_body_bytes;
};

// Checks that can run before the body is read (for Expect: 100-continue and the
// route itself): returns 0 to go on, else the status code already set in `res`.
int PrecheckIngest(const IngestContext& ctx, const std::string& stream, const httplib::Request& req,
                   httplib::Response& res);

// POST /v1/streams/{stream}/records.
void HandleIngest(const IngestContext& ctx, const httplib::Request& req, httplib::Response& res,
                  const httplib::ContentReader& content_reader);

}  // namespace sluice::server::internal
