// A private munged, for tests and for a cluster on one machine (`trellis cluster up`), so that
// neither needs the host's munged nor its key.
//
// Everything lives in one directory: the key (munge.key, 1024 random bytes, mode 0400, made
// when absent), the socket (munge.socket), and munged's pid, log and seed files. munged insists
// that its socket's directory is searchable by everyone, so the directory is made mode 0755.
//
//   Result<MungeDaemon> munge = MungeDaemon::start(dir);          // owned: stopped with `munge`
//   CredentialSource credentials(munge->socket());
//
//   MungeDaemon::start(dir, MungeDaemon::Mode::kDetached);        // left running ...
//   MungeDaemon::stop(dir);                                       // ... until stopped by dir
//
// Only the pid in the directory's pid file is ever signalled, and only when that process's
// command line names this directory's socket (so a stale pid file never kills a stranger).
#pragma once

#include <sys/types.h>

#include <string>

#include "core/result.h"

namespace trellis {

class MungeDaemon {
 public:
  enum class Mode {
    kOwned,     // stopped by the destructor (or stop())
    kDetached,  // left running; stopped by MungeDaemon::stop(dir)
  };

  // Starts munged for `dir` (created if absent) and waits until it hands out credentials.
  // A detached start adopts a munged already running for `dir`; an owned start refuses it.
  static Result<MungeDaemon> start(const std::string& dir, Mode mode = Mode::kOwned);

  // Stops the munged running for `dir`, if any, and waits until it is gone.
  static Status stop(const std::string& dir);

  // The socket path munged serves in `dir`.
  static std::string socket_path(const std::string& dir);

  MungeDaemon(MungeDaemon&& other) noexcept;
  MungeDaemon& operator=(MungeDaemon&& other) noexcept;
  MungeDaemon(const MungeDaemon&) = delete;
  MungeDaemon& operator=(const MungeDaemon&) = delete;
  ~MungeDaemon();

  const std::string& dir() const { return dir_; }
  std::string socket() const { return socket_path(dir_); }
  pid_t pid() const { return pid_; }

  // Stops an owned munged now (a no-op for a detached one or a moved-from value).
  Status stop();

 private:
  static Status stop_pid(pid_t pid, const std::string& dir);
  MungeDaemon(std::string dir, pid_t pid, Mode mode)
      : dir_(std::move(dir)), pid_(pid), mode_(mode) {}

  std::string dir_;
  pid_t pid_ = -1;
  Mode mode_ = Mode::kOwned;
};

}  // namespace trellis
