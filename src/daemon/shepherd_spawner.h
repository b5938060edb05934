// ShepherdSpawner: the agent's side of `trellis-spawner`, a small single-threaded helper process
// whose only work is to fork job shepherds (daemon/shepherd.h) when the agent asks over a
// socket. serve_spawner() is the helper's side.
//
// Why not fork in the agent: the agent has gRPC's threads and memory, and fork() of such a
// process write-protects all of it, so every thread then takes copy-on-write faults, each with a
// TLB shootdown on every CPU running one of them. Measured on `trellis bench live`, that was most
// of the agent's CPU and held it to about 60 launches a second. The helper is a separate small
// executable (no gRPC, a few libraries), started once: forking from it is cheap and leaves the
// agent's pages alone.
//
// The shepherds are the helper's children, not the agent's: they outlive both. The helper
// reaps them. If it dies, the next spawn() starts a new one.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/result.h"
#include "daemon/shepherd.h"

namespace trellis {

class ShepherdSpawner {
 public:
  // Starts the helper `binary` (a trellis-spawner) now. `exit_notice` (-1 = none) is handed to
  // every shepherd (see run_shepherd); the helper keeps its own copy open.
  static Result<std::unique_ptr<ShepherdSpawner>> start(std::string binary, int exit_notice);

  // `trellis-spawner` next to the running executable (where the build and `make install` put
  // all of Trellis's programs).
  static std::string default_binary();

  // Closes the socket, which ends the spawner (the shepherds live on), and reaps it.
  ~ShepherdSpawner();
  ShepherdSpawner(const ShepherdSpawner&) = delete;
  ShepherdSpawner& operator=(const ShepherdSpawner&) = delete;

  struct Started {
    pid_t shepherd = 0;
    pid_t job = 0;  // also the job's process group
  };
  // Starts a shepherd for `plan` and returns once it has forked the job. Thread-safe; one
  // spawn at a time.
  Result<Started> spawn(const ShepherdPlan& plan);

  // The helper's pid (0 when none is running), for logs and tests.
  pid_t helper_pid();

 private:
  ShepherdSpawner(std::string binary, int exit_notice)
      : binary_(std::move(binary)), exit_notice_(exit_notice) {}
  Status start_helper();  // callers hold mutex_
  void stop_helper();     // callers hold mutex_

  const std::string binary_;
  const int exit_notice_;
  std::mutex mutex_;
  int socket_ = -1;  // the agent's end; guarded by mutex_
  pid_t pid_ = 0;    // the helper; guarded by mutex_
};

// The helper's whole life (trellis-spawner's main): reads plans from `socket`, forks a shepherd
// for each and answers with its pid and the job's, until the socket closes. Shepherds get
// `exit_notice` (-1 = none).
[[noreturn]] void serve_spawner(int socket, int exit_notice);

}  // namespace trellis
