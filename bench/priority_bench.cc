#include "bench/priority_bench.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc/registry.h"
#include "sched/batch_core.h"
#include "sched/priority_order.h"
#include "sched/registry.h"
#include "sim/user_accounts.h"
#include "topology/machine.h"

namespace trellis::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))];
}

struct RunFigures {
  std::vector<double> pass_ms;
  std::vector<double> order_ms;  // the priority recalculation alone (with an order)
  bool usage_moves_priority = false;
  long started = 0;
};

// One run of the stream: `jobs` queued at 0, then `passes` passes each after one running job
// ended and a minute passed. With `accounts`, the queue is in priority order.
RunFigures run(const Machine& machine, const std::vector<Job>& jobs, const SimAccounts* accounts,
               int passes) {
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine, {});
  auto policy = PolicyRegistry::builtin().create("easy", machine);
  std::unique_ptr<PriorityOrder> order;
  if (accounts) order = std::make_unique<PriorityOrder>(accounts->tree, machine.node_count());
  BatchCore core(
      machine, **allocator, **policy,
      BatchOptions{.max_job_test = 500, .node_types = {}, .type_of = {}, .order = order.get()});
  for (const Job& job : jobs) (void)core.submit(job, 0);
  RunFigures figures;
  figures.started = static_cast<long>(core.pass(0).decisions.size());
  std::mt19937 random(42);
  Seconds now = 0;
  for (int p = 0; p < passes; ++p) {
    now += 60;
    if (!core.running().empty()) {
      const RunningJob& victim = core.running()[random() % core.running().size()];
      (void)core.ended(victim.id, now);
    }
    // A user who holds nodes now: its level fair-share must fall by the next pass.
    int watched = -1;
    double before = 0;
    if (order && !core.running().empty()) {
      watched = core.find(core.running().front().id)->association;
      before = order->shares().empty() ? 0 : order->shares()[static_cast<size_t>(watched)].level_fs;
    }
    const Clock::time_point start = Clock::now();
    figures.started += static_cast<long>(core.pass(now).decisions.size());
    figures.pass_ms.push_back(ms_since(start));
    if (order) {
      if (p > 0 && watched > 0 && order->shares()[static_cast<size_t>(watched)].level_fs < before)
        figures.usage_moves_priority = true;
      std::vector<const Job*> queue = core.queue();
      const Clock::time_point alone = Clock::now();
      order->order(queue, now, 500);
      figures.order_ms.push_back(ms_since(alone));
    }
  }
  return figures;
}

}  // namespace

int run_priority_bench(const PriorityBenchOptions& options, std::ostream& out) {
  const int job_count = options.quick ? 10000 : 100000;
  const int users = options.quick ? 100 : 1000;
  const int passes = options.passes > 0 ? options.passes : (options.quick ? 50 : 200);
  Result<Machine> machine = Machine::parse("flat:4096");
  if (!machine) return 1;
  std::mt19937 random(2026);
  std::vector<Job> jobs;
  jobs.reserve(static_cast<size_t>(job_count));
  for (int i = 0; i < job_count; ++i) {
    Job job;
    job.id = i + 1;
    job.submit = 0;
    job.request = Request::count(1 << (random() % 7), PlacementMode::kNonContiguous);
    job.time_limit = 3600 * (1 + random() % 24);
    job.run_time = job.time_limit / 2;
    job.user = static_cast<int>(random() % static_cast<unsigned>(users));
    job.group = job.user / 10;
    jobs.push_back(job);
  }
  Result<SimAccounts> accounts = sim_accounts(jobs, SimAccountsFrom::kGroup, "");
  if (!accounts) {
    out << "bench priority: " << accounts.error().message << "\n";
    return 1;
  }
  accounts->assign(jobs);
  out << "bench priority: " << job_count << " queued jobs from " << users << " users in "
      << users / 10 << " accounts, EASY on flat:4096, max_job_test 500, " << passes << " passes\n";
  const RunFigures arrival = run(*machine, jobs, nullptr, passes);
  const RunFigures fair = run(*machine, jobs, &*accounts, passes);
  out << std::fixed << std::setprecision(3);
  out << "  " << std::left << std::setw(28) << "pass (ms)" << std::right << std::setw(10) << "p50"
      << std::setw(10) << "p99" << std::setw(10) << "max"
      << "\n";
  auto row = [&](const std::string& name, const std::vector<double>& ms) {
    out << "  " << std::left << std::setw(28) << name << std::right << std::setw(10)
        << quantile(ms, 0.5) << std::setw(10) << quantile(ms, 0.99) << std::setw(10)
        << quantile(ms, 1.0) << "\n";
  };
  row("arrival order (reference)", arrival.pass_ms);
  row("fair-share priority", fair.pass_ms);
  row("  of which recalculation", fair.order_ms);
  const double reference = std::max(quantile(arrival.pass_ms, 0.5), 1e-6);
  out << "  ratio fair-share / arrival (p50): " << quantile(fair.pass_ms, 0.5) / reference << "\n";
  out << "  goal: p50 pass under 10 ms with fair-share: "
      << (quantile(fair.pass_ms, 0.5) < 10 ? "met" : "NOT met") << "; recalculation max "
      << quantile(fair.order_ms, 1.0)
      << " ms (goal: none over 10 ms): " << (quantile(fair.order_ms, 1.0) < 10 ? "met" : "NOT met")
      << "\n";
  out << "  a running job's usage moves its user's level fair-share by the next pass: "
      << (fair.usage_moves_priority ? "yes" : "NO") << "\n";
  out << "  jobs started: arrival " << arrival.started << ", fair-share " << fair.started << "\n";
  return fair.usage_moves_priority ? 0 : 1;
}

}  // namespace trellis::bench
