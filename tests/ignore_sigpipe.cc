// The test process plays controller and agent in-process, as trellisd and trellis-agent do, and
// like them must not die of a write to a closed socket: libmunge sends its requests to munged with
// writev, which raises SIGPIPE when munged has already closed the connection (the daemons ignore
// SIGPIPE in main(); under ASan, GangSwitchTest died of it with 121 EPIPEs in one run).
#include <csignal>

namespace {

const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

}  // namespace
