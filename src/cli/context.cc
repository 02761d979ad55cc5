#include "cli/context.h"

#include <signal.h>

#include <atomic>
#include <filesystem>

#include "catalog/rest_client.h"
#include "io/remap_file_io.h"
#include "io/s3/s3_file_io.h"

namespace sluice::cli {

namespace fs = std::filesystem;

namespace {
std::atomic<int> g_stop_signal{0};
void OnStopSignal(int sig) { g_stop_signal.store(sig); }
}  // namespace

void CatchStopSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int StopSignal() { return g_stop_signal.load(); }

GlobalOptions& Globals() {
  static GlobalOptions options;
  return options;
}

Remaps GlobalRemaps() {
  Remaps remaps;
  for (const std::string& r : Globals().remaps) {  // (main checked the form)
    size_t eq = r.find('=');
    remaps.emplace_back(r.substr(0, eq), r.substr(eq + 1));
  }
  return remaps;
}

FileIO& StorageIO() {
  static std::unique_ptr<FileIO> storage = MakeStorageFileIO();
  static std::unique_ptr<FileIO> io = [] {
    Remaps remaps = GlobalRemaps();
    return remaps.empty() ? nullptr : MakeRemapFileIO(*storage, std::move(remaps));
  }();
  return io ? *io : *storage;
}

std::string WarehousePath() {
  std::string w = Globals().warehouse;
  if (s3::IsS3Path(w)) {
    while (w.size() > 1 && w.back() == '/') w.pop_back();
    return w;
  }
  std::error_code ec;
  fs::create_directories(w, ec);
  return fs::absolute(w).lexically_normal().string();
}

Result<std::string> StateDir() {
  if (!Globals().state_dir.empty()) {
    if (s3::IsS3Path(Globals().state_dir)) {
      return Status::Invalid("--state-dir {}: stream logs and journals need local disk",
                             Globals().state_dir);
    }
    return fs::absolute(Globals().state_dir).lexically_normal().string();
  }
  if (s3::IsS3Path(Globals().warehouse)) {
    return Status::Invalid(
        "warehouse {} is on S3: give --state-dir DIR, a local folder for stream logs and "
        "pipeline journals",
        Globals().warehouse);
  }
  return WarehousePath() + "/_sluice";
}

Result<catalog::Catalog*> OpenGlobalCatalog() {
  static std::unique_ptr<catalog::Catalog> catalog;
  if (!catalog) {
    std::string uri = Globals().catalog;
    if (uri.empty() && s3::IsS3Path(Globals().warehouse)) {
      return Status::Invalid(
          "warehouse {} is on S3: give --catalog (sqlite:PATH on local disk, or "
          "postgresql://...)",
          Globals().warehouse);
    }
    if (uri.empty()) uri = "sqlite:" + WarehousePath() + "/catalog.db";
    if (catalog::IsRestCatalogUri(uri)) {
      catalog::RestClientOptions o;
      if (const char* t = std::getenv("SLUICE_CATALOG_TOKEN")) o.token = t;
      if (const char* c = std::getenv("SLUICE_CATALOG_CREDENTIAL")) o.credential = c;
      ASSIGN_OR_RETURN(catalog, catalog::OpenRestCatalog(uri, StorageIO(), o));
    } else {
      ASSIGN_OR_RETURN(catalog, catalog::OpenCatalog(uri));
    }
  }
  return catalog.get();
}

namespace {

// The current metadata file of a table folder (local or on S3):
// metadata/version-hint.text when it names an existing vN.metadata.json, else
// the highest version (NNNNN-uuid.metadata.json or vN.metadata.json).
Result<std::string> CurrentMetadataFile(const std::string& folder) {
  std::string dir = folder;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  dir += "/metadata/";
  auto listed = StorageIO().List(dir);
  if (!listed.ok() && listed.status().code() != StatusCode::kNotFound) return listed.status();
  std::string best;
  int64_t best_version = -1;
  for (const std::string& p : listed.ValueOr({})) {
    std::string f = p.substr(p.rfind('/') + 1);
    if (!f.ends_with(".metadata.json") || p.size() != dir.size() + f.size()) continue;
    size_t i = f[0] == 'v' ? 1 : 0;
    int64_t version = 0;
    while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i]))) {
      version = version * 10 + (f[i++] - '0');
    }
    if (version > best_version || (version == best_version && f > best)) {
      best = f;
      best_version = version;
    }
  }
  auto hint = StorageIO().ReadFile(dir + "version-hint.text");
  if (hint.ok()) {
    std::string v = *hint;
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    auto exists = StorageIO().Exists(dir + "v" + v + ".metadata.json");
    if (exists.ok() && *exists) best = "v" + v + ".metadata.json";
  }
  if (best.empty()) return Status::NotFound("{} has no metadata/*.metadata.json", folder);
  return dir + best;
}

}  // namespace

Result<std::unique_ptr<catalog::Table>> OpenTable(const std::string& name) {
  std::error_code ec;
  if (name.find('/') != std::string::npos || fs::exists(name, ec)) {
    std::string path = name;
    if (!path.ends_with(".metadata.json") && !fs::is_regular_file(path, ec)) {
      ASSIGN_OR_RETURN(path, CurrentMetadataFile(path));
    }
    return catalog::Table::LoadFromMetadataFile(StorageIO(), path);
  }
  ASSIGN_OR_RETURN(catalog::TableIdent ident, catalog::TableIdent::Parse(name));
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  return catalog::Table::Load(*cat, StorageIO(), ident);
}

}  // namespace sluice::cli
