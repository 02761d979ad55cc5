#include "server/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "server/http_internal.h"

namespace sluice::server {

namespace internal {

std::string_view RouteName(Route route) {
  switch (route) {
    case Route::kRecords: return "records";
    case Route::kMetrics: return "metrics";
    case Route::kStatus: return "status";
    case Route::kHealthz: return "healthz";
    case Route::kOther: return "other";
  }
  return "other";
}

Route RouteOf(const httplib::Request& req) {
  const std::string& p = req.path;
  if (p == "/metrics") return Route::kMetrics;
  if (p == "/v1/status") return Route::kStatus;
  if (p == "/healthz") return Route::kHealthz;
  if (p.starts_with("/v1/streams/") && p.ends_with("/records")) return Route::kRecords;
  return Route::kOther;
}

Status RequestMetrics::Init(Registry* registry) {
  if (registry == nullptr) return Status::OK();
  ASSIGN_OR_RETURN(requests_, registry->AddCounter("sluice_http_requests_total",
                                                   "HTTP requests answered, by route and "
                                                   "status code.",
                                                   {"route", "code"}));
  ASSIGN_OR_RETURN(durations_, registry->AddHistogram("sluice_http_request_duration_seconds",
                                                      "Time to handle an HTTP request (body read, "
                                                      "validation, durable append), by route.",
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

void SetError(httplib::Response& res, int status, std::string_view message, std::string_view field,
              int64_t field_value) {
  nlohmann::ordered_json body;
  body["error"] = message;
  if (!field.empty()) body[std::string(field)] = field_value;
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

bool HasBody(const httplib::Request& req) {
  if (req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos) return true;
  return req.has_header("Content-Length") && req.get_header_value<uint64_t>("Content-Length") > 0;
}

}  // namespace internal

using internal::Route;

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, IngestTarget* target)
      : options_(std::move(options)), target_(target) {}

  Status InitMetrics() { return metrics_.Init(options_.registry); }

  ~Impl() { Stop(); }

  Result<int> Start() {
    if (started_) return Status::Invalid("http server: already started");
    started_ = true;
    Configure();
    int port = options_.port;
    errno = 0;
    bool bound = port == 0 ? (port = server_.bind_to_any_port(options_.host)) > 0
                           : server_.bind_to_port(options_.host, port);
    if (!bound) {
      int err = errno;
      return Status::IOError("http server: cannot listen on {}:{}{}", options_.host, options_.port,
                             err != 0 ? ": " + std::string(strerror(err)) : "");
    }
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
    // stop() is a no-op until the accept loop runs, so wait for it.
    while (!server_.is_running() && !listen_returned_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return port;
  }

  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  bool Authorized(const httplib::Request& req) const {
    if (options_.bearer_token.empty()) return true;
    if (req.method == "GET" && req.path == "/healthz") return true;
    std::string given = req.get_header_value("Authorization");
    // The scheme is case-insensitive (RFC 9110); the token is compared in constant time
    // in its content.
    constexpr std::string_view kScheme = "bearer ";
    if (given.size() != kScheme.size() + options_.bearer_token.size()) return false;
    for (size_t i = 0; i < kScheme.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(given[i])) != kScheme[i]) return false;
    }
    unsigned diff = 0;
    for (size_t i = 0; i < options_.bearer_token.size(); ++i) {
      diff |= static_cast<unsigned char>(options_.bearer_token[i]) ^
              static_cast<unsigned char>(given[kScheme.size() + i]);
    }
    return diff == 0;
  }

  void Refuse401(const httplib::Request& req, httplib::Response& res) const {
    internal::SetError(res, 401, "missing or wrong bearer token");
    res.set_header("WWW-Authenticate", "Bearer realm=\"sluice\"");
    if (internal::HasBody(req)) res.set_header("Connection", "close");
  }

  // Wrap handlers to time them.
  httplib::Server::Handler Timed(Route route, httplib::Server::Handler fn) {
    return [this, route, fn](const httplib::Request& req, httplib::Response& res) {
      auto start = std::chrono::steady_clock::now();
      fn(req, res);
      std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      metrics_.ObserveSeconds(route, took.count());
    };
  }
  httplib::Server::HandlerWithContentReader TimedReader(
      Route route, httplib::Server::HandlerWithContentReader fn) {
    return [this, route, fn](const httplib::Request& req, httplib::Response& res,
                             const httplib::ContentReader& reader) {
      auto start = std::chrono::steady_clock::now();
      fn(req, res, reader);
      std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      metrics_.ObserveSeconds(route, took.count());
    };
  }

  void Configure() {
    int workers = options_.worker_threads;
    server_.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    // httplib sets SO_REUSEPORT by default, which lets a second server bind a port in
    // use; SO_REUSEADDR only, so a taken port is an error.
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server_.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
    server_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
    server_.set_read_timeout(options_.read_timeout_s);
    server_.set_tcp_nodelay(true);

    internal::IngestContext ctx{target_, options_.max_body_bytes};

    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      Refuse401(req, res);
      return httplib::Server::HandlerResponse::Handled;
    });
    // Refuse before the client sends its body when the headers already decide.
    server_.set_expect_100_continue_handler(
        [this, ctx](const httplib::Request& req, httplib::Response& res) {
          int code = 100;
          if (!Authorized(req)) {
            Refuse401(req, res);
            code = 401;
          } else if (req.method == "POST") {
            static const std::regex kPath("/v1/streams/([^/]+)/records");
            std::smatch m;
            if (std::regex_match(req.path, m, kPath)) {
              code = internal::PrecheckIngest(ctx, m[1].str(), req, res);
              if (code == 0) code = 100;
            }
          }
          if (code != 100) res.set_header("Connection", "close");
          return code;
        });
    server_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      metrics_.Count(internal::RouteOf(req), res.status);
    });
    httplib::Server::HandlerWithResponse on_error = [](const httplib::Request& req,
                                                       httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      internal::SetError(res, res.status,
                         fmt::format("{} {}: HTTP {}{}", req.method, req.path, res.status,
                                     res.status == 404 ? " (no such route)" : ""));
      return httplib::Server::HandlerResponse::Handled;
    };
    server_.set_error_handler(std::move(on_error));

    server_.Post(
        "/v1/streams/([^/]+)/records",
        TimedReader(Route::kRecords, [ctx](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
          internal::HandleIngest(ctx, req, res, reader);
        }));
    server_.Get("/metrics",
                Timed(Route::kMetrics, [this](const httplib::Request&, httplib::Response& res) {
                  res.set_content(target_->MetricsText(), "text/plain; version=0.0.4");
                }));
    server_.Get("/v1/status",
                Timed(Route::kStatus, [this](const httplib::Request&, httplib::Response& res) {
                  res.set_content(target_->StatusJson(), "application/json");
                }));
    server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
  }

  const HttpServerOptions options_;
  IngestTarget* const target_;
  internal::RequestMetrics metrics_;
  httplib::Server server_;
  std::thread thread_;  // runs the accept loop
  std::atomic<bool> listen_returned_{false};
  bool started_ = false;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Make(HttpServerOptions options,
                                                     IngestTarget* target) {
  if (target == nullptr) return Status::Invalid("http server: no ingest target");
  if (options.port < 0 || options.port > 65535) {
    return Status::Invalid("http server: port {} out of range", options.port);
  }
  if (options.worker_threads < 1) {
    return Status::Invalid("http server: worker_threads must be >= 1, got {}",
                           options.worker_threads);
  }
  if (options.max_body_bytes < 1) {
    return Status::Invalid("http server: max_body_bytes must be >= 1, got {}",
                           options.max_body_bytes);
  }
  if (options.keep_alive_timeout_s < 0 || options.read_timeout_s < 1) {
    return Status::Invalid("http server: bad timeouts (keep-alive {} s, read {} s)",
                           options.keep_alive_timeout_s, options.read_timeout_s);
  }
  auto impl = std::make_unique<Impl>(std::move(options), target);
  RETURN_IF_ERROR(impl->InitMetrics());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  ASSIGN_OR_RETURN(port_, impl_->Start());
  return Status::OK();
}

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace sluice::server
