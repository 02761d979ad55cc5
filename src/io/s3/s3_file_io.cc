#include "io/s3/s3_file_io.h"

#include <map>
#include <mutex>

namespace sluice::s3 {
namespace {

constexpr int64_t kTailBytes = 64 << 10;
constexpr size_t kDeleteBatch = 1000;  // S3's limit per DeleteObjects

class S3InputFile final : public InputFile {
 public:
  S3InputFile(std::shared_ptr<S3Client> client, ObjectPath where, std::string path, int64_t size)
      : client_(std::move(client)), where_(std::move(where)), path_(std::move(path)), size_(size) {}
  const std::string& path() const override { return path_; }
  int64_t size() const override { return size_; }

  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    RETURN_IF_ERROR(CheckReadRange(path_, offset, length, size_));
    int64_t tail_start = std::max<int64_t>(0, size_ - kTailBytes);
    if (offset >= tail_start && length < size_ - tail_start) {
      if (!tail_loaded_) {
        RETURN_IF_ERROR(
            client_->Get(where_.bucket, where_.key, tail_start, size_ - tail_start, &tail_));
        tail_loaded_ = true;
      }
      out->assign(tail_, static_cast<size_t>(offset - tail_start), static_cast<size_t>(length));
      return Status::OK();
    }
    return client_->Get(where_.bucket, where_.key, offset, length, out);
  }

 private:
  std::shared_ptr<S3Client> client_;
  ObjectPath where_;
  std::string path_;
  int64_t size_;
  mutable bool tail_loaded_ = false;
  mutable std::string tail_;
};

class S3OutputFile final : public OutputFile {
 public:
  S3OutputFile(std::shared_ptr<S3Client> client, ObjectPath where, std::string path, bool overwrite)
      : client_(std::move(client)),
        where_(std::move(where)),
        path_(std::move(path)),
        overwrite_(overwrite) {}
  ~S3OutputFile() override { Abort(); }
  const std::string& path() const override { return path_; }
  int64_t position() const override { return position_; }

  Status Append(std::string_view data) override {
    if (done_) return Status::Internal("file {}: append after close", path_);
    buffer_.append(data);
    position_ += static_cast<int64_t>(data.size());
    if (static_cast<int64_t>(buffer_.size()) >= client_->options().part_size) {
      return FlushPart();
    }
    return Status::OK();
  }

  Status Close(bool /*sync: S3 acknowledges durable writes*/) override {
    if (done_) return Status::Internal("file {}: closed twice", path_);
    Status st = Finish();
    if (!st.ok()) Abort();
    done_ = true;
    return st.WithContextF("writing {}", path_);
  }

  void Abort() override {
    if (!upload_id_.empty()) {
      (void)client_->AbortUpload(where_.bucket, where_.key, upload_id_);
      upload_id_.clear();
    }
    buffer_.clear();
    done_ = true;
  }

 private:
  Status FlushPart() {
    if (upload_id_.empty()) {
      ASSIGN_OR_RETURN(upload_id_, client_->StartUpload(where_.bucket, where_.key));
    }
    int number = static_cast<int>(parts_.size()) + 1;
    ASSIGN_OR_RETURN(std::string etag,
                     client_->UploadPart(where_.bucket, where_.key, upload_id_, number, buffer_));
    parts_.push_back({number, std::move(etag)});
    buffer_.clear();
    return Status::OK();
  }

  Status Finish() {
    if (!overwrite_) {
      auto info = client_->Head(where_.bucket, where_.key);
      if (info.ok()) return Status::AlreadyExists("file {} already exists", path_);
      if (info.status().code() != StatusCode::kNotFound) return info.status();
    }
    if (upload_id_.empty()) {
      return client_->Put(where_.bucket, where_.key, buffer_, !overwrite_);
    }
    if (!buffer_.empty()) RETURN_IF_ERROR(FlushPart());
    RETURN_IF_ERROR(client_->CompleteUpload(where_.bucket, where_.key, upload_id_, parts_,
                                            position_, !overwrite_));
    upload_id_.clear();
    return Status::OK();
  }

  std::shared_ptr<S3Client> client_;
  ObjectPath where_;
  std::string path_;
  bool overwrite_;
  bool done_ = false;
  int64_t position_ = 0;
  std::string buffer_;
  std::string upload_id_;
  std::vector<CompletedPart> parts_;
};

class S3FileIO final : public FileIO {
 public:
  explicit S3FileIO(std::shared_ptr<S3Client> client) : client_(std::move(client)) {}

  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override {
    ASSIGN_OR_RETURN(ObjectPath where, ParseS3Path(path));
    auto info = client_->Head(where.bucket, where.key);
    if (!info.ok()) {
      if (info.status().code() == StatusCode::kNotFound) {
        return Status::NotFound("file {} not found", path);
      }
      return info.status();
    }
    if (info->size < 0) return Status::IOError("file {}: S3 gave no size", path);
    return std::unique_ptr<InputFile>(
        std::make_unique<S3InputFile>(client_, std::move(where), path, info->size));
  }

  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path, bool overwrite) override {
    ASSIGN_OR_RETURN(ObjectPath where, ParseS3Path(path));
    if (where.key.empty() || where.key.back() == '/') {
      return Status::Invalid("'{}' names no object", path);
    }
    return std::unique_ptr<OutputFile>(
        std::make_unique<S3OutputFile>(client_, std::move(where), path, overwrite));
  }

  Result<bool> Exists(const std::string& path) override {
    ASSIGN_OR_RETURN(ObjectPath where, ParseS3Path(path));
    auto info = client_->Head(where.bucket, where.key);
    if (info.ok()) return true;
    if (info.status().code() == StatusCode::kNotFound) return false;
    return info.status();
  }

  Status Delete(const std::string& path) override {
    ASSIGN_OR_RETURN(bool exists, Exists(path));
    if (!exists) return Status::NotFound("file {} not found", path);
    ASSIGN_OR_RETURN(ObjectPath where, ParseS3Path(path));
    return client_->Delete(where.bucket, where.key);
  }

  // DeleteObjects, 1,000 keys a request, per bucket.
  std::vector<std::string> DeleteAll(const std::vector<std::string>& paths) override {
    std::vector<std::string> failures;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_bucket;
    for (const std::string& p : paths) {
      auto where = ParseS3Path(p);
      if (!where.ok()) {
        failures.push_back(p + ": " + where.status().ToString());
        continue;
      }
      by_bucket[where->bucket].emplace_back(where->key, p);
    }
    for (const auto& [bucket, objects] : by_bucket) {
      for (size_t at = 0; at < objects.size(); at += kDeleteBatch) {
        size_t end = std::min(objects.size(), at + kDeleteBatch);
        std::vector<std::string> keys;
        for (size_t i = at; i < end; ++i) keys.push_back(objects[i].first);
        auto failed = client_->DeleteMany(bucket, keys);
        if (!failed.ok()) {
          for (size_t i = at; i < end; ++i) {
            failures.push_back(objects[i].second + ": " + failed.status().ToString());
          }
          continue;
        }
        // ("key: reason" from S3, named again by the caller's path)
        std::map<std::string_view, std::string_view> path_of;
        for (size_t i = at; i < end; ++i) path_of[objects[i].first] = objects[i].second;
        for (const std::string& f : *failed) {
          std::string_view key = std::string_view(f).substr(0, f.find(": "));
          auto it = path_of.find(key);
          failures.push_back(it == path_of.end()
                                 ? fmt::format("s3://{}/{}", bucket, f)
                                 : fmt::format("{}{}", it->second, f.substr(key.size())));
        }
      }
    }
    return failures;
  }

  Result<std::vector<std::string>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(std::vector<FileStatus> listed, ListStatus(prefix));
    std::vector<std::string> paths;
    paths.reserve(listed.size());
    for (FileStatus& f : listed) paths.push_back(std::move(f.path));
    return paths;
  }

  Result<std::vector<FileStatus>> ListStatus(const std::string& prefix) override {
    ASSIGN_OR_RETURN(ObjectPath where, ParseS3Path(prefix));
    std::vector<FileStatus> out;
    std::string token;
    do {
      ASSIGN_OR_RETURN(ListPage page, client_->List(where.bucket, where.key, token));
      for (ListedObject& o : page.objects) {
        out.push_back(
            {fmt::format("{}://{}/{}", where.scheme, where.bucket, o.key), o.size, o.modified_ms});
      }
      token = std::move(page.next_token);
    } while (!token.empty());
    return out;
  }

 private:
  std::shared_ptr<S3Client> client_;
};

}  // namespace

std::unique_ptr<FileIO> MakeS3FileIO(std::shared_ptr<S3Client> client) {
  return std::make_unique<S3FileIO>(std::move(client));
}

}  // namespace sluice::s3

namespace sluice {
namespace {

class StorageFileIO final : public FileIO {
 public:
  Result<std::unique_ptr<InputFile>> OpenInput(const std::string& path) override {
    ASSIGN_OR_RETURN(FileIO * io, For(path));
    return io->OpenInput(path);
  }
  Result<std::unique_ptr<OutputFile>> OpenOutput(const std::string& path, bool overwrite) override {
    ASSIGN_OR_RETURN(FileIO * io, For(path));
    return io->OpenOutput(path, overwrite);
  }
  Result<bool> Exists(const std::string& path) override {
    ASSIGN_OR_RETURN(FileIO * io, For(path));
    return io->Exists(path);
  }
  Status Delete(const std::string& path) override {
    ASSIGN_OR_RETURN(FileIO * io, For(path));
    return io->Delete(path);
  }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    ASSIGN_OR_RETURN(FileIO * io, For(prefix));
    return io->List(prefix);
  }
  Result<std::vector<FileStatus>> ListStatus(const std::string& prefix) override {
    ASSIGN_OR_RETURN(FileIO * io, For(prefix));
    return io->ListStatus(prefix);
  }
  std::vector<std::string> DeleteAll(const std::vector<std::string>& paths) override {
    std::vector<std::string> local, s3, failures;
    for (const std::string& p : paths) (s3::IsS3Path(p) ? s3 : local).push_back(p);
    failures = local_->DeleteAll(local);
    if (!s3.empty()) {
      auto io = For(s3.front());
      if (!io.ok()) {
        for (const std::string& p : s3) failures.push_back(p + ": " + io.status().ToString());
      } else {
        for (std::string& f : (*io)->DeleteAll(s3)) failures.push_back(std::move(f));
      }
    }
    return failures;
  }

 private:
  Result<FileIO*> For(const std::string& path) {
    if (!s3::IsS3Path(path)) return local_.get();
    std::lock_guard lock(mu_);
    if (!s3_) {
      ASSIGN_OR_RETURN(s3::S3Options options, s3::OptionsFromEnvironment());
      s3_ = s3::MakeS3FileIO(std::make_shared<s3::S3Client>(std::move(options)));
    }
    return s3_.get();
  }

  std::unique_ptr<FileIO> local_ = MakeLocalFileIO();
  std::mutex mu_;
  std::unique_ptr<FileIO> s3_;  // guarded by mu_ until set
};

}  // namespace

std::unique_ptr<FileIO> MakeStorageFileIO() { return std::make_unique<StorageFileIO>(); }

}  // namespace sluice
