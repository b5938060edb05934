#include "bench/queue_depth.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <sstream>

#include "cli/percentile.h"
#include "daemon/agent_link.h"
#include "daemon/controller.h"
#include "daemon/controller_service.h"
#include "store/state_store.h"
#include "topology/machine.h"

namespace trellis::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Agents that run every launched task for one round of the bench's loop: take() hands the
// launches made since the last call back, as the exits to report.
class RoundAgents final : public AgentLink {
 public:
  void launch(const std::vector<std::string>&, const v1::LaunchRequest& request) override {
    std::lock_guard lock(mutex_);
    launched_.push_back(request);
  }
  void signal(const std::vector<std::string>&, const v1::SignalRequest&) override {}
  std::vector<v1::LaunchRequest> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(launched_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<v1::LaunchRequest> launched_;
};

struct DepthResult {
  int depth = 0;
  double submissions_per_second = 0;  // over the last 1,000 submissions of the fill
  double fill_seconds = 0;
  double pass_p50_ms = 0, pass_p99_ms = 0;
  double starts_per_second = 0;
  int64_t starts = 0;
};

v1::JobSpec small_job(int64_t serial) {
  static constexpr int kSizes[] = {1, 2, 4, 8};
  v1::JobSpec spec;
  spec.set_nodes(kSizes[serial % 4]);
  spec.set_time_limit(3600);
  spec.add_argv("true");
  spec.set_cwd("/tmp");
  return spec;
}

// One depth: fill the queue behind a job that holds the whole machine, then the steady loop.
Result<DepthResult> measure(const QueueDepthOptions& options, int depth,
                            const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  ClusterConfig config;
  config.machine = options.machine;
  config.store = "sqlite:" + (dir / "state.db").string();
  config.controller.policy = options.policy;
  config.controller.max_job_test = options.max_job_test;
  config.controller.heartbeat_interval = 1e9;  // the fake agents never miss one
  Result<std::unique_ptr<StateStore>> store = open_store(config.store);
  if (!store) return store.error();
  RoundAgents agents;
  Result<std::unique_ptr<Controller>> opened =
      Controller::open(config, **store, agents, wall_clock_now());
  if (!opened) return opened.error();
  Controller& controller = **opened;
  const Caller user{static_cast<int>(getuid()), static_cast<int>(getgid())};
  const int nodes = controller.machine().node_count();

  v1::RegisterRequest hello;
  hello.set_address("fake:1");
  for (NodeId n = 0; n < nodes; ++n) hello.add_nodes("n" + std::to_string(n));
  if (auto ok = controller.register_agent(hello, user, wall_clock_now()); !ok) return ok.error();

  auto report_exits = [&](const std::vector<v1::LaunchRequest>& ended) -> Status {
    if (ended.empty()) return Ok{};
    v1::ExitRequest report;
    for (const v1::LaunchRequest& launch : ended)
      for (const std::string& node : launch.nodes()) {
        v1::TaskStatus* task = report.add_tasks();
        task->set_job_id(launch.job_id());
        task->set_attempt(launch.attempt());
        task->set_node(node);
      }
    return controller.report_exits(report, user, wall_clock_now());
  };

  // The whole machine, held while the queue fills.
  v1::JobSpec blocker = small_job(0);
  blocker.set_nodes(nodes);
  if (auto id = controller.submit(blocker, user, wall_clock_now()); !id) return id.error();
  if (auto started = controller.run_pass(wall_clock_now()); !started) return started.error();
  std::vector<v1::LaunchRequest> running = agents.take();

  DepthResult result;
  result.depth = depth;
  const int measured = std::min(depth, 1000);
  Clock::time_point fill_start = Clock::now(), tail_start = fill_start;
  for (int i = 0; i < depth; ++i) {
    if (i == depth - measured) tail_start = Clock::now();
    if (auto id = controller.submit(small_job(i), user, wall_clock_now()); !id) return id.error();
    // A pass now and then, as trellisd's scheduler thread makes them while submissions arrive.
    if (i % 100 == 99)
      if (auto started = controller.run_pass(wall_clock_now()); !started) return started.error();
    if (options.progress && i % 10000 == 9999)
      options.progress("  queue of " + std::to_string(depth) + ": " + std::to_string(i + 1) +
                       " submitted");
  }
  result.submissions_per_second = measured / seconds_since(tail_start);
  result.fill_seconds = seconds_since(fill_start);

  // Steady state: each round the previous round's jobs end, a pass starts what fits, and each
  // start is replaced by a new submission.
  // The rate is the median over five windows of equal starts, so that a moment when the host is
  // busy with something else moves it less.
  std::vector<double> pass_ms, window_rates;
  int64_t serial = depth;
  const int64_t window = std::max(1, options.steady_starts / 5);
  int64_t window_starts = 0;
  Clock::time_point window_start = Clock::now();
  while (result.starts < options.steady_starts) {
    if (auto ok = report_exits(running); !ok) return ok.error();
    Clock::time_point pass_start = Clock::now();
    Result<std::vector<JobId>> started = controller.run_pass(wall_clock_now());
    if (!started) return started.error();
    pass_ms.push_back(seconds_since(pass_start) * 1e3);
    running = agents.take();
    result.starts += static_cast<int64_t>(started->size());
    window_starts += static_cast<int64_t>(started->size());
    if (window_starts >= window) {
      window_rates.push_back(static_cast<double>(window_starts) / seconds_since(window_start));
      window_starts = 0;
      window_start = Clock::now();
    }
    for (size_t i = 0; i < started->size(); ++i)
      if (auto id = controller.submit(small_job(serial++), user, wall_clock_now()); !id)
        return id.error();
    if (started->empty() && running.empty())
      return fail("the steady loop stalled at a queue of " + std::to_string(depth) +
                  ": a pass started nothing on an idle machine");
  }
  result.starts_per_second = cli::percentile(window_rates, 0.5);
  result.pass_p50_ms = cli::percentile(pass_ms, 0.5);
  result.pass_p99_ms = cli::percentile(pass_ms, 0.99);
  return result;
}

}  // namespace

int run_queue_depth_bench(const QueueDepthOptions& options, std::ostream& out) {
  std::filesystem::path work = options.work_dir;
  bool made_work = false;
  if (work.empty()) {
    std::string pattern = "/tmp/trellis-queue-depth-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      out << "bench scale (c): cannot make a directory under /tmp\n";
      return 1;
    }
    work = pattern;
    made_work = true;
  }
  out << "\n(c) Queue depth: one controller on SQLite, " << options.machine << ", policy "
      << options.policy << ", passes bounded to the first " << options.max_job_test
      << " queued jobs (max_job_test); agents faked at the AgentLink\n"
      << "  queued   submit/s   pass p50 (ms)  pass p99 (ms)   starts/s  starts/s vs first"
         "   fill (s)\n";
  std::vector<DepthResult> results;
  int status = 0;
  for (int depth : options.depths) {
    Result<DepthResult> r = measure(options, depth, work / ("depth-" + std::to_string(depth)));
    if (!r) {
      out << "  queue of " << depth << ": " << r.error().message << "\n";
      status = 1;
      break;
    }
    results.push_back(*r);
    const DepthResult& first = results.front();
    out << std::fixed << "  " << std::setw(7) << r->depth << std::setw(11) << std::setprecision(0)
        << r->submissions_per_second << std::setw(15) << std::setprecision(2) << r->pass_p50_ms
        << std::setw(15) << r->pass_p99_ms << std::setw(11) << std::setprecision(0)
        << r->starts_per_second << std::setw(18) << std::setprecision(2)
        << r->starts_per_second / first.starts_per_second << std::setw(11) << std::setprecision(1)
        << r->fill_seconds << std::endl;
  }
  if (made_work) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }
  return status;
}

}  // namespace trellis::bench
