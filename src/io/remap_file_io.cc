#include "io/remap_file_io.h"

#include <map>
#include <optional>
#include <string_view>

namespace sluice {

namespace {

// A local path's three spellings ("file:///a", "file:/a", "/a") compare as one.
std::string_view Bare(std::string_view p) {
  if (p.substr(0, 7) == "file://") return p.substr(7);
  if (p.substr(0, 5) == "file:") return p.substr(5);
  return p;
}

// The part of `path` after `prefix` when `path` lies under it: equal to it,
// or continuing with a '/' (a prefix /data/t does not hold /data/t2).
std::optional<std::string_view> Below(std::string_view path, std::string_view prefix) {
  path = Bare(path);
  prefix = Bare(prefix);
  if (path.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = path.substr(prefix.size());
  if (rest.empty() || rest[0] == '/' || (!prefix.empty() && prefix.back() == '/')) return rest;
  return std::nullopt;
}

// The first remap whose `from` (or, `back`: whose `to`) holds `path`.
const std::pair<std::string, std::string>* Find(const std::string& path, const Remaps& remaps,
                                                bool back) {
  for (const auto& r : remaps) {
    if (Below(path, back ? r.second : r.first)) return &r;
  }
  return nullptr;
}

std::string Swap(const std::string& path, const std::string& from, const std::string& to) {
  return to + std::string(*Below(path, from));
}

class RemappedInput : public InputFile {
 public:
  RemappedInput(std::unique_ptr<InputFile> in, std::string path)
      : in_(std::move(in)), path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  int64_t size() const override { return in_->size(); }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    return in_->ReadAt(offset, length, out);
  }

 private:
  std::unique_ptr<InputFile> in_;
  std::string path_;
};

class RemappedOutput : public OutputFile {
 public:
  RemappedOutput(std::unique_ptr<OutputFile> out, std::string path)
      : out_(std::move(out)), path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  Status Append(std::string_view data) override { return out_->Append(data); }
  int64_t position() const override { return out_->position(); }
  Status Close(bool sync) override { return out_->Close(sync); }
  void Abort() override { out_->Abort(); }

 private:
  std::unique_ptr<OutputFile> out_;
  std::string path_;
};

class RemapFileIO : public FileIO {
 public:
  RemapFileIO(FileIO& base, Remaps remaps) : base_(base), remaps_(std::move(remaps)) {}

  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override {
    ASSIGN_OR_RETURN(auto in, base_.OpenInput(ApplyRemap(path, remaps_)));
    return std::unique_ptr<InputFile>(std::make_unique<RemappedInput>(std::move(in), path));
  }
  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path, bool overwrite) override {
    ASSIGN_OR_RETURN(auto out, base_.OpenOutput(ApplyRemap(path, remaps_), overwrite));
    return std::unique_ptr<OutputFile>(std::make_unique<RemappedOutput>(std::move(out), path));
  }
  Result<bool> Exists(const std::string& path) override {
    return base_.Exists(ApplyRemap(path, remaps_));
  }
  Status Delete(const std::string& path) override {
    return base_.Delete(ApplyRemap(path, remaps_));
  }
  std::vector<std::string> DeleteAll(const std::vector<std::string>& paths) override {
    std::vector<std::string> mapped;
    std::map<std::string, std::string> original;
    for (const std::string& p : paths) {
      mapped.push_back(ApplyRemap(p, remaps_));
      original[mapped.back()] = p;
    }
    std::vector<std::string> failures = base_.DeleteAll(mapped);
    for (std::string& f : failures) {  // "PATH: reason", named by the caller's path
      auto it = original.find(f.substr(0, f.find(": ")));
      if (it != original.end()) f = it->second + f.substr(it->first.size());
    }
    return failures;
  }
  // Listed under the remap the prefix took, and named back through that one
  // alone (a prefix no remap holds is listed as it is).
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(auto files, ListStatus(prefix));
    std::vector<std::string> paths;
    for (FileStatus& f : files) paths.push_back(std::move(f.path));
    return paths;
  }
  Result<std::vector<FileStatus>> ListStatus(const std::string& prefix) override {
    const auto* r = Find(prefix, remaps_, false);
    if (r == nullptr) return base_.ListStatus(prefix);
    ASSIGN_OR_RETURN(auto listed, base_.ListStatus(Swap(prefix, r->first, r->second)));
    std::vector<FileStatus> files;
    for (FileStatus& f : listed) {
      // (a sibling the string prefix also matched, /copy/t2 for /copy/t, has
      // no name under `from`: it is not listed)
      if (!Below(f.path, r->second)) continue;
      f.path = Swap(f.path, r->second, r->first);
      files.push_back(std::move(f));
    }
    return files;
  }

 private:
  FileIO& base_;
  const Remaps remaps_;
};

}  // namespace

std::string ApplyRemap(const std::string& path, const Remaps& remaps) {
  const auto* r = Find(path, remaps, false);
  return r == nullptr ? path : Swap(path, r->first, r->second);
}

std::string UnapplyRemap(const std::string& path, const Remaps& remaps) {
  const auto* r = Find(path, remaps, true);
  return r == nullptr ? path : Swap(path, r->second, r->first);
}

std::unique_ptr<FileIO> MakeRemapFileIO(FileIO& base, Remaps remaps) {
  return std::make_unique<RemapFileIO>(base, std::move(remaps));
}

}  // namespace sluice
