#include "pipeline/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "io/posix.h"

namespace sluice::pipeline {

Result<std::unique_ptr<StagedJournal>> StagedJournal::Open(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return Status::IOError("create folder of journal {}: {}", path, ec.message());
  ASSIGN_OR_RETURN(auto lock, FileLock::Acquire(path + ".lock", "journal " + path));
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open journal", path);
  ::unlink((path + ".new").c_str());  // a rewrite a crash interrupted (never renamed)
  std::unique_ptr<StagedJournal> j(new StagedJournal(path, fd, std::move(lock)));
  RETURN_IF_ERROR(j->ReadAll());
  return j;
}

StagedJournal::~StagedJournal() {
  if (fd_ >= 0) ::close(fd_);
}

Status StagedJournal::ReadAll() {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("stat journal", path_);
  std::string text;
  RETURN_IF_ERROR(PreadFully(fd_, path_, 0, st.st_size, &text));
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // torn last line: its file was never created
    ++line;
    std::string_view l(text.data() + pos, nl - pos);
    pos = nl + 1;
    size_t sp = l.find(' ');
    Entry e;
    std::string_view id = l.substr(0, std::min(sp, l.size()));
    size_t colon = id.find(':');
    auto number = [](std::string_view text, int64_t* out) {
      auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), *out);
      return err == std::errc() && end == text.data() + text.size() && !text.empty();
    };
    bool ok = sp != std::string_view::npos && sp + 1 < l.size() &&
              (colon == std::string_view::npos ? number(id, &e.checkpoint)
                                               : number(id.substr(0, colon), &e.epoch) &&
                                                     number(id.substr(colon + 1), &e.checkpoint));
    if (!ok) {
      return Status::Corruption(
          "journal {} line {}: expected '<epoch>:<checkpoint> <path>', got '{}'", path_, line, l);
    }
    e.path = std::string(l.substr(sp + 1));
    entries_.push_back(std::move(e));
  }
  return Status::OK();
}

namespace {

std::string EntryLine(int64_t epoch, int64_t checkpoint, const std::string& path) {
  return fmt::format("{}:{} {}\n", epoch, checkpoint, path);
}

}  // namespace

Status StagedJournal::Record(int64_t epoch, int64_t checkpoint, const std::string& path) {
  if (path.find('\n') != std::string::npos) {
    return Status::Invalid("journal {}: path with a newline: {}", path_, path);
  }
  // O_APPEND: each record lands at the end; a short write leaves a torn line
  // that ReadAll ignores.
  RETURN_IF_ERROR(WriteFully(fd_, path_, EntryLine(epoch, checkpoint, path)));
  if (::fdatasync(fd_) != 0) return ErrnoStatus("sync journal", path_);
  entries_.push_back({epoch, checkpoint, path});
  return Status::OK();
}

Status StagedJournal::Clear() {
  if (::ftruncate(fd_, 0) != 0) return ErrnoStatus("truncate journal", path_);
  if (::fsync(fd_) != 0) return ErrnoStatus("sync journal", path_);
  entries_.clear();
  return Status::OK();
}

Status StagedJournal::ClearThrough(int64_t checkpoint) {
  std::vector<Entry> later;
  for (const Entry& e : entries_) {
    if (e.checkpoint > checkpoint) later.push_back(e);
  }
  if (later.size() == entries_.size()) return Status::OK();
  if (later.empty()) return Clear();
  return Rewrite(std::move(later));
}

Status StagedJournal::Rewrite(std::vector<Entry> entries) {
  std::string text;
  for (const Entry& e : entries) text += EntryLine(e.epoch, e.checkpoint, e.path);
  const std::string tmp = path_ + ".new";
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create journal", tmp);
  Status st = WriteFully(fd, tmp, text);
  if (st.ok() && ::fsync(fd) != 0) st = ErrnoStatus("sync journal", tmp);
  if (st.ok() && ::rename(tmp.c_str(), path_.c_str()) != 0) st = ErrnoStatus("rename to", path_);
  if (!st.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
  }
  // The renamed file is the journal now (appended to from here on).
  ::close(fd_);
  fd_ = fd;
  entries_ = std::move(entries);
  return SyncDirectory(std::filesystem::path(path_).parent_path().string());
}

}  // namespace sluice::pipeline
