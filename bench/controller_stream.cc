#include "bench/controller_stream.h"

#include "bench/event_log_audit.h"
#include "bench/overtakes.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "daemon/controller.h"
#include "daemon/controller_service.h"
#include "store/change_feed.h"
#include "store/state_store.h"

namespace trellis::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The agents of the whole cluster: tasks run for a few milliseconds of wall time after their
// launch; a terminating signal ends them at once. Thread-safe.
class FakeAgents final : public AgentLink {
 public:
  struct Task {
    JobId job;
    int attempt;
    std::string node;
    Seconds ends;
    int signal = 0;
  };

  void launch(const std::vector<std::string>&, const v1::LaunchRequest& r) override {
    std::lock_guard lock(mutex_);
    if (!launched_.insert({r.job_id(), r.attempt()}).second) {
      ++repeated_launches;  // a new scheduler's reconciliation: ignored, as an agent does
      return;
    }
    if (!attempts_of_[r.job_id()].insert(r.attempt()).second) ++started_twice;
    std::uniform_real_distribution<double> run(0.0, 0.02);
    Seconds ends = wall_clock_now() + run(random_);
    for (const std::string& node : r.nodes()) {
      auto [at, fresh] = busy_.emplace(node, r.job_id());
      if (!fresh) ++node_given_twice;  // a node already running another job's task
      tasks_.push_back({r.job_id(), r.attempt(), node, ends});
      ++tasks_left_[r.job_id()];
    }
  }

  void signal(const std::vector<std::string>&, const v1::SignalRequest& r) override {
    std::lock_guard lock(mutex_);
    Seconds now = wall_clock_now();
    for (Task& t : tasks_)
      if (t.job == r.job_id() && t.attempt == r.attempt() && t.ends > now) {
        t.ends = now;
        t.signal = 15;
      }
  }

  // The tasks that have ended by `now`; their nodes are free at the agent from then on.
  std::vector<Task> take_ended(Seconds now) {
    std::lock_guard lock(mutex_);
    std::vector<Task> ended;
    std::erase_if(tasks_, [&](const Task& t) {
      if (t.ends > now) return false;
      ended.push_back(t);
      busy_.erase(t.node);
      if (--tasks_left_[t.job] == 0) {
        tasks_left_.erase(t.job);
        ++jobs_done;
      }
      return true;
    });
    return ended;
  }

  size_t launches() {
    std::lock_guard lock(mutex_);
    return launched_.size();
  }
  bool idle() {
    std::lock_guard lock(mutex_);
    return tasks_.empty();
  }

  std::atomic<int64_t> repeated_launches{0}, started_twice{0}, node_given_twice{0};
  std::atomic<int64_t> jobs_done{0};  // jobs whose processes have all ended

 private:
  std::mutex mutex_;
  std::mt19937 random_{7};
  std::set<std::pair<JobId, int>> launched_;
  std::map<JobId, std::set<int>> attempts_of_;
  std::map<std::string, JobId> busy_;  // node -> the job whose task runs there
  std::vector<Task> tasks_;
  std::map<JobId, int> tasks_left_;  // of each job whose processes run
};

// Wakes a controller's scheduler thread after a call, as trellisd's service pokes its loop.
struct Waker {
  std::mutex mutex;
  std::condition_variable cv;
  bool poked = false;
  void poke() {
    {
      std::lock_guard lock(mutex);
      poked = true;
    }
    cv.notify_one();
  }
  void wait(double seconds) {
    std::unique_lock lock(mutex);
    cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return poked; });
    poked = false;
  }
};

double process_cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void problem(StreamResult& result, std::string what) {
  if (result.problems.size() < 10) result.problems.push_back(std::move(what));
}

}  // namespace

Result<StreamResult> run_controller_stream(const StreamOptions& options) {
  const int count = options.controllers;
  if (count < 1) return fail("controllers: at least one");
  ClusterConfig config;
  config.machine = options.machine;
  config.store = options.store_url;
  config.controller.policy = "easy";
  config.controller.heartbeat_interval = 1e6;  // the fake agents never miss one
  config.controller.scheduler_lease = options.scheduler_lease;
  config.controller.allocation = options.allocation;
  config.controller.batch_wait = options.batch_wait;
  Result<Machine> machine = Machine::parse(options.machine);
  if (!machine) return machine.error();

  FakeAgents agents;
  std::vector<std::unique_ptr<StateStore>> stores;
  std::vector<std::unique_ptr<Controller>> controllers;
  std::vector<std::unique_ptr<Waker>> wakers;
  for (int i = 0; i < count; ++i) {
    Result<std::unique_ptr<StateStore>> store = open_store(options.store_url);
    if (!store) return store.error();
    Result<std::unique_ptr<Controller>> c = Controller::open(
        config, **store, agents, wall_clock_now(), "controller-" + std::to_string(i));
    if (!c) return c.error();
    stores.push_back(std::move(*store));
    controllers.push_back(std::move(*c));
    wakers.push_back(std::make_unique<Waker>());
  }
  // The stream's own reads (what became of a cancelled job) go through a connection of their own:
  // a real client never reads the store, so they are no controller's round trips.
  Result<std::unique_ptr<StateStore>> observer = open_store(options.store_url);
  if (!observer) return observer.error();
  const Caller daemon{static_cast<int>(getuid()), static_cast<int>(getgid())};
  v1::RegisterRequest hello;
  hello.set_address("fake:1");
  for (NodeId n = 0; n < machine->node_count(); ++n) hello.add_nodes("n" + std::to_string(n));
  if (Result<v1::RegisterReply> r = controllers[0]->register_agent(hello, daemon, wall_clock_now());
      !r)
    return r.error();

  // Concurrent allocation: the stream starts once every controller has checked in and seen the
  // others (each places in its share of the machine, cut from the controllers checked in), so
  // that the figures are the steady state's, as with no handovers.
  if (options.allocation == AllocationMode::kConcurrent && count > 1)
    std::this_thread::sleep_for(std::chrono::duration<double>(Controller::kCheckInEvery * 1.2));

  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::mutex error_mutex;
  std::string first_error;
  auto note_error = [&](const std::string& what) {
    ++errors;
    std::lock_guard lock(error_mutex);
    if (first_error.empty()) first_error = what;
  };
  // Each controller's scheduler thread, as trellisd's: it wakes on the store's change feed
  // (PostgreSQL) or its own calls (SQLite), or when a quarter of the lease has passed, then
  // ticks, and passes when one is due.
  std::vector<std::thread> daemons;
  for (int i = 0; i < count; ++i) {
    daemons.emplace_back([&, i] {
      Result<std::unique_ptr<ChangeFeed>> feed = open_change_feed(options.store_url);
      if (!feed) return note_error("change feed: " + feed.error().message);
      const double patience = options.scheduler_lease / 4;
      while (!stop) {
        if (*feed) {
          if (Result<bool> woke = (*feed)->wait(patience); !woke)
            return note_error("change feed: " + woke.error().message);
        } else {
          wakers[i]->wait(patience);
        }
        Seconds now = wall_clock_now();
        if (Status ok = controllers[i]->tick(now); !ok) note_error("tick: " + ok.error().message);
        if (controllers[i]->pass_due(now)) {
          Result<std::vector<JobId>> started = controllers[i]->run_pass(now);
          // A pass that lost a race (its lease, or a job cancelled meanwhile) commits nothing
          // and is run again: that is the scheme, not an error.
          if (!started && started.error().code != Error::Code::kDoesNotFitNow)
            note_error("pass: " + started.error().message);
        }
      }
    });
  }

  // The clients: at least four threads, client i calling controller i mod count, so that their
  // round trips overlap as real clients' do and one controller is as loaded as four. Each
  // cancels about cancel_fraction of its jobs at a random controller.
  StreamResult result;
  std::mutex client_mutex;
  std::set<JobId> acknowledged;
  std::atomic<int64_t> cancels{0}, submitted{0}, cancelled_pending{0};
  auto round_trips = [&] {
    int64_t n = 0;
    for (const auto& store : stores) n += store->round_trips();
    return n;
  };
  auto operations = [&] {
    std::map<std::string, StateStore::OperationCounts> sum;
    for (const auto& store : stores)
      for (const auto& [op, c] : store->operation_counts()) {
        StateStore::OperationCounts& s = sum[op];
        s.calls += c.calls;
        s.round_trips += c.round_trips;
        s.statements += c.statements;
      }
    return sum;
  };
  const int64_t round_trips_before = round_trips();
  const std::map<std::string, StateStore::OperationCounts> operations_before = operations();
  const double cpu_before = process_cpu_seconds();
  const double database_before = options.database_cpu ? options.database_cpu() : 0;
  auto started_at = Clock::now();
  std::vector<std::thread> clients;
  const int client_threads = options.clients > 0 ? options.clients : std::max(4, count);
  for (int client = 0; client < client_threads; ++client) {
    clients.emplace_back([&, client, i = client % count] {
      std::mt19937 random(1000 + client);
      std::uniform_real_distribution<double> coin(0, 1);
      std::vector<JobId> recent;
      while (static_cast<int64_t>(agents.launches()) < options.decisions && errors == 0) {
        // Jobs in the system: acknowledged, less those whose processes have ended and those
        // cancelled while pending (the clients' own count: the store is not read for it).
        if (submitted - agents.jobs_done - cancelled_pending >= options.backlog) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        v1::JobSpec spec;
        spec.set_nodes(std::uniform_int_distribution<int>(1, 4)(random));
        spec.set_time_limit(60);
        spec.add_argv("true");
        spec.set_cwd("/tmp");
        Result<JobId> id = controllers[i]->submit(spec, daemon, wall_clock_now());
        if (!id) return note_error("submit: " + id.error().message);
        wakers[i]->poke();
        ++submitted;
        {
          std::lock_guard lock(client_mutex);
          acknowledged.insert(*id);
        }
        recent.push_back(*id);
        if (recent.size() > 200) recent.erase(recent.begin(), recent.begin() + 100);
        if (coin(random) < options.cancel_fraction) {
          JobId victim =
              recent[std::uniform_int_distribution<size_t>(0, recent.size() - 1)(random)];
          int at = std::uniform_int_distribution<int>(0, count - 1)(random);
          Result<std::vector<JobId>> done =
              controllers[at]->cancel({victim}, 0, daemon, wall_clock_now());
          if (!done) return note_error("cancel: " + done.error().message);
          wakers[at]->poke();
          if (done->empty()) continue;  // it had ended
          ++cancels;
          Result<StoredJob> after = (*observer)->job(victim);
          if (!after) return note_error("reading a cancelled job: " + after.error().message);
          if (after->state == JobState::kCancelled && after->attempt == 0) ++cancelled_pending;
        }
      }
    });
  }

  // The agents' reports, each task's to a random controller (a job's nodes may report to
  // different ones), and the forced handovers of the scheduler role.
  std::mt19937 random(count);
  auto deliver_exits = [&] {
    std::vector<FakeAgents::Task> ended = agents.take_ended(wall_clock_now());
    std::map<int, v1::ExitRequest> reports;
    for (const FakeAgents::Task& t : ended) {
      v1::TaskStatus* status =
          reports[std::uniform_int_distribution<int>(0, count - 1)(random)].add_tasks();
      status->set_job_id(t.job);
      status->set_attempt(t.attempt);
      status->set_node(t.node);
      status->set_signal(t.signal);
    }
    for (auto& [i, report] : reports) {
      if (Status ok = controllers[i]->report_exits(report, daemon, wall_clock_now()); !ok)
        note_error("report: " + ok.error().message);
      wakers[i]->poke();
    }
  };
  auto last_handover = started_at, last_progress = started_at;
  while (static_cast<int64_t>(agents.launches()) < options.decisions && errors == 0) {
    deliver_exits();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto now = Clock::now();
    if (options.handover_every > 0 &&
        now - last_handover > std::chrono::duration<double>(options.handover_every)) {
      for (auto& c : controllers)
        if (c->is_scheduler()) c->resign();
      ++result.handovers;
      last_handover = now;
    }
    if (options.progress && now - last_progress > std::chrono::seconds(10)) {
      options.progress(static_cast<int64_t>(agents.launches()));
      last_progress = now;
    }
  }
  for (std::thread& t : clients) t.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - started_at).count();
  result.window_starts = static_cast<int64_t>(agents.launches());
  result.round_trips = round_trips() - round_trips_before;
  result.operations = operations();
  for (auto& [op, c] : result.operations)
    if (auto before = operations_before.find(op); before != operations_before.end()) {
      c.calls -= before->second.calls;
      c.round_trips -= before->second.round_trips;
      c.statements -= before->second.statements;
    }
  result.process_cpu = process_cpu_seconds() - cpu_before;
  if (options.database_cpu) result.database_cpu = options.database_cpu() - database_before;

  // Every job is let finish: no more submissions; the rest run or were cancelled, and end.
  auto deadline = Clock::now() + std::chrono::seconds(120);
  std::string unfinished;
  while (errors == 0) {
    deliver_exits();
    JobQuery active;
    active.only_active = true;
    Result<std::vector<StoredJob>> left = stores[0]->list_jobs(active);
    if (!left) {
      note_error("listing jobs: " + left.error().message);
      break;
    }
    if (left->empty() && agents.idle()) break;
    if (Clock::now() > deadline) {
      unfinished = std::to_string(left->size()) + " jobs still active two minutes after the stream";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  for (std::thread& t : daemons) t.join();
  if (errors > 0) return fail(Error::Code::kInternal, first_error);
  if (!unfinished.empty()) return fail(Error::Code::kInternal, unfinished);

  result.jobs = static_cast<int64_t>(acknowledged.size());
  result.cancels = cancels;
  result.repeated_launches = agents.repeated_launches;
  for (const auto& c : controllers) result.conflicts += c->conflicts();
  Result<EventLogAudit> audit = audit_event_log(*stores[0]);
  if (!audit) return audit.error();
  result.events = audit->events;
  result.starts = audit->starts;
  result.double_allocations = audit->double_allocations + agents.node_given_twice;
  result.bad_transitions = audit->bad_transitions;
  result.log_gaps = audit->log_gaps;
  result.problems = audit->problems;
  result.started_twice = audit->started_twice + agents.started_twice;
  // No job lost: every acknowledged job is in the store and final; none is there unacknowledged.
  Result<std::vector<StoredJob>> all = stores[0]->list_jobs({});
  if (!all) return all.error();
  std::set<JobId> seen;
  for (const StoredJob& job : *all) {
    seen.insert(job.id);
    if (!acknowledged.count(job.id) || !is_final(job.state)) {
      ++result.lost;
      problem(result, "job " + std::to_string(job.id) + " is " +
                          std::string(state_name(job.state)) +
                          (acknowledged.count(job.id) ? "" : ", never acknowledged"));
    }
    // Both times are controllers' clocks; a pass's instant is taken before it reads the queue,
    // so a job submitted meanwhile can start "before" its submission by a few milliseconds.
    if (job.attempt > 0)
      result.start_latency.push_back(std::max(0.0, job.start_time - job.submit_time));
  }
  result.overtakes = count_overtakes(*all, machine->node_count());
  for (JobId id : acknowledged)
    if (!seen.count(id)) {
      ++result.lost;
      problem(result, "job " + std::to_string(id) + " was acknowledged and is gone");
    }
  return result;
}

}  // namespace trellis::bench
