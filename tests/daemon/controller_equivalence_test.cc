// The daemon runs the simulator's scheduling code, not a copy: a workload replayed through the
// Controller (the daemon's whole path below gRPC: checks, the SQLite store, passes, launches,
// exit reports, time limits) in virtual time, with the agents faked at the RPC boundary, gets
// exactly the schedule `trellis sim` computes: every job's start, end and nodes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <queue>

#include "../build_paths.h"
#include "alloc/registry.h"
#include "core/hostlist.h"
#include "daemon/controller.h"
#include "sched/registry.h"
#include "sched/request_shaping.h"
#include "sim/event_loop.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "store/state_store.h"

namespace trellis {
namespace {

// Agents that run every job for its trace run time: a launch schedules the job's exit, a
// terminating signal makes it exit now.
class VirtualAgents final : public AgentLink {
 public:
  struct Exit {
    Seconds time;
    JobId job;
    int attempt;
    std::vector<std::string> nodes;
    int signal;
    bool operator>(const Exit& o) const { return time != o.time ? time > o.time : job > o.job; }
  };

  Seconds now = 0;
  std::map<JobId, Seconds> run_time;  // by controller job id
  std::map<JobId, Seconds> started;   // launch time of each job
  std::map<JobId, std::vector<std::string>> nodes;
  std::priority_queue<Exit, std::vector<Exit>, std::greater<>> exits;
  int launches = 0;

  void launch(const std::vector<std::string>&, const v1::LaunchRequest& r) override {
    ++launches;
    started[r.job_id()] = now;
    std::vector<std::string> names(r.nodes().begin(), r.nodes().end());
    nodes[r.job_id()] = names;
    exits.push({now + run_time.at(r.job_id()), r.job_id(), r.attempt(), names, 0});
  }
  void signal(const std::vector<std::string>&, const v1::SignalRequest& r) override {
    exits.push({now, r.job_id(), r.attempt(), nodes.at(r.job_id()), 15});
  }
};

struct Outcome {
  Seconds start = 0, end = 0;
  std::string nodes;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

// With `schedule`, also gives the simulator's schedule (job id -> outcome), so that a caller can
// compare settings.
void expect_same_schedule(const std::string& machine_spec, const std::string& allocator_name,
                          const std::string& policy_name, std::vector<Job> jobs,
                          size_t max_job_test = 0, std::map<JobId, Outcome>* schedule = nullptr) {
  SCOPED_TRACE(machine_spec + " " + allocator_name + " " + policy_name +
               " max_job_test=" + std::to_string(max_job_test));
  Machine machine = *Machine::parse(machine_spec);
  auto allocator = AllocatorRegistry::builtin().create(allocator_name, machine);
  auto policy = PolicyRegistry::builtin().create(policy_name, machine);
  ASSERT_TRUE(allocator && policy);
  SimOptions options;
  options.record_placements = true;
  options.max_job_test = max_job_test;
  // As `trellis sim` takes them: with an allocator that places only boxes, a count that no box
  // holds is rounded up to the smallest box that does. The daemon is given the counts asked.
  std::vector<Job> placed = jobs;
  const AllocatorInfo* info = AllocatorRegistry::builtin().find(allocator_name);
  if (info && info->places_only_boxes && machine.torus())
    for (Job& job : placed) job.request = pad_to_box(*machine.torus(), job.request);
  SimResult sim = simulate(machine, **allocator, **policy, placed, options);
  std::map<JobId, Outcome> expected;
  for (const JobRecord& r : sim.jobs) {
    NodeSet nodes(machine.node_count());
    for (auto [first, last] : r.runs)
      for (NodeId n = first; n <= last; ++n) nodes.set(n);
    expected[r.id] = {r.start, r.end, format_hostlist(nodes)};
  }

  // The daemon's path, in virtual time, on a real SQLite store.
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("trellis-equivalence-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ClusterConfig config;
  config.machine = machine_spec;
  config.store = "sqlite:" + (dir / "state.db").string();
  config.controller.policy = policy_name;
  config.controller.allocator = allocator_name;
  config.controller.heartbeat_interval = 1e9;  // the fake agents never miss one
  config.controller.max_job_test = static_cast<int>(max_job_test);
  auto store = open_store(config.store);
  ASSERT_TRUE(store) << store.error().message;
  VirtualAgents agents;
  auto controller = Controller::open(config, **store, agents, 0);
  ASSERT_TRUE(controller) << controller.error().message;
  Controller& c = **controller;
  const Caller daemon{static_cast<int>(getuid()), static_cast<int>(getgid())};

  v1::RegisterRequest hello;
  hello.set_address("fake:1");
  for (NodeId n = 0; n < machine.node_count(); ++n) hello.add_nodes("n" + std::to_string(n));
  ASSERT_TRUE(c.register_agent(hello, daemon, 0));

  std::vector<const Job*> arrivals;
  for (const Job& j : jobs) arrivals.push_back(&j);
  std::stable_sort(arrivals.begin(), arrivals.end(), [](const Job* a, const Job* b) {
    return a->submit != b->submit ? a->submit < b->submit : a->id < b->id;
  });
  std::map<JobId, JobId> trace_id;  // controller id -> trace id
  size_t next = 0;
  int rejected = 0;
  auto deliver_exits = [&](Seconds now) {
    while (!agents.exits.empty() && agents.exits.top().time <= now) {
      VirtualAgents::Exit e = agents.exits.top();
      agents.exits.pop();
      v1::ExitRequest report;
      for (const std::string& node : e.nodes) {
        v1::TaskStatus* t = report.add_tasks();
        t->set_job_id(e.job);
        t->set_attempt(e.attempt);
        t->set_node(node);
        t->set_signal(e.signal);
      }
      ASSERT_TRUE(c.report_exits(report, daemon, now));
    }
  };
  for (;;) {
    Seconds now = kNever;
    if (next < arrivals.size()) now = arrivals[next]->submit;
    if (!agents.exits.empty()) now = std::min(now, agents.exits.top().time);
    if (std::optional<Seconds> wake = c.next_wakeup(); wake && *wake < 1e8)
      now = std::min(now, *wake);
    if (now == kNever) break;
    agents.now = now;
    deliver_exits(now);
    while (next < arrivals.size() && arrivals[next]->submit <= now) {
      const Job& job = *arrivals[next++];
      v1::JobSpec spec;
      spec.set_nodes(job.request.nodes);
      spec.set_mode(std::string(to_string(job.request.mode)));
      spec.set_time_limit(job.time_limit);
      spec.add_argv("true");
      spec.set_cwd("/tmp");
      Result<JobId> id = c.submit(spec, {job.user, job.group}, now);
      if (!id) {
        ++rejected;
        continue;
      }
      trace_id[*id] = job.id;
      agents.run_time[*id] = job.run_time;
    }
    ASSERT_TRUE(c.tick(now));
    deliver_exits(now);  // jobs killed at their time limit end now
    if (c.pass_due(now)) {
      ASSERT_TRUE(c.run_pass(now));
    }
  }

  EXPECT_EQ(rejected, static_cast<int>(sim.rejected.size()));
  ASSERT_EQ(agents.started.size(), expected.size());
  auto finished = (*store)->list_jobs({});
  ASSERT_TRUE(finished);
  std::map<JobId, Seconds> end_of;
  for (const StoredJob& j : *finished) end_of[j.id] = j.end_time;
  int compared = 0;
  for (const auto& [id, start] : agents.started) {
    std::string names;
    for (const std::string& n : agents.nodes[id]) names += (names.empty() ? "" : ",") + n;
    Outcome got{start, end_of[id], format_hostlist(*parse_hostlist(names, machine.node_count()))};
    ASSERT_EQ(got, expected.at(trace_id.at(id))) << "job " << trace_id.at(id);
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(jobs.size()) - rejected);
  std::filesystem::remove_all(dir);
  if (schedule) *schedule = expected;
}

TEST(ControllerEquivalence, LublinTraceThroughTheDaemonPathMatchesTheSimulator) {
  auto workload = load_workload(TRELLIS_SOURCE_DIR + "/data/workloads/lublin_256.swf");
  ASSERT_TRUE(workload);
  workload->jobs.resize(400);
  expect_same_schedule("torus:16x16", "contiguous", "easy", workload->jobs);
  expect_same_schedule("torus:16x16", "linear-bestfit-hilbert", "conservative", workload->jobs);
}

// trellisd bounds each pass to the head of its queue (max_job_test, as Slurm's bf_max_job_test);
// the simulator given the same bound decides the same. The Lublin trace queues up to 222 jobs
// under conservative backfilling, so a bound of 8 changes the schedule (checked, so that the
// comparison is not of two unbounded runs).
TEST(ControllerEquivalence, ABoundedPassDecidesAsTheSimulatorWithTheSameBound) {
  auto workload = load_workload(TRELLIS_SOURCE_DIR + "/data/workloads/lublin_256.swf");
  ASSERT_TRUE(workload);
  workload->jobs.resize(400);
  std::map<JobId, Outcome> bounded, unbounded;
  expect_same_schedule("torus:16x16", "linear-bestfit-hilbert", "conservative", workload->jobs, 8,
                       &bounded);
  expect_same_schedule("torus:16x16", "linear-bestfit-hilbert", "conservative", workload->jobs, 0,
                       &unbounded);
  ASSERT_FALSE(bounded.empty());
  EXPECT_NE(bounded, unbounded) << "a bound of 8 should change this schedule";
}

TEST(ControllerEquivalence, NasaTraceOnAFlatMachine) {
  auto workload =
      load_workload(TRELLIS_SOURCE_DIR + "/data/workloads/NASA-iPSC-1993-3.1-cln.swf.gz");
  ASSERT_TRUE(workload);
  workload->jobs.resize(400);
  expect_same_schedule("flat:128", "first-available", "easy", workload->jobs);
}

}  // namespace
}  // namespace trellis
