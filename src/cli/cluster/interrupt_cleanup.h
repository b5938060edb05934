// What a command that starts a local cluster runs if it is interrupted (Ctrl-C, SIGTERM, SIGHUP):
// the cluster it started must not outlive it. A thread waits for the signals, which every other
// thread blocks; on one it runs the command set last (e.g. `trellis cluster down --dir D`) and
// exits with 128 + the signal.
//
// Construct it before starting any thread, so that every thread inherits the blocked signals.
// One per process.
#pragma once

#include <mutex>
#include <string>

namespace trellis::cli {

class InterruptCleanup {
 public:
  // `who` prefixes the message printed on an interrupt ("trellis bench live").
  explicit InterruptCleanup(std::string who);
  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;

  // The shell command to run on an interrupt; "" for none.
  void set(std::string command);

 private:
  std::mutex mutex_;
  std::string who_;
  std::string command_;
};

}  // namespace trellis::cli
