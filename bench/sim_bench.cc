#include "bench/sim_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <random>
#include <span>
#include <vector>

#include "alloc/registry.h"
#include "sched/backfill.h"
#include "sim/lublin.h"
#include "sim/run_metrics.h"
#include "sim/runtime_model.h"
#include "sim/simulator.h"
#include "sim/swf.h"
#include "sim/workload.h"

// Defined by the generated trellis_nasa_ipsc_swf_gz.S (trellis_embed_file in CMakeLists.txt).
extern "C" const char trellis_nasa_ipsc_swf_gz_begin[];
extern "C" const char trellis_nasa_ipsc_swf_gz_end[];

namespace trellis::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Timed {
  double seconds;
  RunSummary summary;
};

// One EASY run; `runtime_model` names a run-time model (sim/runtime_model.h), "trace" for none.
Timed simulate_timed(const Machine& machine, const std::string& allocator_name,
                     const std::vector<Job>& jobs, bool record,
                     const std::string& runtime_model = "trace") {
  auto allocator = AllocatorRegistry::builtin().create(allocator_name, machine);
  EasyPolicy easy;
  SimOptions options;
  options.record_placements = record;
  auto model =
      RuntimeModelRegistry::builtin().create(runtime_model, machine, RuntimeModelOptions{});
  options.runtime_model = model->get();
  auto start = Clock::now();
  SimResult result = simulate(machine, **allocator, easy, jobs, options);
  double seconds = seconds_since(start);
  return {seconds, summarize(result)};
}

// The NASA iPSC trace built into the binary (CMakeLists.txt embeds the bundled .swf.gz).
Result<std::vector<Job>> embedded_nasa_jobs() {
  const std::string source = "NASA-iPSC-1993-3.1-cln.swf.gz (embedded)";
  auto text =
      gunzip({trellis_nasa_ipsc_swf_gz_begin,
              static_cast<size_t>(trellis_nasa_ipsc_swf_gz_end - trellis_nasa_ipsc_swf_gz_begin)},
             source);
  if (!text) return text.error();
  auto trace = parse_swf(*text, source);
  if (!trace) return trace.error();
  return swf_to_jobs(*trace).jobs;
}

Result<std::vector<Job>> bench_jobs(const SimBenchOptions& options) {
  if (options.workload.empty()) return embedded_nasa_jobs();
  auto workload = load_workload(options.workload);
  if (!workload) return workload.error();
  return std::move(workload->jobs);
}

int nasa(const SimBenchOptions& options, std::ostream& out) {
  auto start = Clock::now();
  auto workload = bench_jobs(options);
  double parse = seconds_since(start);
  if (!workload) {
    out << "trace: " << workload.error().message << "\n";
    return 2;
  }
  Machine machine = *Machine::parse("torus:8x4x4");
  out << (options.workload.empty() ? "NASA iPSC/860 trace (embedded)" : options.workload) << ": "
      << workload->size() << " jobs on " << machine.spec()
      << " (128 nodes), EASY; reading the SWF took " << std::fixed << std::setprecision(3) << parse
      << " s\n";
  out << "  allocator         records   wall (s)   jobs/s     mean wait (s)  us/alloc  vs "
         "first-available\n";
  for (bool record : {true, false}) {
    Timed reference = simulate_timed(machine, "first-available", *workload, record);
    Timed contiguous = simulate_timed(machine, "contiguous", *workload, record);
    for (const auto& [name, t] :
         {std::pair{"contiguous", contiguous}, {"first-available", reference}}) {
      out << "  " << std::left << std::setw(18) << name << std::setw(10) << (record ? "yes" : "no")
          << std::right << std::setw(8) << std::setprecision(3) << t.seconds << std::setw(11)
          << std::setprecision(0) << t.summary.jobs / t.seconds << std::setw(16)
          << std::setprecision(1) << t.summary.mean_wait << std::setw(10) << std::setprecision(2)
          << t.summary.allocator_call_us << std::setw(12) << std::setprecision(2)
          << t.seconds / reference.seconds << "x\n";
    }
  }
  // What a run-time model costs: each started job's placement is measured (hops, link loads).
  out << "  run-time model (records, jobs killed at their limits as above)\n"
      << "  allocator         model        wall (s)   mean wait (s)  vs trace\n";
  for (const char* allocator : {"first-available", "contiguous"}) {
    Timed trace = simulate_timed(machine, allocator, *workload, true);
    for (const char* model : {"trace", "hop-bytes", "congestion"}) {
      Timed t = std::string(model) == "trace"
                    ? trace
                    : simulate_timed(machine, allocator, *workload, true, model);
      out << "  " << std::left << std::setw(18) << allocator << std::setw(12) << model << std::right
          << std::setw(9) << std::setprecision(3) << t.seconds << std::setw(16)
          << std::setprecision(1) << t.summary.mean_wait << std::setw(9) << std::setprecision(2)
          << t.seconds / trace.seconds << "x\n";
    }
  }
  return 0;
}

void conservative(const SimBenchOptions& options, std::ostream& out) {
  Machine machine = *Machine::parse("flat:1024");
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  std::mt19937 rng(42);
  // Running jobs fill 1,000 of the 1,024 nodes, with expected ends spread over a day.
  std::vector<RunningJob> running;
  NodeSet busy(1024);
  std::uniform_real_distribution<double> end(1, 86400);
  for (NodeId first = 0; first + 5 <= 1000; first += 5) {
    NodeSet nodes(1024);
    nodes.set_range(first, first + 5);
    busy |= nodes;
    running.push_back({static_cast<JobId>(first + 1000000), 0, end(rng), nodes, 5});
  }
  NodeSet free = busy.complement();
  std::vector<Job> jobs = generate_lublin({options.queued_jobs, 1024, 9});
  std::vector<const Job*> queue;
  for (Job& j : jobs) {
    j.time_limit = std::max(1.0, j.time_limit);
    queue.push_back(&j);
  }
  ConservativePolicy policy;
  EasyPolicy easy;
  // The pass trellisd makes by default: the head of the queue only (BatchCore's max_job_test).
  const size_t daemon_bound = 500;
  std::span<const Job*const> whole(queue), head = whole.first(std::min(daemon_bound, queue.size()));
  auto time_pass = [&](const QueuePolicy& p, std::span<const RunningJob> run, const NodeSet& f,
                       std::span<const Reservation> previous, Schedule* keep,
                       std::span<const Job* const> shown) {
    std::vector<double> times;
    for (int rep = 0; rep < 3; ++rep) {
      auto start = Clock::now();
      Schedule s = p.schedule({0, shown, run, f, previous}, **allocator);
      times.push_back(seconds_since(start));
      if (keep) *keep = std::move(s);
    }
    std::sort(times.begin(), times.end());
    return times[1];
  };
  Schedule first, first_head;
  double scratch = time_pass(policy, running, free, {}, &first, whole);
  // A running job ends early: its nodes come free and every reservation may move earlier.
  std::vector<RunningJob> after(running.begin() + 1, running.end());
  NodeSet free_after = free | running.front().nodes;
  double compress = time_pass(policy, after, free_after, first.reservations, nullptr, whole);
  double easy_pass = time_pass(easy, running, free, {}, nullptr, whole);
  double head_scratch = time_pass(policy, running, free, {}, &first_head, head);
  double head_compress =
      time_pass(policy, after, free_after, first_head.reservations, nullptr, head);
  out << "\nConservative backfilling, one pass with " << queue.size()
      << " queued jobs behind a full flat:1024 (" << running.size() << " running, "
      << first.reservations.size() << " reservations):\n"
      << std::fixed << std::setprecision(1) << "  from scratch            " << std::setw(9)
      << scratch * 1e3 << " ms  (" << std::setprecision(2) << scratch * 1e6 / queue.size()
      << " us per queued job)\n"
      << std::setprecision(1) << "  compression after an early end " << std::setw(6)
      << compress * 1e3 << " ms\n"
      << "  EASY pass (reference)   " << std::setw(9) << std::setprecision(3) << easy_pass * 1e3
      << " ms; conservative / EASY = " << std::setprecision(0) << scratch / easy_pass << "x\n"
      << "  bounded to the first " << head.size()
      << " queued jobs (trellisd's default max_job_test, as Slurm's bf_max_job_test):\n"
      << std::setprecision(1) << "    from scratch          " << std::setw(9) << head_scratch * 1e3
      << " ms\n"
      << "    compression after an early end " << std::setw(4) << head_compress * 1e3 << " ms ("
      << std::setprecision(0) << compress / head_compress << "x less than unbounded)\n";
}

void lublin(const SimBenchOptions& options, std::ostream& out) {
  Machine machine = *Machine::parse("torus:32x32x32");
  auto start = Clock::now();
  Workload workload;
  workload.jobs = generate_lublin({static_cast<int>(options.lublin_jobs), 32768, 1});
  scale_load(workload, options.lublin_load);
  const std::vector<Job>& jobs = workload.jobs;
  double generate = seconds_since(start);
  auto allocator = AllocatorRegistry::builtin().create("first-available", machine);
  EasyPolicy easy;
  SimOptions sim_options;
  sim_options.record_placements = false;
  if (options.progress)
    sim_options.progress = [](double f) {
      std::fprintf(stderr, "\r  Lublin run %3d%%", static_cast<int>(f * 100));
      if (f >= 1) std::fprintf(stderr, "\n");
    };
  start = Clock::now();
  SimResult result = simulate(machine, **allocator, easy, jobs, sim_options);
  double seconds = seconds_since(start);
  RunSummary s = summarize(result);
  out << "\nLublin-Feitelson workload, " << jobs.size() << " jobs on " << machine.spec()
      << ", EASY, first-available, load factor " << std::setprecision(2) << options.lublin_load
      << " (generated in " << generate << " s):\n"
      << "  simulated in " << seconds << " s: " << std::setprecision(0) << s.jobs / seconds
      << " jobs/s; offered load " << std::setprecision(3) << s.offered_load << ", utilization "
      << s.utilization << ", mean wait " << std::setprecision(0) << s.mean_wait << " s, max queue "
      << s.max_queue_length << ", " << s.passes << " passes (" << std::setprecision(1)
      << s.mean_pass_us << " us each)\n";
}

}  // namespace

int run_sim_bench(const SimBenchOptions& options, std::ostream& out) {
  if (int status = nasa(options, out); status != 0) return status;
  conservative(options, out);
  if (options.lublin_jobs > 0) lublin(options, out);
  return 0;
}

}  // namespace trellis::bench
