// Queue depth (`trellis bench scale --parts c`): does the controller slow down as its queue
// grows? For each depth (1,000, 10,000 and 100,000 pending jobs by default) one controller runs
// exactly as trellisd runs it below gRPC (its store a real SQLite file, its passes bounded by
// `max_job_test` as configured), with the agents faked at the AgentLink. First a job holding the
// whole machine keeps everything else waiting while the queue is filled: the submission rate is
// measured over the last 1,000 submissions. Then that job ends, and in a steady loop every pass's
// starts run for one round and every start is replaced by a new submission, so that the queue
// stays at its depth: pass times (p50/p99) and starts per second. The figures at each depth are
// printed beside the shallowest depth's, measured in the same run; starts/s is the median of five
// windows of the steady loop, so that a moment when the host is busy elsewhere moves it less.
//
//   QueueDepthOptions options;
//   options.depths = {1000, 100000};
//   return run_queue_depth_bench(options, std::cout);
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace trellis::bench {

struct QueueDepthOptions {
  std::vector<int> depths = {1000, 10000, 100000};
  std::string machine = "torus:4x4x4";
  std::string policy = "easy";
  int max_job_test = 500;    // the controller's bound on each pass (trellisd's default)
  int steady_starts = 3000;  // starts measured at each depth, once the queue is full
  std::string work_dir;      // where the stores go ("" = a fresh directory under /tmp)
  std::function<void(const std::string&)> progress;  // a line now and then, if set
};

// Runs the measurement and prints its table; returns the exit status (1 when a controller call
// failed, with the message on `out`).
int run_queue_depth_bench(const QueueDepthOptions& options, std::ostream& out);

}  // namespace trellis::bench
