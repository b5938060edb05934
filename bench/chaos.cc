#include "bench/chaos.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "core/id_ranges.h"
#include "core/node_inventory.h"
#include "daemon/config.h"
#include "daemon/controller_client.h"
#include "daemon/controller_service.h"
#include "daemon/detached_process.h"
#include "daemon/process.h"
#include "store/state_store.h"
#include "topology/machine.h"

namespace trellis::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void sleep_for(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, seconds)));
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What every process of a chaos job runs: a line as it begins and one as it ends, with its
// attempt, node and time in nanoseconds, around a short sleep.
// On shared nodes each line ends with the CPUs the job was given there (TRELLIS_CPUS), and the
// job asks `resources` (core/resource_request.h's text).
v1::SubmitRequest chaos_job(int nodes, double sleep_seconds, const std::string& out_dir,
                            const std::string& resources = "") {
  v1::SubmitRequest request;
  v1::JobSpec& spec = *request.mutable_spec();
  spec.set_nodes(nodes);
  spec.set_name("chaos");
  spec.set_time_limit(120);
  spec.set_cwd("/tmp");
  spec.set_output(out_dir + "/%j");
  spec.set_resources(resources);
  const std::string cpus = resources.empty() ? "" : " $TRELLIS_CPUS";
  std::ostringstream script;
  script << "echo \"B $TRELLIS_ATTEMPT $TRELLIS_NODENAME $(date +%s%N)" << cpus << "\"; sleep "
         << sleep_seconds << "; echo \"E $TRELLIS_ATTEMPT $TRELLIS_NODENAME $(date +%s%N)" << cpus
         << "\"";
  spec.add_argv("sh");
  spec.add_argv("-c");
  spec.add_argv(script.str());
  return request;
}

// The submissions and cancels, from several client threads.
class JobStream {
 public:
  JobStream(const ClusterConfig& config, const ChaosOptions& options, std::string out_dir)
      : config_(config), options_(options), out_dir_(std::move(out_dir)) {}

  void start(int threads) {
    for (int t = 0; t < threads; ++t)
      threads_.emplace_back([this, t, threads] { run(options_.seed + 1 + t, threads); });
  }
  void stop() {
    stopping_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  std::set<JobId> acknowledged() const {
    std::lock_guard lock(mutex_);
    return {acknowledged_.begin(), acknowledged_.end()};
  }
  int64_t submitted() const { return submitted_; }
  int64_t cancels() const { return cancels_; }

 private:
  void run(uint64_t seed, int threads) {
    std::mt19937_64 random(seed);
    std::exponential_distribution<double> gap(options_.submit_rate / threads);
    std::uniform_real_distribution<double> coin(0, 1);
    std::uniform_int_distribution<int> nodes(1, 4);
    const double sleeps[] = {0, 0.2, 0.5, 1, 2};
    std::uniform_int_distribution<int> sleep_choice(0, 4);
    ControllerClient client({.addresses = config_.controllers,
                             .munge_socket = config_.munge_socket,
                             .deadline = std::chrono::milliseconds(2000)});
    while (!stopping_) {
      sleep_for(gap(random));
      if (stopping_) break;
      if (coin(random) < options_.cancel_fraction) {
        v1::CancelRequest cancel;
        {
          std::lock_guard lock(mutex_);
          if (acknowledged_.empty()) continue;
          std::uniform_int_distribution<size_t> pick(0, acknowledged_.size() - 1);
          cancel.add_job_ids(acknowledged_[pick(random)]);
        }
        v1::CancelReply reply;
        grpc::Status s = client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Cancel(&context, cancel, &reply);
        });
        if (s.ok()) ++cancels_;
        continue;
      }
      // On shared nodes, jobs of 1 or 2 cores and up to half a node's memory each.
      std::string resources;
      if (!options_.shared_nodes.empty())
        resources = "cpus_per_task=" + std::to_string(1 + static_cast<int>(coin(random) * 2)) +
                    " mem=" + std::to_string(64 + static_cast<int>(coin(random) * 448));
      v1::SubmitRequest request =
          chaos_job(nodes(random), sleeps[sleep_choice(random)], out_dir_, resources);
      v1::SubmitReply reply;
      ++submitted_;
      grpc::Status s = client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Submit(&context, request, &reply);
      });
      if (s.ok()) {
        std::lock_guard lock(mutex_);
        acknowledged_.push_back(reply.job_id());
      }
    }
  }

  const ClusterConfig& config_;
  const ChaosOptions& options_;
  std::string out_dir_;
  std::atomic<bool> stopping_ = false;
  std::atomic<int64_t> submitted_ = 0, cancels_ = 0;
  mutable std::mutex mutex_;
  std::vector<JobId> acknowledged_;
  std::vector<std::thread> threads_;
};

std::optional<pid_t> read_pid(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return std::nullopt;
  return static_cast<pid_t>(pid);
}

// The daemons of the cluster the driver may hit, by the stem of their pid files.
std::vector<std::string> daemon_names(const ChaosOptions& options) {
  std::vector<std::string> names{"trellisd"};
  for (int c = 1; c < options.controllers; ++c) names.push_back("trellisd-" + std::to_string(c));
  for (int k = 0; k < options.agents; ++k) names.push_back("agent-" + std::to_string(k));
  return names;
}

// Recovered: the controllers answer and every node is up with a heartbeat from after `since_wall`.
bool recovered(ControllerClient& probe, Seconds since_wall) {
  v1::ListNodesRequest request;
  v1::ListNodesReply reply;
  grpc::Status s = probe.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
    return stub.ListNodes(&context, request, &reply);
  });
  if (!s.ok() || reply.nodes_size() == 0) return false;
  return std::all_of(reply.nodes().begin(), reply.nodes().end(), [&](const v1::NodeInfo& node) {
    return node.state() != v1::DOWN && node.last_heartbeat() >= since_wall;
  });
}

int active_jobs(ControllerClient& probe) {
  v1::ListJobsRequest request;  // active jobs only
  v1::ListJobsReply reply;
  grpc::Status s = probe.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
    return stub.ListJobs(&context, request, &reply);
  });
  return s.ok() ? reply.jobs_size() : -1;
}

// What one job's processes wrote: "B|E ATTEMPT NODE NANOSECONDS [CPUS]" lines.
struct ProcessRecord {
  int attempt = 0;
  std::string node;
  int64_t began = -1, ended = -1;
  int begins = 0;
  std::vector<int> cpus;  // the CPUs it was given on a shared node; empty: the node whole
};

std::map<std::pair<int, std::string>, ProcessRecord> read_job_output(const fs::path& file) {
  std::map<std::pair<int, std::string>, ProcessRecord> records;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string mark, node;
    int attempt = 0;
    int64_t time = 0;
    if (!(fields >> mark >> attempt >> node >> time)) continue;
    ProcessRecord& r = records[{attempt, node}];
    r.attempt = attempt;
    r.node = node;
    if (std::string cpus; fields >> cpus)
      if (Result<std::vector<int>> ids = parse_id_ranges(cpus)) r.cpus = std::move(*ids);
    if (mark == "B") {
      ++r.begins;
      r.began = time;
    } else if (mark == "E") {
      r.ended = time;
    }
  }
  return records;
}

// What each node has, on shared nodes (all of one type); none otherwise.
std::vector<NodeInventory> chaos_inventories(const ChaosOptions& options) {
  if (options.shared_nodes.empty()) return {};
  Result<Machine> machine = Machine::parse(options.machine);
  Result<NodeInventory> node = parse_node_inventory(options.shared_nodes);
  if (!machine || !node) return {};
  return std::vector<NodeInventory>(static_cast<size_t>(machine->node_count()), *node);
}

void note(ChaosResult& result, std::string what) {
  if (result.problems.size() < 20) result.problems.push_back(std::move(what));
}

}  // namespace

Status audit_chaos_run(StateStore& store, const std::set<JobId>& acknowledged,
                       const std::string& out_dir_name, ChaosResult& result,
                       const std::vector<NodeInventory>& inventories) {
  const fs::path out_dir = out_dir_name;
  Result<EventLogAudit> log = audit_event_log(store, inventories);
  if (!log) return log.error();
  result.log = std::move(*log);
  Result<std::vector<StoredJob>> jobs = store.list_jobs({});
  if (!jobs) return jobs.error();

  struct Interval {
    int64_t begin, end;
    JobId job;
    int attempt;
    std::vector<int> cpus;  // empty: the node whole
  };
  std::map<std::string, std::vector<Interval>> by_node;
  std::set<JobId> stored;
  for (const StoredJob& job : *jobs) {
    stored.insert(job.id);
    const std::string id = "job " + std::to_string(job.id);
    ++result.final_states[std::string(state_letter(job.state))];
    if (!acknowledged.count(job.id)) ++result.stored_unacknowledged;
    if (!is_final(job.state)) {
      ++result.lost;
      note(result, id + " never ended: " + std::string(state_name(job.state)));
    }
    const int last = result.log.last_attempt[job.id];
    const std::set<int>& requeued = result.log.requeued_attempts[job.id];
    std::set<std::string> last_attempt_ran;
    for (const auto& [key, record] : read_job_output(out_dir / std::to_string(job.id))) {
      const std::string where =
          id + " attempt " + std::to_string(record.attempt) + " on " + record.node;
      if (record.begins > 1) {
        ++result.run_twice;
        note(result, where + " ran " + std::to_string(record.begins) + " times");
      }
      if (record.attempt > last || record.attempt < 1) {
        ++result.run_twice;
        note(result, where + " ran, but the store started " + std::to_string(last) + " attempts");
      } else if (record.attempt < last) {
        if (requeued.count(record.attempt)) {
          ++result.reruns_after_requeue;
        } else {
          ++result.run_twice;
          note(result, where + " ran, and the store never requeued that attempt");
        }
      } else if (record.ended >= 0) {
        last_attempt_ran.insert(record.node);
      }
      if (record.began >= 0)
        by_node[record.node].push_back({record.began, std::max(record.began, record.ended), job.id,
                                        record.attempt, record.cpus});
    }
    if (job.state == JobState::kCompleted && last_attempt_ran.size() != job.nodes.size()) {
      ++result.completed_unrun;
      note(result, id + " completed, but its attempt " + std::to_string(last) + " ran on " +
                       std::to_string(last_attempt_ran.size()) + " of " +
                       std::to_string(job.nodes.size()) + " nodes");
    }
  }
  for (JobId id : acknowledged) {
    if (!stored.count(id)) {
      ++result.lost;
      note(result, "job " + std::to_string(id) + " was acknowledged and is not in the store");
    }
  }
  // Two processes of different jobs (or attempts) on one node at once, by their own clocks,
  // unless each had CPUs of its own there (shared nodes).
  auto share_a_cpu = [](const Interval& a, const Interval& b) {
    if (a.cpus.empty() || b.cpus.empty()) return true;
    for (int cpu : a.cpus)
      if (std::find(b.cpus.begin(), b.cpus.end(), cpu) != b.cpus.end()) return true;
    return false;
  };
  for (auto& [node, intervals] : by_node) {
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    std::vector<const Interval*> open;  // begun and not ended by the current one's begin
    for (const Interval& i : intervals) {
      std::erase_if(open, [&](const Interval* o) { return o->end <= i.begin; });
      for (const Interval* o : open)
        if ((i.job != o->job || i.attempt != o->attempt) && share_a_cpu(i, *o)) {
          ++result.process_overlaps;
          note(result, "on " + node + ", job " + std::to_string(i.job) + " attempt " +
                           std::to_string(i.attempt) + " ran while job " + std::to_string(o->job) +
                           " attempt " + std::to_string(o->attempt) + " still did" +
                           (i.cpus.empty() ? "" : ", on a CPU of its"));
          break;
        }
      open.push_back(&i);
    }
  }
  return Ok{};
}

double ChaosResult::worst_recovery() const {
  double worst = 0;
  for (const ChaosFault& f : faults) worst = std::max(worst, f.recovered < 0 ? 1e9 : f.recovered);
  return worst;
}

Result<ChaosResult> run_chaos(const ChaosOptions& options) {
  if (options.controllers > 1 && !options.store_url.starts_with("postgres"))
    return fail("controllers: more than one needs a PostgreSQL store");
  const fs::path dir = fs::absolute(options.dir);
  std::error_code error;
  fs::create_directories(dir / "out", error);
  if (error) return fail("cannot create " + (dir / "out").string() + ": " + error.message());
  std::string up =
      quoted(options.trellis_binary) + " cluster up --machine " + quoted(options.machine) +
      " --dir " + quoted(dir.string()) + " --agents " + std::to_string(options.agents) +
      " --controllers " + std::to_string(options.controllers) + " --allocation " +
      quoted(options.allocation) +
      (options.store_url.empty() ? "" : " --store " + quoted(options.store_url)) +
      (options.shared_nodes.empty()
           ? ""
           : " --node-type " + quoted("chaos::" + options.shared_nodes) + " --shared-nodes") +
      " > " + quoted((dir / "cluster-up.txt").string()) + " 2>&1";
  if (std::system(up.c_str()) != 0)
    return fail(Error::Code::kUnavailable,
                "trellis cluster up failed; see " + (dir / "cluster-up.txt").string());
  const std::string down = quoted(options.trellis_binary) + " cluster down --dir " +
                           quoted(dir.string()) + " > /dev/null 2>&1";
  Result<ClusterConfig> config = load_cluster_config((dir / "trellis.toml").string());
  if (!config) {
    (void)std::system(down.c_str());
    return config.error();
  }

  ChaosResult result;
  JobStream stream(*config, options, (dir / "out").string());
  ControllerClient probe({.addresses = config->controllers,
                          .munge_socket = config->munge_socket,
                          .deadline = std::chrono::milliseconds(1000)});
  std::mt19937_64 random(options.seed);
  std::exponential_distribution<double> gap(1.0 / options.fault_every);
  std::uniform_real_distribution<double> coin(0, 1);
  const std::vector<std::string> names = daemon_names(options);
  std::uniform_int_distribution<size_t> pick(0, names.size() - 1);
  std::set<pid_t> children;  // daemons this run restarted: its own children, reaped at the end
  std::ofstream faults_csv(dir / "faults.csv");
  faults_csv << "at,action,target,down_for,recovered\n";

  const auto started = Clock::now();
  stream.start(2);
  double next_progress = 30;
  std::string stopped_because;
  while (since(started) < options.seconds) {
    sleep_for(std::min(gap(random), options.seconds - since(started)));
    if (since(started) >= options.seconds) break;
    const std::string target = names[pick(random)];
    const fs::path pid_file = dir / (target + ".pid");
    std::optional<pid_t> pid = read_pid(pid_file);
    std::vector<std::string> argv = pid ? process_arguments(*pid) : std::vector<std::string>{};
    if (!pid || argv.empty()) {
      stopped_because = target + " is not running (pid file " + pid_file.string() + ")";
      break;
    }
    ChaosFault fault;
    fault.at = since(started);
    fault.target = target;
    const auto hit = Clock::now();
    if (coin(random) < options.pause_fraction) {
      fault.action = "SIGSTOP";
      ++result.pauses;
      ::kill(*pid, SIGSTOP);
      sleep_for(0.2 + coin(random) * (options.pause_within - 0.2));
      ::kill(*pid, SIGCONT);
    } else {
      fault.action = "kill -9";
      ++result.kills;
      ::kill(*pid, SIGKILL);
      while (process_running(*pid)) {
        if (children.count(*pid)) ::waitpid(*pid, nullptr, WNOHANG);
        sleep_for(0.005);
      }
      if (children.erase(*pid)) ::waitpid(*pid, nullptr, 0);
      sleep_for(coin(random) * options.restart_within);
      Result<pid_t> again =
          start_detached(argv, (dir / (target + ".log")).string(), pid_file.string());
      if (!again) {
        stopped_because = "restarting " + target + ": " + again.error().message;
        break;
      }
      children.insert(*again);
    }
    fault.down_for = since(hit);
    const Seconds back_wall = wall_clock_now();
    while (since(hit) < 120 && !recovered(probe, back_wall)) sleep_for(0.05);
    if (since(hit) < 120) fault.recovered = since(hit);
    faults_csv << fault.at << "," << fault.action << "," << fault.target << "," << fault.down_for
               << "," << fault.recovered << "\n";
    result.faults.push_back(fault);
    if (fault.recovered < 0) note(result, fault.action + " " + target + ": no recovery in 120 s");
    if (options.progress && since(started) >= next_progress) {
      next_progress += 30;
      options.progress("chaos: " + std::to_string(static_cast<int>(since(started))) + " of " +
                       std::to_string(static_cast<int>(options.seconds)) + " s, " +
                       std::to_string(result.kills) + " kills, " + std::to_string(result.pauses) +
                       " pauses, " + std::to_string(stream.acknowledged().size()) +
                       " jobs acknowledged");
    }
  }
  stream.stop();
  result.seconds = since(started);

  // Every job is let finish: the wait lasts while jobs keep ending, two minutes without progress
  // at most.
  int left = -1;
  auto progress_at = Clock::now();
  while (left != 0 && since(progress_at) < 120) {
    int now_left = active_jobs(probe);
    if (now_left >= 0 && (left < 0 || now_left < left)) {
      left = now_left;
      progress_at = Clock::now();
    }
    sleep_for(0.25);
  }
  Status audited = Ok{};
  {
    Result<std::unique_ptr<StateStore>> store = open_store(config->store, {.read_only = true});
    if (!store)
      audited = store.error();
    else
      audited = audit_chaos_run(**store, stream.acknowledged(), (dir / "out").string(), result,
                                chaos_inventories(options));
  }
  result.submitted = stream.submitted();
  result.acknowledged = static_cast<int64_t>(stream.acknowledged().size());
  result.cancels = stream.cancels();
  (void)std::system(down.c_str());
  for (pid_t child : children) {
    if (process_running(child))
      ::kill(child, SIGKILL);  // `down` stops them; this only if it could not
    ::waitpid(child, nullptr, 0);
  }
  if (!stopped_because.empty()) return fail(Error::Code::kInternal, stopped_because);
  if (!audited) return audited.error();
  return result;
}

}  // namespace trellis::bench
