// `sluice serve --listen HOST:PORT`: the warehouse's catalog over the Iceberg
// REST protocol (rest/rest_catalog.h), with /healthz, /metrics (the server's
// own requests) and /v1/status, until SIGTERM/SIGINT. No pipelines run; `sluice
// run --listen` serves the same catalog beside them.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/context.h"
#include "rest/rest_catalog.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace sluice::cli {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:8181";
  std::string token_env = "SLUICE_TOKEN";
  std::string clients_file;
};

// The server's target: no streams to ingest; metrics are the server's own.
class CatalogOnly final : public server::NoStreams {
 public:
  explicit CatalogOnly(std::string catalog) : catalog_(std::move(catalog)) {}
  server::Registry* registry() { return &registry_; }
  std::string MetricsText() override { return registry_.Render(); }
  std::string StatusJson() override {
    return nlohmann::json{{"state", "serving"}, {"catalog", catalog_}}.dump();
  }

 private:
  std::string catalog_;
  server::Registry registry_;
};

Status Serve(const ServeArgs& a) {
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  server::HttpServerOptions so;
  RETURN_IF_ERROR(server::ParseListen(a.listen, &so));
  if (const char* token = std::getenv(a.token_env.c_str()); token && *token) {
    so.bearer_token = token;
  }
  ASSIGN_OR_RETURN(auto auth, MakeCatalogAuth(so.bearer_token, a.clients_file));
  rest::RestCatalogHandler routes(*cat, StorageIO(), WarehousePath(), auth.get());
  CatalogOnly target(cat->name());
  so.routes = &routes;
  so.registry = target.registry();
  ASSIGN_OR_RETURN(auto server, server::HttpServer::Make(so, &target));
  CatchStopSignals();
  RETURN_IF_ERROR(server->Start());
  std::fprintf(stderr, "sluice: serving the REST catalog of %s on http://%s:%d/v1/\n",
               WarehousePath().c_str(), so.host.c_str(), server->port());
  while (StopSignal() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->Stop();
  std::fprintf(stderr, "sluice: stopped\n");
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<rest::CatalogAuth>> MakeCatalogAuth(const std::string& admin_token,
                                                           const std::string& clients_file) {
  rest::CatalogAuthOptions o;
  o.admin_token = admin_token;
  if (!clients_file.empty()) {
    ASSIGN_OR_RETURN(std::string text, StorageIO().ReadFile(clients_file));
    ASSIGN_OR_RETURN(o.clients, rest::ParseCatalogClients(text, clients_file));
  }
  return std::make_unique<rest::CatalogAuth>(std::move(o));
}

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve", "Serve the warehouse's catalog over the Iceberg REST protocol until SIGTERM");
  cmd->add_option("--listen", args->listen, "HOST:PORT (port 0: any)")->capture_default_str();
  cmd->add_option("--token-env", args->token_env,
                  "Environment variable holding the bearer token clients must send (unset or "
                  "empty: no authentication)")
      ->capture_default_str();
  cmd->add_option("--catalog-clients", args->clients_file,
                  "JSON file of OAuth2 clients (id, secret_sha256, namespaces, read_only) that "
                  "trade their secret for a token at /v1/oauth/tokens and see only their "
                  "namespaces");
  cmd->callback([args, exit_code] {
    Status st = Serve(*args);
    *exit_code = st.ok() ? 0 : ReportError("serve", st);
  });
}

}  // namespace sluice::cli
