// ShepherdClient: the agent's side of its shepherd (daemon/shepherd.h): starts the
// `trellis-shepherd` process and hands it one plan per task.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/shepherd.h"

namespace trellis {

class ShepherdClient {
 public:
  // Starts the shepherd program `binary` now. `exit_notice` (-1 = none) is the write end of the
  // pipe on which it announces exits. `owner` (the agent's state directory) is shown on the
  // shepherd's command line, so that tools (`trellis cluster down`) can tell whose it is.
  static Result<std::unique_ptr<ShepherdClient>> start(std::string binary, int exit_notice,
                                                       std::string owner);

  // `trellis-shepherd` next to the running executable (where the build and `make install` put
  // all of Trellis's programs).
  static std::string default_binary();

  // Closes the socket: the shepherd takes no more plans and exits once its jobs have ended.
  ~ShepherdClient();
  ShepherdClient(const ShepherdClient&) = delete;
  ShepherdClient& operator=(const ShepherdClient&) = delete;

  struct Started {
    pid_t shepherd = 0;  // the process that records the job's end
    pid_t job = 0;       // also the job's process group
  };
  // Starts the plan's job and returns once it has exec'd. Thread-safe; one at a time. A
  // shepherd that died is replaced (its jobs stay with it, or are lost if it was killed).
  Result<Started> spawn(const ShepherdPlan& plan);
  // spawn() of each plan, in order; every plan is written before the first answer is read, so
  // the shepherd starts one job while the next plan is on its way.
  std::vector<Result<Started>> spawn_all(const std::vector<ShepherdPlan>& plans);

  // The shepherd's pid (0 when none is running), for logs and tests.
  pid_t shepherd_pid();

 private:
  ShepherdClient(std::string binary, int exit_notice, std::string owner)
      : binary_(std::move(binary)), exit_notice_(exit_notice), owner_(std::move(owner)) {}
  Status start_shepherd();  // callers hold mutex_
  void let_go();            // callers hold mutex_

  const std::string binary_;
  const int exit_notice_;
  const std::string owner_;
  std::mutex mutex_;
  int socket_ = -1;  // guarded by mutex_
  pid_t pid_ = 0;    // guarded by mutex_
};

}  // namespace trellis
