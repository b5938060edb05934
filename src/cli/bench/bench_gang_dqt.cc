#include "cli/bench/bench_gang_dqt.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "cli/alloc_report.h"
#include "cli/cluster/interrupt_cleanup.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "sched/gang/registry.h"
#include "sim/gang/gang_simulator.h"
#include "sim/workload/thesis_model.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kPolicy = "dqt-ffapa";

// Thesis Table 7.2 (64 processors, 1,524 jobs): mean RETR by size, its simulation and SCore-D.
struct ThesisRow {
  int size;
  int jobs;
  double simulation;
  double score_d;
};
constexpr ThesisRow kTable72[] = {
    {1, 221, 1.88, 2.18},  {2, 223, 1.88, 2.03},  {4, 229, 1.89, 2.08}, {8, 199, 1.86, 1.95},
    {16, 218, 2.06, 2.40}, {32, 204, 2.27, 2.58}, {64, 230, 2.57, 3.17}};
constexpr ThesisRow kTable72Total = {0, 1524, 2.06, 2.35};

int failed(const std::string& message) {
  std::cerr << "trellis bench gang-live (d): " << message << "\n";
  return kExitFailure;
}

// A 2-D mesh of `nodes` (a power of two) nodes, as square as it gets.
std::string machine_spec(int nodes) {
  int k = 0;
  while ((1 << k) < nodes) ++k;
  int across = 1 << ((k + 1) / 2);
  return "mesh:" + std::to_string(across) + "x" + std::to_string(nodes / across);
}

// One job of the experiment: what the simulation gave it, and what the live system did.
struct Trial {
  gangsim::SimJob job;
  double sim_retr = 0;
  long sim_start = -1, sim_end = -1;
  JobId live_id = 0;  // 0: not submitted (refused)
  const v1::JobInfo* live = nullptr;
  double live_retr = 0;
  bool live_completed = false;
};

struct Means {
  int jobs = 0;
  double sim = 0, live = 0;
  void add(const Trial& t) {
    ++jobs;
    sim += t.sim_retr;
    live += t.live_retr;
  }
};

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

void print_row(const std::string& label, const Means& m, const ThesisRow* thesis) {
  std::cout << std::setw(22) << label << std::setw(7) << m.jobs;
  if (m.jobs == 0) {
    std::cout << "\n";
    return;
  }
  double sim = m.sim / m.jobs, live = m.live / m.jobs;
  std::cout << std::setw(10) << fixed(sim, 2) << std::setw(10) << fixed(live, 2) << std::setw(11)
            << fixed(live / sim, 3);
  if (thesis)
    std::cout << std::setw(12) << thesis->jobs << std::setw(8) << fixed(thesis->simulation, 2)
              << std::setw(9) << fixed(thesis->score_d, 2) << std::setw(8)
              << fixed(thesis->score_d / thesis->simulation, 3);
  std::cout << "\n";
}

}  // namespace

int run_dqt_live_experiment(const DqtLiveArgs& args) {
  if (args.nodes < 2 || (args.nodes & (args.nodes - 1)) != 0)
    return failed("--nodes must be a power of two (DQT's buddy tree), found " +
                  std::to_string(args.nodes));
  // The thesis's workload, in whole time units.
  workload::ThesisModel model;
  model.processors = args.nodes;
  model.sizes = workload::SizeDistribution::kUniform;
  model.max_size = args.nodes;  // the thesis allowed the whole machine here
  model.service = workload::ServiceDistribution::kExponential;
  model.mean_service = args.mean_service;
  model.arrival_end = args.units;
  model.gradient = true;
  model.gradient_start = args.gradient_start;
  model.seed = args.seed;
  Result<std::vector<Job>> generated = workload::generate_thesis_workload(model);
  if (!generated) return failed(generated.error().message);
  std::vector<gangsim::SimJob> sim_jobs = gangsim::batch_jobs(*generated);
  if (sim_jobs.empty()) return failed("the workload has no jobs (raise --dqt-units)");

  // The simulation: slots of one unit, every job run to its end.
  Result<std::unique_ptr<gang::GangScheduler>> policy =
      gang::GangPolicyRegistry::builtin().create(kPolicy, args.nodes);
  if (!policy) return failed(policy.error().message);
  gangsim::GangSimConfig config;
  config.end_time = static_cast<long>(std::ceil(args.units));
  config.drain = true;
  config.slice = 1;
  Result<gangsim::GangSimResult> simulated = gangsim::simulate_gang(sim_jobs, **policy, config);
  if (!simulated) return failed(simulated.error().message);
  std::map<JobId, const gangsim::JobOutcome*> outcome_of;
  for (const gangsim::JobOutcome& o : simulated->jobs) outcome_of[o.id] = &o;
  std::vector<Trial> trials;
  for (const gangsim::SimJob& job : sim_jobs) {
    Trial t;
    t.job = job;
    auto o = outcome_of.find(job.id);
    if (o != outcome_of.end() && o->second->fate == gangsim::JobFate::kFinished) {
      t.sim_retr = o->second->retr;
      t.sim_start = o->second->start;
      t.sim_end = o->second->end;
    }
    trials.push_back(t);
  }
  const double live_seconds = static_cast<double>(simulated->duration) * args.unit_seconds;
  std::cout << "(d) DQT (" << kPolicy
            << ") live against its simulation (thesis section 7.3): " << trials.size()
            << " jobs on " << args.nodes << " nodes, uniform sizes 1-" << args.nodes
            << ", gradient load (offered " << fixed(simulated->offered_load, 2)
            << "), arrivals over " << args.units << " units\n"
            << "simulation: " << simulated->duration << " units, mean RETR "
            << fixed(simulated->mean_retr, 2) << "; live: 1 unit = " << args.unit_seconds
            << " s = one slice, so about " << fixed(live_seconds / 60, 1) << " minutes\n"
            << std::flush;

  // The live cluster. Heartbeats every 2 s (a node is down after 6 s without one): 64 agents
  // share this host's cores, and at a high load a whole-machine switch every slice can delay
  // them past the default 3 s, and a node taken for dead requeues its jobs.
  InterruptCleanup cleanup("trellis bench gang-live");
  fs::path dir = args.dir.empty() ? fs::temp_directory_path() /
                                        ("trellis-gang-dqt-" + std::to_string(::getpid()))
                                  : fs::absolute(args.dir);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  const fs::path up_log = dir.string() + ".up.log";
  const std::string self = sibling_binary("trellis");
  const std::string up = self + " cluster up --machine " + machine_spec(args.nodes) + " --dir " +
                         dir.string() + " --agents " + std::to_string(args.nodes) + " --policy " +
                         kPolicy + " --slice " + std::to_string(args.unit_seconds) +
                         " --tree-fanout " + std::to_string(args.switch_fanout) +
                         " --no-idle-detection --heartbeat 2 > " + up_log.string() + " 2>&1";
  // Down on every way out; a temp dir (and the log of `cluster up`) removed after.
  struct Down {
    std::string command;
    std::vector<fs::path> remove;
    ~Down() {
      if (!command.empty()) (void)std::system(command.c_str());
      std::error_code ignored;
      for (const fs::path& p : remove) fs::remove_all(p, ignored);
    }
  } down{self + " cluster down --dir " + dir.string() + " > /dev/null 2>&1",
         args.dir.empty() ? std::vector<fs::path>{dir, up_log} : std::vector<fs::path>{}};
  cleanup.set(down.command);
  if (std::system(up.c_str()) != 0)
    return failed("trellis cluster up failed; its output:\n" + [&] {
      std::ifstream in(up_log);
      return std::string(std::istreambuf_iterator<char>(in), {});
    }());
  Result<LiveClient> client = connect_to_cluster((dir / "trellis.toml").string());
  if (!client) return failed(client.error().message);

  // Each job submitted at its arrival time, by a thread of its own so that listing the queue
  // never delays a submission.
  const std::string work = sibling_binary("trellis-work");
  std::atomic<size_t> submitted{0};
  std::atomic<int> refused{0};
  std::string first_refusal;
  const auto start = Clock::now();
  std::thread submitter([&] {
    ControllerClient::Options options;
    options.addresses = client->config.controllers;
    options.munge_socket = client->config.munge_socket;
    ControllerClient controllers(options);
    for (Trial& t : trials) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                      static_cast<double>(t.job.submit) * args.unit_seconds)));
      const double seconds = static_cast<double>(t.job.work) * args.unit_seconds;
      v1::SubmitRequest request;
      v1::JobSpec& spec = *request.mutable_spec();
      spec.set_nodes(t.job.size);
      spec.set_share(true);
      spec.set_name("dqt-" + std::to_string(t.job.id));
      spec.add_argv(work);
      spec.add_argv(fixed(seconds, 3));
      spec.set_cwd(dir.string());
      spec.set_output("/dev/null");
      spec.set_time_limit(seconds * 3 + 60);  // running time only: frozen time does not count
      v1::SubmitReply reply;
      grpc::Status status =
          controllers.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
            return stub.Submit(&context, request, &reply);
          });
      if (status.ok()) {
        t.live_id = reply.job_id();
      } else if (refused++ == 0) {
        first_refusal = "job " + std::to_string(t.job.id) + ": " + status.error_message();
      }
      ++submitted;
    }
  });
  // Progress every 30 s, until every job has been submitted and none is left.
  const double give_up = live_seconds * 3 + 300;
  auto next_report = start + std::chrono::seconds(30);
  bool finished = false;
  std::string trouble;
  while (!finished) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    Result<v1::ListJobsReply> queue = list_jobs(*client, v1::ListJobsRequest{});
    if (!queue) {
      trouble = queue.error().message;
      break;
    }
    int pending = 0, running = 0;
    for (const v1::JobInfo& job : queue->jobs()) ++(job.state() == v1::PENDING ? pending : running);
    finished = submitted == trials.size() && queue->jobs_size() == 0;
    if (Clock::now() >= next_report || finished) {
      next_report += std::chrono::seconds(30);
      std::cout << "  " << std::setw(6) << fixed(elapsed, 0) << " s: " << submitted << " of "
                << trials.size() << " submitted, " << running << " running or suspended, "
                << pending << " pending\n"
                << std::flush;
    }
    if (elapsed > give_up) {
      trouble = "jobs still in the queue after " + fixed(give_up, 0) + " s";
      break;
    }
  }
  submitter.join();
  if (!trouble.empty()) return failed(trouble);
  if (refused > 0)
    std::cerr << "trellis bench gang-live (d): " << refused
              << " submissions refused; the first: " << first_refusal << "\n";

  v1::ListJobsRequest all;
  all.set_all_states(true);
  Result<v1::ListJobsReply> listed = list_jobs(*client, all);
  if (!listed) return failed(listed.error().message);
  std::map<JobId, const v1::JobInfo*> info;
  for (const v1::JobInfo& job : listed->jobs()) info[job.id()] = &job;
  std::map<std::string, int> not_completed;
  for (Trial& t : trials) {
    auto it = info.find(t.live_id);
    if (t.live_id == 0 || it == info.end()) {
      ++not_completed["not submitted"];
      continue;
    }
    const v1::JobInfo& job = *it->second;
    t.live = &job;
    if (job.state() != v1::COMPLETED) {
      ++not_completed[v1::JobState_Name(job.state())];
      continue;
    }
    t.live_completed = true;
    t.live_retr = (job.end_time() - job.submit_time()) /
                  (static_cast<double>(t.job.work) * args.unit_seconds);
  }

  if (!args.csv.empty()) {
    std::ofstream csv(args.csv);
    csv << "job,size,work_units,submit_units,sim_start,sim_end,sim_retr,live_id,live_state,"
           "live_submit_s,live_start_s,live_end_s,live_frozen_s,live_retr\n";
    const double epoch = listed->jobs_size() > 0 ? listed->jobs(0).submit_time() : 0;
    for (const Trial& t : trials) {
      csv << t.job.id << "," << t.job.size << "," << t.job.work << "," << t.job.submit << ","
          << t.sim_start << "," << t.sim_end << "," << fixed(t.sim_retr, 4) << "," << t.live_id;
      if (t.live) {
        auto since = [&](double at) { return at > 0 ? fixed(at - epoch, 3) : std::string(); };
        csv << "," << v1::JobState_Name(t.live->state()) << "," << since(t.live->submit_time())
            << "," << since(t.live->start_time()) << "," << since(t.live->end_time()) << ","
            << fixed(t.live->seconds_frozen(), 3) << "," << fixed(t.live_retr, 4);
      } else {
        csv << ",,,,,,";
      }
      csv << "\n";
    }
    if (!csv) return failed(args.csv + ": cannot write");
  }

  // The table: jobs that finished in both runs, by size; then by when the simulation ended them
  // (the thesis's Tables 7.3 and 7.4 split at 5,000 of 10,000 units).
  std::map<int, Means> by_size;
  Means total, low, high;
  for (const Trial& t : trials) {
    if (!t.live_completed || t.sim_end < 0) continue;
    by_size[t.job.size].add(t);
    total.add(t);
    (static_cast<double>(t.sim_end) < args.units / 2 ? low : high).add(t);
  }
  const bool thesis_machine = args.nodes == 64;
  std::cout << "\nmean RETR by job size" << (thesis_machine ? ", with the thesis's Table 7.2" : "")
            << "\n"
            << std::setw(22) << "size" << std::setw(7) << "jobs" << std::setw(10) << "sim"
            << std::setw(10) << "live" << std::setw(11) << "live/sim";
  if (thesis_machine)
    std::cout << std::setw(12) << "thesis jobs" << std::setw(8) << "sim" << std::setw(9)
              << "SCore-D" << std::setw(8) << "ratio";
  std::cout << "\n";
  for (const auto& [size, means] : by_size) {
    const ThesisRow* row = nullptr;
    for (const ThesisRow& r : kTable72)
      if (thesis_machine && r.size == size) row = &r;
    print_row(std::to_string(size), means, row);
  }
  print_row("all", total, thesis_machine ? &kTable72Total : nullptr);
  print_row("ended before " + fixed(args.units / 2, 0), low, nullptr);
  print_row("ended after", high, nullptr);
  if (!not_completed.empty()) {
    std::cout << "not in the table:";
    for (const auto& [why, count] : not_completed) std::cout << " " << count << " " << why;
    std::cout << "\n";
  }
  if (total.jobs > 0)
    std::cout << "live against simulation: " << fixed(total.live / total.sim, 3)
              << " (goal: within 10%; the thesis's SCore-D: "
              << fixed(kTable72Total.score_d / kTable72Total.simulation, 3) << ")\n";
  return not_completed.empty() && refused == 0 ? kExitOk : kExitFailure;
}

}  // namespace trellis::cli
