#include "cli/context.h"

#include <filesystem>

#include "io/remap_file_io.h"

namespace sluice::cli {

namespace fs = std::filesystem;

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

FileIO& LocalIO() {
  static std::unique_ptr<FileIO> local = MakeLocalFileIO();
  static std::unique_ptr<FileIO> io = [] {
    Remaps remaps = GlobalRemaps();
    return remaps.empty() ? nullptr : MakeRemapFileIO(*local, std::move(remaps));
  }();
  return io ? *io : *local;
}

std::string WarehousePath() {
  std::error_code ec;
  fs::create_directories(Globals().warehouse, ec);
  return fs::absolute(Globals().warehouse).lexically_normal().string();
}

Result<catalog::Catalog*> OpenGlobalCatalog() {
  static std::unique_ptr<catalog::Catalog> catalog;
  if (!catalog) {
    std::string uri = Globals().catalog;
    if (uri.empty()) uri = "sqlite:" + WarehousePath() + "/catalog.db";
    ASSIGN_OR_RETURN(catalog, catalog::OpenCatalog(uri));
  }
  return catalog.get();
}

Result<std::unique_ptr<catalog::Table>> OpenTable(const std::string& name) {
  std::error_code ec;
  if (name.find('/') != std::string::npos || fs::exists(name, ec)) {
    std::string path = name;
    if (fs::is_directory(path, ec)) {
      // A table folder: metadata/version-hint.text, else the highest version
      // (NNNNN-uuid.metadata.json or vN.metadata.json).
      std::string best;
      int64_t best_version = -1;
      for (const auto& e : fs::directory_iterator(fs::path(path) / "metadata", ec)) {
        std::string f = e.path().filename().string();
        if (!f.ends_with(".metadata.json")) continue;
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
      auto hint = LocalIO().ReadFile((fs::path(path) / "metadata" / "version-hint.text").string());
      if (hint.ok()) {
        std::string v = *hint;
        while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
        if (fs::exists(fs::path(path) / "metadata" / ("v" + v + ".metadata.json"), ec)) {
          best = "v" + v + ".metadata.json";
        }
      }
      if (best.empty()) {
        return Status::NotFound("{} has no metadata/*.metadata.json", path);
      }
      path = (fs::path(path) / "metadata" / best).string();
    }
    return catalog::Table::LoadFromMetadataFile(LocalIO(), path);
  }
  ASSIGN_OR_RETURN(catalog::TableIdent ident, catalog::TableIdent::Parse(name));
  ASSIGN_OR_RETURN(catalog::Catalog * cat, OpenGlobalCatalog());
  return catalog::Table::Load(*cat, LocalIO(), ident);
}

}  // namespace sluice::cli
