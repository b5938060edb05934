// AbsentNames: which names a directory was found not to have, until something is created in it.
// A gang switch looks for each sampled task's runtime area (daemon/job_activity.h) in the POSIX
// shared-memory directory, and most tasks never make one: that failed open, with its path walk,
// was one system call of the dozen an agent makes per switch. Watched with inotify, a name found
// missing stays known missing for as long as nothing is created (or moved) into the directory,
// at the cost of one read of the watch that finds nothing new. Any creation there, whatever its
// name, or a lost event (the queue overflowed) forgets every name; without a watch (no inotify,
// or the per-user limit on watches reached) nothing is known missing and every look opens.
//
//   AbsentNames absent("/dev/shm");
//   uint64_t mark = 0;
//   if (!absent.known_missing("trellis-12.1.n3", &mark)) {
//     if (open ... fails with ENOENT) absent.missing("trellis-12.1.n3", mark);
//   }
//
// Thread-safe: a name is recorded missing only if nothing was created in the directory between
// the known_missing() that gave the mark and the missing() (another thread's look may have read
// that creation from the watch meanwhile).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

namespace trellis {

class AbsentNames {
 public:
  explicit AbsentNames(const std::string& directory);
  ~AbsentNames();
  AbsentNames(const AbsentNames&) = delete;
  AbsentNames& operator=(const AbsentNames&) = delete;

  // Whether `name` (a file name in the directory) was reported missing and nothing has been
  // created in the directory since. When not, `mark` is set for missing().
  bool known_missing(const std::string& name, uint64_t* mark);
  // `name` was looked for after known_missing() gave `mark`, and is not there.
  void missing(const std::string& name, uint64_t mark);
  // Whether the directory is watched (false: known_missing() is always false).
  bool watching() const;

 private:
  // Reads what the watch has (with mutex_ held): any event forgets every name.
  void drain();

  mutable std::mutex mutex_;
  int fd_ = -1;                  // the inotify instance; -1 without a watch
  std::set<std::string> names_;  // guarded by mutex_
  uint64_t creations_ = 0;       // reads of the watch that found something (guarded by mutex_)
};

}  // namespace trellis
