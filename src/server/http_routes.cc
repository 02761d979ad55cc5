// Routing, authentication, request metrics and the small GET routes of the server.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "server/dashboard.h"
#include "server/http_internal.h"

namespace sluice::server::internal {

std::string_view RouteName(Route route) {
  switch (route) {
    case Route::kRecords: return "records";
    case Route::kMetrics: return "metrics";
    case Route::kStatus: return "status";
    case Route::kHealthz: return "healthz";
    case Route::kDashboard: return "dashboard";
    case Route::kCatalog: return "catalog";
    case Route::kOther: return "other";
  }
  return "other";
}

Route RouteOf(std::string_view p, const RouteHandler* routes) {
  if (p == "/metrics") return Route::kMetrics;
  if (p == "/v1/status") return Route::kStatus;
  if (p == "/healthz") return Route::kHealthz;
  if (FindDashboardAsset(p)) return Route::kDashboard;
  if (p.starts_with("/v1/streams/") && p.ends_with("/records")) return Route::kRecords;
  if (routes != nullptr && routes->Claims(p)) return Route::kCatalog;
  return Route::kOther;
}

Status RequestMetrics::Init(Registry* registry) {
  if (registry == nullptr) return Status::OK();
  ASSIGN_OR_RETURN(requests_, registry->AddCounter("sluice_http_requests_total",
                                                   "HTTP requests answered, by route and "
                                                   "status code.",
                                                   {"route", "code"}));
  ASSIGN_OR_RETURN(durations_, registry->AddHistogram("sluice_http_request_duration_seconds",
                                                      "Time to handle an HTTP request once it "
                                                      "was read (validation, durable append), "
                                                      "by route.",
                                                      DefaultSecondsBuckets(), {"route"}));
  return Status::OK();
}

void RequestMetrics::Count(Route route, int code) {
  if (requests_ == nullptr) return;
  auto lookup = [&]() -> Counter* {
    auto counter = requests_->WithLabels({std::string(RouteName(route)), std::to_string(code)});
    return counter.ok() ? *counter : nullptr;
  };
  auto c = std::find(kCodes.begin(), kCodes.end(), code);
  Counter* counter = nullptr;
  if (c == kCodes.end()) {
    counter = lookup();  // a code the cache does not hold (rare)
  } else {
    auto& slot = counters_[static_cast<size_t>(route)][c - kCodes.begin()];
    counter = slot.load(std::memory_order_acquire);
    if (counter == nullptr) {
      counter = lookup();  // the family returns the same handle to racing threads
      slot.store(counter, std::memory_order_release);
    }
  }
  if (counter != nullptr) counter->Increment();
}

void RequestMetrics::ObserveSeconds(Route route, double seconds) {
  if (durations_ == nullptr) return;
  auto& slot = histograms_[static_cast<size_t>(route)];
  Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    auto made = durations_->WithLabels({std::string(RouteName(route))});
    if (!made.ok()) return;
    h = *made;
    slot.store(h, std::memory_order_release);
  }
  h->Observe(seconds);
}

void SetError(HttpResponse& res, int status, std::string_view message, std::string_view field,
              int64_t field_value) {
  nlohmann::ordered_json body;
  body["error"] = message;
  if (!field.empty()) body[std::string(field)] = field_value;
  res.status = status;
  res.SetContent(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                 "application/json");
}

std::optional<std::string> StreamOfPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/v1/streams/", kSuffix = "/records";
  if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix) ||
      path.size() <= kPrefix.size() + kSuffix.size()) {
    return std::nullopt;
  }
  std::string_view raw = path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  if (raw.find('/') != std::string_view::npos) return std::nullopt;
  return PercentDecode(raw, false);
}

std::string WithoutPaths(std::string_view message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    bool starts_token =
        i == 0 || message[i - 1] == ' ' || message[i - 1] == '(' || message[i - 1] == '\'';
    bool file_uri = message.substr(i).starts_with("file://");
    if (starts_token && (message[i] == '/' || file_uri)) {
      size_t end = message.find_first_of(" ,;)'", i);
      if (end == std::string_view::npos) end = message.size();
      std::string_view token = message.substr(i, end - i);
      while (token.size() > 1 && (token.back() == ':' || token.back() == '.')) {
        token.remove_suffix(1);
        end = i + token.size();
      }
      size_t slash = token.find_last_of('/');
      out += "…/";
      out += token.substr(slash + 1);
      i = end;
      continue;
    }
    out += message[i++];
  }
  return out;
}

bool Router::Authorized(const HttpRequest& req) const {
  if (options_.routes != nullptr && options_.routes->Authenticates() &&
      options_.routes->Claims(req.path)) {
    return true;  // the handler checks its own credentials
  }
  if (options_.bearer_token.empty()) return true;
  // The health check and the dashboard's static assets need no token (the
  // page asks for one to read /v1/status).
  if ((req.method == "GET" || req.method == "HEAD") &&
      (req.path == "/healthz" || RouteOf(req.path) == Route::kDashboard)) {
    return true;
  }
  // The token is compared in constant time in its content.
  return ConstantTimeEquals(req.BearerToken(), options_.bearer_token);
}

std::optional<HttpResponse> Router::Unrouted(const HttpRequest& req) const {
  std::string_view allow;
  Route route = RouteOf(req.path, options_.routes);
  if (route == Route::kCatalog) return std::nullopt;  // the handler answers every method
  if (route == Route::kRecords && StreamOfPath(req.path)) {
    allow = "POST";
  } else if (route == Route::kMetrics || route == Route::kStatus || route == Route::kHealthz ||
             route == Route::kDashboard) {
    allow = "GET, HEAD";
  }
  bool get = req.method == "GET" || req.method == "HEAD";
  if (!allow.empty() && (allow == "POST" ? req.method == "POST" : get)) return std::nullopt;
  HttpResponse res;
  if (allow.empty()) {
    SetError(res, 404, fmt::format("{} {}: no such route", req.method, req.path));
  } else {
    SetError(res, 405,
             fmt::format("{} {}: method not allowed (allowed: {})", req.method, req.path, allow));
    res.Set("Allow", std::string(allow));
  }
  return res;
}

std::optional<HttpResponse> Router::OnHead(const HttpRequest& req) {
  if (!Authorized(req)) {
    HttpResponse res;
    SetError(res, 401, "missing or wrong bearer token");
    res.Set("WWW-Authenticate", "Bearer realm=\"sluice\"");
    return res;
  }
  if (auto refusal = Unrouted(req)) return refusal;
  if (req.method != "POST" && req.announces_body &&
      RouteOf(req.path, options_.routes) != Route::kCatalog) {
    HttpResponse res;
    SetError(res, 400, fmt::format("{} {} takes no body", req.method, req.path));
    return res;
  }
  if (req.method == "POST" && RouteOf(req.path, options_.routes) == Route::kRecords) {
    HttpResponse res;
    IngestContext ctx{target_, options_.max_body_bytes};
    if (PrecheckIngest(ctx, *StreamOfPath(req.path), req, res) != 0) return res;
  }
  return std::nullopt;
}

HttpResponse Router::Handle(const HttpRequest& req) {
  HttpResponse res;
  if (auto refusal = Unrouted(req)) return *refusal;
  Route route = RouteOf(req.path, options_.routes);
  auto start = std::chrono::steady_clock::now();
  switch (route) {
    case Route::kRecords: {
      IngestContext ctx{target_, options_.max_body_bytes};
      HandleIngest(ctx, *StreamOfPath(req.path), req, res);
      break;
    }
    case Route::kMetrics:
      res.SetContent(target_->MetricsText(), "text/plain; version=0.0.4");
      break;
    case Route::kStatus: res.SetContent(target_->StatusJson(), "application/json"); break;
    case Route::kHealthz:  // not timed
      if (auto problem = target_->Unhealthy()) {
        SetError(res, 503, *problem);
      } else {
        res.SetContent("ok", "text/plain");
      }
      // Tells the dashboard to ask for a token before it reads /v1/status.
      if (!options_.bearer_token.empty()) res.Set("X-Sluice-Auth", "bearer");
      return res;
    case Route::kDashboard: {  // not timed
      const DashboardAsset asset = *FindDashboardAsset(req.path);
      res.SetContent(std::string(asset.content), std::string(asset.content_type));
      res.Set("Content-Security-Policy", std::string(kDashboardCsp));
      res.Set("X-Content-Type-Options", "nosniff");
      res.Set("Cache-Control", "no-cache");
      return res;
    }
    case Route::kCatalog: res = options_.routes->Handle(req); break;
    case Route::kOther: break;
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  metrics_.ObserveSeconds(route, took.count());
  return res;
}

}  // namespace sluice::server::internal
