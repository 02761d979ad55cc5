// Private to src/server: what the event loop (http_server.cc), the routes
// (http_routes.cc) and the ingest route (ingest_handler.cc) share.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_message.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace sluice::server::internal {

// Routes as the metrics label them.
enum class Route { kRecords, kMetrics, kStatus, kHealthz, kDashboard, kCatalog, kOther };
constexpr int kRouteCount = static_cast<int>(Route::kOther) + 1;
std::string_view RouteName(Route route);
// The route of a path; kCatalog when `routes` (may be null) claims it.
Route RouteOf(std::string_view path, const RouteHandler* routes = nullptr);

// The server's request metrics. A series is created at its first use (route/code
// pairs that never happen are not exported) and its handle cached, so counting is an
// atomic load plus an add. Everything is a no-op without a registry. Thread-safe.
class RequestMetrics {
 public:
  Status Init(Registry* registry);  // before the server starts
  void Count(Route route, int code);
  void ObserveSeconds(Route route, double seconds);

 private:
  static constexpr std::array<int, 15> kCodes = {200, 400, 401, 404, 405, 408, 409, 413,
                                                 415, 417, 429, 431, 500, 501, 503};
  Family<Counter>* requests_ = nullptr;
  Family<Histogram>* durations_ = nullptr;
  std::array<std::array<std::atomic<Counter*>, kCodes.size()>, kRouteCount> counters_{};
  std::array<std::atomic<Histogram*>, kRouteCount> histograms_{};
};

// Sets a JSON error body {"error": message} plus the given extra field when
// `field` is non-empty.
void SetError(HttpResponse& res, int status, std::string_view message, std::string_view field = {},
              int64_t field_value = 0);

// What the POST records route needs from the server.
struct IngestContext {
  IngestTarget* target;
  int64_t max_body_bytes;
};

// Checks that can run before the body is read (for Expect: 100-continue and the
// route itself): returns 0 to go on, else the status code already set in `res`.
int PrecheckIngest(const IngestContext& ctx, const std::string& stream, const HttpRequest& req,
                   HttpResponse& res);

// POST /v1/streams/{stream}/records with its whole body.
void HandleIngest(const IngestContext& ctx, const std::string& stream, const HttpRequest& req,
                  HttpResponse& res);

// The stream name of a records path ("/v1/streams/{stream}/records", the name
// percent-decoded), or nullopt for any other path or a bad escape.
std::optional<std::string> StreamOfPath(std::string_view path);

// A message for a client: absolute paths (and file:// URIs) cut to their last
// component, so answers do not show the server's layout (the server log has them).
std::string WithoutPaths(std::string_view message);

// Routing, authentication and the handlers, independent of sockets. OnHead runs on
// the event loop thread and must stay cheap; Handle runs on worker threads.
// Thread-safe once Init() returned.
class Router {
 public:
  Router(const HttpServerOptions& options, IngestTarget* target)
      : options_(options), target_(target) {}
  Status Init() { return metrics_.Init(options_.registry); }

  // After the header section: nullopt to read the body and Handle() the request,
  // or the final answer, sent with the body unread.
  std::optional<HttpResponse> OnHead(const HttpRequest& req);
  // The whole request's answer.
  HttpResponse Handle(const HttpRequest& req);
  // Counts an answer sent (path empty: a request that could not be parsed).
  void Count(std::string_view path, int status) {
    metrics_.Count(RouteOf(path, options_.routes), status);
  }

 private:
  bool Authorized(const HttpRequest& req) const;
  // The answer for a path/method pair that no route takes, or nullopt when one does.
  std::optional<HttpResponse> Unrouted(const HttpRequest& req) const;

  const HttpServerOptions& options_;
  IngestTarget* const target_;
  RequestMetrics metrics_;
};

}  // namespace sluice::server::internal
