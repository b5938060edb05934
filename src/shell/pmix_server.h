// PmixServer: the job shell's PMIx server, for MPI libraries that start only through PMIx (Open
// MPI 4.1, Debian's build): a step asked for `--mpi pmix` gets it on every node, beside PMI-1.
// libpmix (Debian's libpmix2, 4.2.x) is loaded with dlopen when a step asks for it, so that a
// shell serving plain commands or MPICH never maps it.
//
// On each node, as Slurm's mpi/pmix and Flux's pmix shell plugin do: PMIx_server_init (a private
// temporary directory for its rendezvous and shared-memory files, removed at the end), the step's
// namespace registered with the job size, this node's ranks (local peers, size, leader), the node
// and process maps (PMIx_generate_regex / PMIx_generate_ppn); then for each local rank
// PMIx_server_setup_fork (the PMIX_* variables it must see) and PMIx_server_register_client (the
// shell's own uid and gid: only the job's user may connect). Upcalls arrive on libpmix's progress
// thread; they become Events the shell's loop takes when wake_fd() is readable:
//   kFence  every local rank entered a fence that spans nodes: `bytes` is this node's blob, to be
//           allgathered with the other nodes' (the shell's cross-node exchange) and handed back
//           with fence_done(), or fence_failed(). (A fence among local ranks only never comes up:
//           libpmix completes it.)
//   kAbort  a rank called PMIx_Abort: the step fails with its status and message.
// One server per process (libpmix keeps global state).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/task_layout.h"
#include "shell/shell_options.h"

namespace trellis {

class PmixServer {
 public:
  struct Event {
    enum class Kind { kFence, kAbort };
    Kind kind = Kind::kFence;
    std::string bytes;  // kFence: this node's contribution
    int exit_code = 0;  // kAbort
    std::string reason;
  };

  // Loads libpmix ($TRELLIS_PMIX_LIBRARY, else libpmix.so.2 on the loader's path or Debian's
  // pmix2 directory) and starts the server for the step. Errors say which call failed and why.
  static Result<std::unique_ptr<PmixServer>> start(const ShellOptions& options,
                                                   const TaskLayout& layout);
  ~PmixServer();  // finalizes the server and removes its directory
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // The sizes of libpmix's shared-memory job-data store ("NAME=value"), for those the job's
  // environment `base` does not set. The server and every client read them from their own
  // environment and must agree, so the caller sets them in both: its own (before start()) and
  // the ranks'. Why: libpmix's defaults (4 MiB per data and per meta segment, each zeroed when a
  // step's namespace is first stored) cost a shell 7-8 ms of CPU per step on this project's test
  // host, on the first rank's connection; a full segment is chained to a new one, so smaller
  // ones limit only the largest single value (1 MiB: a node map regex, a rank's modex blob).
  static std::vector<std::string> store_sizes(const std::vector<std::string>& base);

  // The variables rank `rank` (one of this node's) needs, "NAME=value"; the rank is registered.
  Result<std::vector<std::string>> client_env(int rank);

  int wake_fd() const { return wake_fd_; }
  std::vector<Event> take_events();
  // Completes the fence in progress with every node's blobs, concatenated.
  void fence_done(const std::string& all);
  void fence_failed();

  // Called from libpmix's thread (the module's upcalls).
  void post(Event event);
  const std::string& node() const { return node_; }

 private:
  PmixServer() = default;
  struct Library;
  std::unique_ptr<Library> lib_;
  std::string nspace_;
  std::string node_;
  std::string directory_;
  std::vector<Event> events_;  // guarded by the upcalls' mutex (pmix_server.cc)
  int wake_fd_ = -1;
  uint32_t uid_ = 0, gid_ = 0;
};

}  // namespace trellis
