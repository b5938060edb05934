#include "bench/gang_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

#include "sched/gang/direct_dqt.h"
#include "sched/gang/dqt.h"
#include "sched/gang/reference_round_robin.h"
#include "sched/gang/registry.h"
#include "sim/gang/gang_simulator.h"
#include "sim/workload/thesis_model.h"

namespace trellis::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string number(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

// Round robin on one random static tree with the three implementations; returns false if they
// disagree on any slot.
bool compare_round_robin(int processors, long slots, std::ostream& out) {
  auto tree = gang::PartitionTree::for_processors(processors, 2);
  std::mt19937 rng(static_cast<unsigned>(processors));
  std::vector<std::vector<JobId>> queues(tree->node_count());
  auto direct = gang::DirectDqt::make("direct", processors, gang::DqtOptions{});
  auto messages = gang::Dqt::make("messages", processors, gang::DqtOptions{});
  JobId id = 1;
  for (gang::TreeNodeId n = 0; n < tree->node_count(); ++n) {
    // About one job per four nodes, more of them low in the tree: many small jobs.
    int jobs =
        std::bernoulli_distribution(0.25)(rng) ? std::uniform_int_distribution<int>(1, 3)(rng) : 0;
    for (int j = 0; j < jobs; ++j) {
      queues[n].push_back(id);
      if (!(*direct)->submit_at(id, n) || !(*messages)->submit_at(id, n)) return false;
      ++id;
    }
  }
  gang::ReferenceRoundRobin reference(*tree, queues, false);

  using Slots = std::vector<std::vector<gang::SlotJob>>;
  auto run = [&](auto& engine, Slots& into) {
    into.resize(static_cast<std::size_t>(slots));
    auto start = Clock::now();
    for (long s = 0; s < slots; ++s) into[s] = engine.next_slot();
    return since(start);
  };
  Slots by_direct, by_messages, by_reference;
  const double direct_seconds = run(**direct, by_direct);
  const double message_seconds = run(**messages, by_messages);
  const double reference_seconds = run(reference, by_reference);

  auto by_processor = [](std::vector<gang::SlotJob> slot) {
    std::sort(slot.begin(), slot.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    return slot;
  };
  bool same = true;
  for (long s = 0; s < slots && same; ++s)
    same = by_processor(by_direct[s]) == by_reference[s] &&
           by_processor(by_messages[s]) == by_reference[s];
  out << "  " << processors << " processors, " << id - 1 << " jobs, " << slots << " slots: direct "
      << number(slots / direct_seconds, 0) << " slots/s, messages "
      << number(slots / message_seconds, 0) << " slots/s ("
      << number((*messages)->messages() / double(slots), 0) << " messages/slot), reference "
      << number(slots / reference_seconds, 0) << " slots/s; direct vs messages "
      << number(message_seconds / direct_seconds, 2) << "x, vs reference "
      << number(reference_seconds / direct_seconds, 2) << "x" << (same ? "" : "  MISMATCH") << "\n";
  return same;
}

struct TimedRun {
  Result<gangsim::GangSimResult> result;
  double seconds = 0;
};

TimedRun simulate(const std::vector<gangsim::SimJob>& jobs, const std::string& policy,
                  bool message_passing, long end) {
  gang::GangPolicyOptions options;
  options.dqt_message_passing = message_passing;
  auto scheduler = gang::GangPolicyRegistry::builtin().create(policy, 4096, options);
  if (!scheduler) return {scheduler.error(), 0};
  gangsim::GangSimConfig config;
  config.end_time = end;
  auto start = Clock::now();
  auto result = gangsim::simulate_gang(jobs, **scheduler, config);
  return {std::move(result), since(start)};
}

bool same_run(const gangsim::GangSimResult& a, const gangsim::GangSimResult& b) {
  if (a.slots != b.slots || a.utilization != b.utilization || a.jobs.size() != b.jobs.size())
    return false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i)
    if (a.jobs[i].start != b.jobs[i].start || a.jobs[i].end != b.jobs[i].end) return false;
  return true;
}

}  // namespace

int run_gang_bench(const GangBenchOptions& options, std::ostream& out) {
  out << "Round robin on random static trees: DirectDqt vs the message-passing Dqt vs the "
         "centralized reference\n";
  bool ok = true;
  for (int p : {128, 1024, 4096}) {
    long slots = options.quick ? 2000 : 20000;
    ok = compare_round_robin(p, slots, out) && ok;
  }

  const double duration = options.quick ? 1e5 : 1e6;
  const long prefix = static_cast<long>(duration / 10);
  out << "\nSimulation: " << number(duration, 0)
      << " time units on 4096 processors, load 0.9, exponential service (mean 1000).\n"
      << "The message-passing engine runs the first " << prefix
      << " units of the same workload, and so does the direct one, for the ratio.\n";
  for (auto sizes :
       {workload::SizeDistribution::kUniform, workload::SizeDistribution::kProportional,
        workload::SizeDistribution::kInverse}) {
    workload::ThesisModel model;
    model.processors = 4096;
    model.sizes = sizes;
    model.load = 0.9;
    model.arrival_end = duration;
    auto jobs = workload::generate_thesis_workload(model);
    if (!jobs) {
      out << jobs.error().message << "\n";
      return 1;
    }
    auto sim_jobs = gangsim::batch_jobs(*jobs);
    if (options.progress)
      std::cerr << "  simulating " << workload::to_string(sizes) << " sizes...\n";
    TimedRun full = simulate(sim_jobs, "dqt-ffapa", false, static_cast<long>(duration));
    TimedRun direct = simulate(sim_jobs, "dqt-ffapa", false, prefix);
    TimedRun messages = simulate(sim_jobs, "dqt-ffapa", true, prefix);
    TimedRun fcfs = simulate(sim_jobs, "fcfs-bb", false, static_cast<long>(duration));
    for (const TimedRun* r : {&full, &direct, &messages, &fcfs})
      if (!r->result) {
        out << r->result.error().message << "\n";
        return 1;
      }
    const bool same = same_run(*direct.result, *messages.result);
    ok = ok && same;
    out << "  " << workload::to_string(sizes) << ": " << jobs->size() << " jobs; dqt-ffapa "
        << number(full.seconds, 2) << " s (" << number(full.result->slots / full.seconds, 0)
        << " slots/s, utilization " << number(full.result->utilization, 3) << "); first " << prefix
        << " units: direct " << number(direct.seconds, 2) << " s, messages "
        << number(messages.seconds, 2) << " s, ratio "
        << number(messages.seconds / direct.seconds, 2) << "x" << (same ? "" : "  MISMATCH")
        << "; fcfs-bb " << number(fcfs.seconds, 2) << " s (utilization "
        << number(fcfs.result->utilization, 3) << ")\n";
  }
  return ok ? 0 : 1;
}

}  // namespace trellis::bench
