// Pmi1Server: the PMI-1 "simple" server of one node of a step (the job shell's, shell/shell.h),
// with no I/O of its own: the shell feeds it the bytes each local rank sends on its PMI_FD socket
// and carries out what it answers (lines to send, an exchange to start, a failure to act on).
//
// Every message of the protocol is served (shell/pmi1_wire.h): init (version 1.1; version 2 is
// refused with rc=-1, since PMI-2 has its own framing), get_maxes, get_appnum,
// get_universe_size, get_my_kvsname, put, get, barrier_in, finalize, abort; publish_name,
// unpublish_name, lookup_name and mcmd=spawn ... endcmd answer rc=-1 with a message (not
// supported, as Flux). The limits get_maxes announces are enforced: a put whose kvsname, key or
// value is longer gets rc=-1 naming the limit. `PMI_process_mapping` and other pre-put keys are
// there before the first barrier.
//
// The barrier is the exchange: puts since the last barrier are pending; when every local rank has
// sent barrier_in, `exchange` is set and take_contribution() gives the pending pairs (as
// kv_records bytes). Once the contributions of every node are back (exchanged(), the
// concatenation of all nodes' bytes), they join the global space and every local rank gets
// barrier_out. Gets read the pending puts of this node, then the global space; a key found in
// neither gets rc=-1.
//
// A malformed line (not key=value tokens, an unknown command, a missing field, a line longer than
// kPmi1MaxLine) is answered rc=-1 with what was wrong, and ends the step (a `failure`). So does
// abort (the rank's exit code, and its message). The shell decides what a rank's exit means; it
// asks initialized_not_finalized() to tell a rank that quit in the middle of the protocol.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "shell/kv_records.h"

namespace trellis {

// The limits get_maxes announces (Flux's and Slurm's values).
inline constexpr size_t kPmi1KvsnameMax = 64;
inline constexpr size_t kPmi1KeyMax = 64;
inline constexpr size_t kPmi1ValueMax = 1024;

class Pmi1Server {
 public:
  struct Options {
    int size = 1;  // ranks in the step (PMI_SIZE)
    int appnum = 0;
    std::string kvsname;           // the step's KVS name, at most kPmi1KvsnameMax bytes
    std::vector<int> ranks;        // client i is rank ranks[i] (for messages)
    std::string node;              // this node's name (for messages)
    std::vector<KeyValue> preput;  // e.g. {"PMI_process_mapping", "(vector,(0,4,1))"}
  };
  // Why the step must end, from the first rank that made it so.
  struct Failure {
    int client = 0;
    int exit_code = 1;
    std::string reason;  // "rank 2 on n2 called PMI abort (exit code 3): message"
  };
  // What the caller must do after a call.
  struct Effects {
    std::vector<std::pair<int, std::string>> replies;  // (client, line with its '\n'), in order
    bool exchange = false;  // every local rank is in the barrier: take_contribution(), exchange
    std::optional<Failure> failure;  // set once: kill the step
  };

  explicit Pmi1Server(Options options);

  // Bytes client `client` sent (any split: partial lines wait for the rest).
  void receive(int client, std::string_view bytes, Effects& out);
  // The pending puts as kv_records bytes; the pending set becomes empty.
  std::string take_contribution();
  // Every node's contribution to the barrier, concatenated: merged into the global space, and
  // barrier_out to each local rank. A malformed `all` fails the step.
  void exchanged(std::string_view all, Effects& out);
  // The exchange failed (an agent or a node is gone): the step fails with `why`.
  void exchange_failed(const std::string& why, Effects& out);

  bool initialized_not_finalized(int client) const;
  bool in_barrier() const { return entered_ > 0; }
  // Barriers completed, keys in the global space.
  int barriers() const { return barriers_; }
  size_t global_keys() const { return global_.size(); }

 private:
  struct Client {
    std::string buffer;  // bytes after the last complete line
    bool initialized = false;
    bool finalized = false;
    bool in_barrier = false;
    bool in_spawn = false;  // inside mcmd=spawn ... endcmd
    bool failed = false;    // sent a malformed line: nothing more is read
  };
  void line(int client, std::string_view text, Effects& out);
  void fail_step(int client, int exit_code, std::string reason, Effects& out);
  std::string who(int client) const;

  Options options_;
  std::vector<Client> clients_;
  std::map<std::string, std::string> pending_;  // puts since the last barrier
  std::map<std::string, std::string> global_;
  int entered_ = 0;  // clients in the current barrier
  int barriers_ = 0;
  bool exchanging_ = false;
  bool failed_ = false;
};

}  // namespace trellis
