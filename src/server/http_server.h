// HttpServer: sluice's HTTP ingest endpoint. Producers POST JSON records to a stream;
// the server validates them, appends them to the stream's durable log and answers
// once the log has acknowledged them. It also serves /metrics, /v1/status and
// /healthz. The wire contract (routes, status codes, headers, idempotency window) is
// docs/http_api.md.
//
// The server knows nothing of pipelines: it reaches the rest of sluice only through
// IngestTarget, implemented by whoever runs it (`sluice run`) and by tests.
//
// Threads: Start() serves on background threads: one event loop (epoll) owns every
// connection (accept, read, parse, write, deadlines) and hands whole requests to
// `worker_threads` workers, which run the routes (the durable append waits there).
// Idle and slow clients therefore cost a connection slot and a little memory, never
// a worker. IngestTarget methods are called concurrently from the workers and the
// loop (the checks before a body is read) and must be thread-safe and, on the loop,
// quick. Stop() (also run by the destructor) closes the listener and every idle or
// half-read connection at once, lets requests already being handled finish and
// answer, and joins every thread; it does not wait for slow clients. The target
// must outlive Stop().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "log/stream_log.h"
#include "server/http_message.h"

namespace sluice::server {

class Registry;

// A refusal of new records for a stream, sent with `Retry-After: <retry_after_s>`.
struct Backpressure {
  enum class Kind {
    kBehind,       // 429 Too Many Requests: the stream's consumers are too far behind
    kUnavailable,  // 503 Service Unavailable: shutting down or not ready
  };
  Kind kind = Kind::kBehind;
  int retry_after_s = 1;  // >= 1
  std::string reason;     // put in the JSON error body
};

// What the server needs from the rest of sluice. Every method may be called from
// several worker threads at once.
class IngestTarget {
 public:
  virtual ~IngestTarget() = default;
  // The log of stream `name`, or null when there is no such stream (404). The log
  // must stay valid until the server is stopped.
  virtual log::StreamLog* FindStream(const std::string& name) = 0;
  // Asked before each append to an existing stream: nullopt accepts the request.
  virtual std::optional<Backpressure> CheckBackpressure(const std::string& stream) = 0;
  // Called after records were durably appended (not for duplicates), for metrics;
  // `bytes` is the sum of the records' sizes.
  virtual void OnAppended(const std::string& stream, int64_t records, int64_t bytes) = 0;
  // GET /metrics body (Prometheus text format 0.0.4) and GET /v1/status body (JSON).
  virtual std::string MetricsText() = 0;
  virtual std::string StatusJson() = 0;
  // Why GET /healthz should answer 503 (a log that cannot append, a failed
  // pipeline), or nullopt while healthy. Shown without a token: no paths or secrets.
  virtual std::optional<std::string> Unhealthy() { return std::nullopt; }
};

// A target with no streams (an append answers 404): a server of other routes
// only, such as `sluice serve`'s catalog; empty metrics and status unless a
// subclass gives its own.
class NoStreams : public IngestTarget {
 public:
  log::StreamLog* FindStream(const std::string&) override { return nullptr; }
  std::optional<Backpressure> CheckBackpressure(const std::string&) override {
    return std::nullopt;
  }
  void OnAppended(const std::string&, int64_t, int64_t) override {}
  std::string MetricsText() override { return ""; }
  std::string StatusJson() override { return "{}"; }
};

// More routes on the server's port (the Iceberg REST catalog): the handler
// claims paths; the server authenticates (bearer token), reads the body (up to
// max_body_bytes) and calls Handle on a worker thread. The handler answers
// every method itself (405 included). Thread-safe; must outlive the server.
class RouteHandler {
 public:
  virtual ~RouteHandler() = default;
  virtual bool Claims(std::string_view path) const = 0;
  virtual HttpResponse Handle(const HttpRequest& req) = 0;
  // True when Handle checks each request's credentials itself (and answers
  // 401): the server's bearer token then does not guard the claimed paths.
  virtual bool Authenticates() const { return false; }
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                       // 0: any free port; see HttpServer::port()
  std::string bearer_token;           // empty: no authentication
  int64_t max_body_bytes = 16 << 20;  // larger bodies are refused with 413
  int worker_threads = 4;             // requests handled at once (appends in flight)
  // Open connections at most; one more is answered 503 and closed. Also bounded by
  // the process's open-file limit (raised to its hard limit when lower): at most
  // half of it goes to connections.
  int max_connections = 10000;
  // Deadlines. A connection with no request started is closed after
  // keep_alive_timeout_s; a request's header section must arrive within
  // header_timeout_s of its first byte and its body within body_timeout_s of the
  // header section (else 408 and close); an answer must be taken by the client
  // within write_timeout_s (else the connection is dropped).
  int keep_alive_timeout_s = 5;
  int header_timeout_s = 10;
  int body_timeout_s = 60;
  int write_timeout_s = 30;
  // Request bodies held in memory at once, over all connections; a request whose
  // body would pass it is answered 503 with Retry-After.
  int64_t max_buffered_body_bytes = 1LL << 30;
  // Optional: when set, the server counts its own requests here
  // (sluice_http_requests_total{route,code}, sluice_http_request_duration_seconds{route}).
  // Must outlive the server.
  Registry* registry = nullptr;
  // Optional: further routes (see RouteHandler).
  RouteHandler* routes = nullptr;
};

// "host:port" (a listen option) into options.host and options.port, or a clear
// error naming the option's value.
Status ParseListen(const std::string& listen, HttpServerOptions* options);

class HttpServer {
 public:
  // Checks the options and registers the server's metrics; does not bind yet.
  static Result<std::unique_ptr<HttpServer>> Make(HttpServerOptions options, IngestTarget* target);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port and starts serving in the background. kIOError if the address
  // cannot be bound (port taken, bad host); kInvalidArgument if already started.
  Status Start();
  // Stops accepting, finishes in-flight requests, joins the threads. Idempotent.
  void Stop();

  // The bound port (useful with port 0); 0 before Start().
  int port() const { return port_; }
  // Connections open right now (for tests and status).
  int open_connections() const;
  // The connection limit in force (max_connections, lowered by the open-file limit).
  int connection_limit() const;

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// The log producer id an Idempotency-Key header maps to: the FNV-1a 64-bit hash of
// the key's bytes with the top bit cleared. Persisted in the log, so it never changes.
int64_t IdempotencyProducerId(std::string_view key);

}  // namespace sluice::server
