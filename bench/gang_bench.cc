#include "bench/gang_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

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

// Round robin on one random static tree; returns false if the two disagree.
bool compare_round_robin(int processors, long slots, std::ostream& out) {
  auto tree = gang::PartitionTree::for_processors(processors, 2);
  std::mt19937 rng(static_cast<unsigned>(processors));
  std::vector<std::vector<JobId>> queues(tree->node_count());
  auto dqt = gang::Dqt::make("dqt", processors, gang::DqtOptions{});
  JobId id = 1;
  for (gang::TreeNodeId n = 0; n < tree->node_count(); ++n) {
    // About one job per four nodes, more of them low in the tree: many small jobs.
    int jobs =
        std::bernoulli_distribution(0.25)(rng) ? std::uniform_int_distribution<int>(1, 3)(rng) : 0;
    for (int j = 0; j < jobs; ++j) {
      queues[n].push_back(id);
      if (!(*dqt)->submit_at(id, n)) return false;
      ++id;
    }
  }
  gang::ReferenceRoundRobin reference(*tree, queues, false);

  std::vector<std::vector<gang::RunningJob>> ours(static_cast<std::size_t>(slots));
  auto start = Clock::now();
  for (long s = 0; s < slots; ++s) ours[s] = (*dqt)->next_slot();
  double dqt_seconds = since(start);
  std::vector<std::vector<gang::RunningJob>> theirs(static_cast<std::size_t>(slots));
  start = Clock::now();
  for (long s = 0; s < slots; ++s) theirs[s] = reference.next_slot();
  double reference_seconds = since(start);

  bool same = true;
  for (long s = 0; s < slots && same; ++s) {
    auto a = ours[s];
    std::sort(a.begin(), a.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    same = a == theirs[s];
  }
  out << "  " << processors << " processors, " << id - 1 << " jobs, " << slots << " slots: dqt "
      << number(slots / dqt_seconds, 0) << " slots/s ("
      << number((*dqt)->messages() / double(slots), 1) << " messages/slot), reference "
      << number(slots / reference_seconds, 0) << " slots/s; ratio "
      << number(reference_seconds / dqt_seconds, 2) << "x" << (same ? "" : "  MISMATCH") << "\n";
  return same;
}

}  // namespace

int run_gang_bench(const GangBenchOptions& options, std::ostream& out) {
  out << "Round robin: message-passing DQT vs centralized reference (same random static trees)\n";
  bool ok = true;
  for (int p : {128, 1024, 4096}) {
    long slots = options.quick ? 2000 : 20000;
    ok = compare_round_robin(p, slots, out) && ok;
  }

  const double duration = options.quick ? 1e5 : 1e6;
  out << "\nSimulation: " << number(duration, 0)
      << " time units on 4096 processors, load 0.9, exponential service (mean 1000)\n";
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
    gangsim::GangSimConfig config;
    config.end_time = static_cast<long>(duration);
    if (options.progress)
      std::cerr << "  simulating " << workload::to_string(sizes) << " sizes...\n";
    auto dqt = gang::Dqt::make("dqt-ffapa", 4096, gang::DqtOptions{});
    auto start = Clock::now();
    auto r = gangsim::simulate_gang(sim_jobs, **dqt, config);
    double dqt_seconds = since(start);
    auto fcfs = gang::GangPolicyRegistry::builtin().create("fcfs-bb", 4096);
    start = Clock::now();
    auto f = gangsim::simulate_gang(sim_jobs, **fcfs, config);
    double fcfs_seconds = since(start);
    if (!r || !f) return 1;
    out << "  " << workload::to_string(sizes) << ": " << jobs->size() << " jobs; dqt-ffapa "
        << number(dqt_seconds, 2) << " s (" << number(r->slots / dqt_seconds, 0) << " slots/s, "
        << number((*dqt)->messages() / double(std::max(1L, r->slots)), 0)
        << " messages/slot, utilization " << number(r->utilization, 3) << "); fcfs-bb "
        << number(fcfs_seconds, 2) << " s (utilization " << number(f->utilization, 3) << ")\n";
  }
  return ok ? 0 : 1;
}

}  // namespace trellis::bench
