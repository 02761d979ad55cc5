// StagedJournal: the local, durable list of data files a pipeline has created
// but not yet committed ("staged": durable, referenced by no snapshot).
//
// A file is recorded (and the record fsynced) before the file is created, so
// after a crash recovery knows every file that may exist without listing the
// table's folder or guessing by age. Each entry carries the writer epoch and
// the checkpoint the file belongs to: files of the checkpoint that the table
// shows as committed *by that epoch* stay, the others are deleted. Each
// commit clears its checkpoint's entries.
//
// With checkpoints that commit in the background (docs/pipelines.md
// "Checkpoints in the background"), the next checkpoint's files are recorded
// while the one before commits: ClearThrough then removes only the entries of
// the committed checkpoints, rewriting the journal (a new file renamed over
// it, so a crash leaves either the old list or the new one).
//
// Format: one line per entry, "<epoch>:<checkpoint> <path>\n" (the first
// version wrote "<checkpoint> <path>": read with epoch 0, unknown). A torn
// last line (a crash while recording) is ignored: its file was not created
// yet.
//
// One process at a time: Open() takes the lock file "<path>.lock" (FileLock) and
// fails with kConflict naming the holder when another process (or another Open in
// this one) has it; two runs recovering one journal would delete each other's files.
//
// Not thread-safe: one journal per pipeline, whose lanes, committer and own
// thread take turns under its lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "io/file_lock.h"

namespace sluice::pipeline {

class StagedJournal {
 public:
  struct Entry {
    int64_t epoch = 0;  // 0: unknown (an entry of the first format)
    int64_t checkpoint = 0;
    std::string path;
  };

  // Opens (creating the file and its folder if needed) and reads the journal.
  static Result<std::unique_ptr<StagedJournal>> Open(const std::string& path);
  ~StagedJournal();
  StagedJournal(const StagedJournal&) = delete;
  StagedJournal& operator=(const StagedJournal&) = delete;

  // The entries read at Open plus those recorded since.
  const std::vector<Entry>& entries() const { return entries_; }
  // Appends one entry and syncs it before returning.
  Status Record(int64_t epoch, int64_t checkpoint, const std::string& path);
  // Removes every entry, durably.
  Status Clear();
  // Removes the entries of checkpoints up to `checkpoint`, durably; the
  // later ones stay.
  Status ClearThrough(int64_t checkpoint);

 private:
  StagedJournal(std::string path, int fd, std::unique_ptr<FileLock> lock)
      : path_(std::move(path)), fd_(fd), lock_(std::move(lock)) {}
  Status ReadAll();
  // Replaces the file and entries_ with `entries` (a new file renamed over it).
  Status Rewrite(std::vector<Entry> entries);

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<FileLock> lock_;  // held while the journal is open
  std::vector<Entry> entries_;
};

}  // namespace sluice::pipeline
