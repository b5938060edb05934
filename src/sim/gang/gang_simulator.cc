#include "sim/gang/gang_simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>

#include "alloc/locality_metrics.h"
#include "alloc/metrics.h"
#include "core/job_table.h"
#include "sched/gang_core.h"
#include "sim/event_loop.h"

namespace trellis::gangsim {

namespace {

// A job's progress while it is in the system.
struct Progress {
  const SimJob* job = nullptr;
  std::size_t outcome = 0;  // index into the result's jobs
  long done = 0;            // compute units done
  std::size_t step = 0;     // current interaction
  long step_done = 0;
  long input_at = -1;  // >= 0: waiting for user input until this time
  bool suspended = false;
  bool finished = false;
  bool started = false;  // has run in some slot (its outcome records where)

  bool stopped() const { return job->deadlock_after >= 0 && done >= job->deadlock_after; }
  // A batch job that never deadlocks and waits for nothing: every unit it runs computes, so a
  // slot's units can be counted at once (run_slot).
  bool plain() const {
    return job->interactions.empty() && job->deadlock_after < 0 && input_at < 0 && !finished;
  }
  bool waiting_input(long now) const { return input_at >= 0 && input_at > now; }

  // One time unit [now, now + 1) on the processors. Returns whether it computed.
  bool run_unit(long now) {
    if (input_at >= 0) {
      if (now < input_at) return false;  // still waiting for the user
      input_at = -1;
    }
    if (stopped()) return false;
    ++done;
    if (job->interactions.empty()) {
      finished = done >= job->work;
      return true;
    }
    const Interaction& current = job->interactions[step];
    if (++step_done < current.compute) return true;
    if (step + 1 == job->interactions.size()) {
      finished = true;
      return true;
    }
    ++step;
    step_done = 0;
    if (current.think > 0) input_at = now + 1 + current.think;
    return true;
  }
};

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) return 0;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

// A time-shared run reported in seconds, as a batch run is (simulate_time_shared).
struct SecondsView {
  const Machine* machine = nullptr;
  double quantum = 1;
  bool record_placements = true;
  std::span<const Job* const> source;  // the job in seconds of each SimJob, by index
};

// The spans `outcome` was switched in, in seconds within [start, end); empty when it ran from start
// to end without a break. Spans past the simulator's record cap become one interval up to `end`.
std::vector<std::pair<Seconds, Seconds>> running_intervals(const JobOutcome& outcome, Seconds start,
                                                           Seconds end, double quantum) {
  std::vector<std::pair<Seconds, Seconds>> intervals;
  for (auto [from, to] : outcome.active_spans) {
    Seconds a = std::max(start, static_cast<double>(from) * quantum);
    Seconds b = std::min(end, static_cast<double>(to) * quantum);
    if (b > a) intervals.emplace_back(a, b);
  }
  if (!outcome.spans_complete) {
    Seconds tail = intervals.empty() ? start : intervals.back().second;
    if (end > tail) intervals.emplace_back(tail, end);
  }
  if (intervals.size() == 1 && intervals[0].first == start && intervals[0].second == end)
    intervals.clear();
  return intervals;
}

// The job model of time-shared runs (see sim/event_loop.h): each pass of the GangCore starts a
// slot; the jobs in it run unit by unit (Progress::run_unit) and at the slot's end, the next
// instant of the loop, finished jobs leave, and with idle detection jobs waiting for input are
// skipped and deadlocked ones removed, as at the thesis's switch.
class SlottedJobs {
 public:
  SlottedJobs(std::span<const SimJob> jobs, std::span<const Job> arrivals,
              const GangSimConfig& config, const std::string& policy, int processors,
              const SecondsView* seconds)
      : jobs_(jobs), arrivals_(arrivals), config_(config), seconds_(seconds) {
    result_.policy = policy;
    result_.processors = processors;
    drain_ = config.end_time < 0 || config.drain;
    const long end = drain_ ? -1 : config.end_time;
    const long last = jobs.empty() ? 0 : jobs.back().submit;
    sample_every_ = std::max(
        1L, (drain_ ? (jobs.empty() ? 1 : last + 1) : end) / std::max(1L, config.load_samples));
  }

  bool arrivals_wait_for_wakeup() const { return true; }
  Seconds next_end() const { return kNever; }
  bool stuck() const {
    // Running until the jobs finish: stop when what is left can never progress (deadlocked jobs
    // nobody removes).
    if (!drain_ || slot_open_ || any_progress_ || !waiting_input_.empty()) return false;
    return in_system_.all_of(
        [&](JobId, const Progress& p) { return p.stopped() && !p.waiting_input(now_); });
  }
  void rejected(const Job& job, const Error& why) {
    ++arrivals_seen_;
    if (!error_)
      error_ =
          fail(why.code, "job " + std::to_string(job.id) + " (" +
                             std::to_string(job.request.nodes) + " processors): " + why.message);
  }
  void admitted(const Job& job, Seconds /*now*/) {
    ++arrivals_seen_;
    const std::size_t index = static_cast<std::size_t>(&job - arrivals_.data());
    const SimJob& sim = jobs_[index];
    JobOutcome outcome;
    outcome.id = sim.id;
    outcome.size = sim.size;
    outcome.submit = sim.submit;
    outcome.work = sim.work;
    result_.jobs.push_back(outcome);
    source_.push_back(index);
    Progress p;
    p.job = &sim;
    p.outcome = result_.jobs.size() - 1;
    in_system_.emplace(sim.id, p);
  }

  // The end of the slot that ran: jobs leave, or are skipped or removed; due input arrives.
  bool advance_to(Seconds at, GangCore& core) {
    now_ = static_cast<long>(at);
    if (!slot_open_) return false;
    slot_open_ = false;
    // Most slots end with nothing to report: that test is inline, the switch out of line.
    if (!finished_.empty() || config_.idle_detection || !waiting_input_.empty()) end_slot(at, core);
    return true;
  }

  // The switch at the end of the slot that ran (advance_to).
  [[gnu::noinline]] void end_slot(Seconds at, GangCore& core) {
    for (const auto& [id, when] : finished_) {
      Progress& p = in_system_.at(id);
      JobOutcome& o = result_.jobs[p.outcome];
      o.end = when;
      o.done = p.done;
      o.fate = JobFate::kFinished;
      o.retr = static_cast<double>(when - o.submit) / static_cast<double>(o.work);
      ended(core, id, when);
      in_system_.erase(id);
    }
    if (config_.idle_detection) {
      // By index, reading slot() again after each call to the core (see GangCore::slot()).
      for (std::size_t i = 0; i < core.slot().size(); ++i) {
        const JobId job = core.slot()[i].job;
        Progress* found = in_system_.find(job);
        if (found == nullptr) continue;
        Progress& p = *found;
        if (p.waiting_input(now_)) {
          if (core.idle(job, at)) {
            p.suspended = true;
            waiting_input_.emplace(p.input_at, job);
            ++result_.idle_skips;
          }
        } else if (p.stopped()) {
          JobOutcome& o = result_.jobs[p.outcome];
          o.end = now_;
          o.done = p.done;
          o.fate = JobFate::kDeadlocked;
          if (auto ok = core.cancel(job, at); !ok) throw std::logic_error(ok.error().message);
          in_system_.erase(job);
        }
      }
    }
    while (!waiting_input_.empty() && waiting_input_.top().first <= now_) {
      JobId id = waiting_input_.top().second;
      waiting_input_.pop();
      in_system_.at(id).suspended = false;
      (void)core.busy(id, at);
    }
  }

  // A pass is a switch: the slot it decided runs now.
  void after_pass(const PassResult& pass, GangCore& core, std::optional<Seconds> next_switch,
                  bool arrivals_left) {
    const long now = static_cast<long>(pass.now);
    now_ = now;
    if (config_.progress && now - last_progress_ >= 100000) {
      config_.progress(now, drain_ ? -1 : config_.end_time);
      last_progress_ = now;
    }
    if (core.jobs_in_system() == 0) {
      // Nothing to run until the next arrival.
      if (arrivals_left && config_.record_activity && !result_.activity.empty() &&
          result_.activity.back().jobs_in_system != 0)
        result_.activity.push_back(ActivitySample{now, 0, 0, 0});
      return;
    }
    if (seconds_ != nullptr)
      for (const CoreDecision& d : pass.decisions)
        if (d.kind == CoreDecision::Kind::kStart) record_start(d);

    const std::vector<gang::SlotJob>* running = &core.slot();
    long wake = static_cast<long>(*next_switch);
    long slots = 1;  // slots of this pass: more when the policy repeats its slot until an event
    if (core.repeats_slots() && !running->empty()) {
      slots = slots_until_event(*running, now, wake - now);
      if (slots > 1) {
        core.repeat_slot(slots - 1);
        running = &core.slot();
        wake = static_cast<long>(*core.next_wakeup());
      }
    }
    const long slot_end = drain_ ? wake : std::min(wake, config_.end_time);
    if (static_cast<int>(result_.trace.size()) < config_.trace_slots) {
      // Schedulers name a slot's jobs in any order; the trace reads left to right.
      SlotRecord record{now, *running};
      std::sort(record.running.begin(), record.running.end(),
                [](const gang::SlotJob& a, const gang::SlotJob& b) { return a.first < b.first; });
      result_.trace.push_back(std::move(record));
    }
    record_load(recorded_until_, now, gang::LoadIndex{});  // the time nothing was in the system
    record_load(now, slot_end, core.load());
    result_.slots += slots;
    if (config_.record_activity) {
      ActivitySample a{now, 0, static_cast<int>(running->size()), core.jobs_in_system()};
      for (const gang::SlotJob& r : *running) a.active_processors += r.size;
      const ActivitySample* last = result_.activity.empty() ? nullptr : &result_.activity.back();
      if (!last || last->active_processors != a.active_processors ||
          last->running_jobs != a.running_jobs || last->jobs_in_system != a.jobs_in_system)
        result_.activity.push_back(a);
    }
    run_slot(*running, now, slot_end);
  }

  // How many slots of `slice` units, from `now`, the slot just decided can run before anything
  // could change it: until the first of its jobs finishes, the next arrival is due, the run ends
  // or the progress report is due. 1 when a job's progress is not plain computing (interactive or
  // deadlocking jobs, idle detection) or the slot trace is still being recorded.
  long slots_until_event(const std::vector<gang::SlotJob>& running, long now, long slice) const {
    if (slice < 1 || config_.idle_detection || !waiting_input_.empty() ||
        static_cast<int>(result_.trace.size()) < config_.trace_slots)
      return 1;
    long slots = std::max(1L, 100000 / slice);  // the progress report's period
    for (const gang::SlotJob& r : running) {
      const Progress* p = in_system_.find(r.job);
      if (!p || !p->plain()) return 1;
      const long left = p->job->work - p->done;  // it finishes in slot ceil(left / slice)
      if (left < 1) return 1;
      slots = std::min(slots, (left + slice - 1) / slice);
    }
    if (arrivals_seen_ < arrivals_.size()) {  // taken at the first slot end at or after it
      const long due = static_cast<long>(std::ceil(arrivals_[arrivals_seen_].submit));
      slots = std::min(slots, std::max(1L, (due - now + slice - 1) / slice));
    }
    if (!drain_)
      slots = std::min(slots, std::max(1L, (config_.end_time - now + slice - 1) / slice));
    return slots;
  }

  // The measures, once the loop has stopped at `end`.
  GangSimResult finish(long end) {
    if (!drain_) {
      record_load(recorded_until_, config_.end_time, gang::LoadIndex{});
      end = config_.end_time;
    }
    in_system_.for_each([&](JobId, const Progress& p) { result_.jobs[p.outcome].done = p.done; });
    result_.duration = end;
    const double processors = result_.processors;
    if (end > 0) {
      double demand = 0;
      for (const SimJob& j : jobs_)
        if (j.submit < end) demand += static_cast<double>(j.size) * static_cast<double>(j.work);
      result_.offered_load = demand / (processors * static_cast<double>(end));
      result_.utilization =
          static_cast<double>(active_units_) / (processors * static_cast<double>(end));
      result_.useful_utilization =
          static_cast<double>(useful_units_) / (processors * static_cast<double>(end));
      result_.mean_max_tqlb = static_cast<double>(max_tqlb_units_) / static_cast<double>(end);
      result_.mean_min_tqlb = static_cast<double>(min_tqlb_units_) / static_cast<double>(end);
    }
    std::vector<double> log_size, retr;
    for (const JobOutcome& o : result_.jobs) {
      if (o.fate != JobFate::kFinished) continue;
      log_size.push_back(std::log2(static_cast<double>(o.size)));
      retr.push_back(o.retr);
    }
    if (!retr.empty()) {
      double sum = 0;
      for (double r : retr) sum += r;
      result_.mean_retr = sum / static_cast<double>(retr.size());
    }
    result_.retr_size_correlation = pearson(log_size, retr);
    return std::move(result_);
  }

  // The run in seconds (simulate_time_shared): the records of the jobs that ran and ended, in
  // order of start (submit order among equals), and the timeline.
  SimResult seconds_result(const GangSimResult& gang) {
    SimResult out;
    out.machine_nodes = seconds_->machine->node_count();
    out.passes = gang.slots;
    const double q = seconds_->quantum;
    std::vector<JobRecord> done;
    for (std::size_t i = 0; i < gang.jobs.size(); ++i) {
      const JobOutcome& o = gang.jobs[i];
      if (o.start < 0 || o.end < 0) continue;
      JobRecord& r = records_.at(o.id);
      r.start = std::max(r.submit, static_cast<double>(o.start) * q);
      r.end = std::max(r.start, static_cast<double>(o.end) * q);
      r.set_running_intervals(running_intervals(o, r.start, r.end, q));
      done.push_back(std::move(r));
    }
    std::stable_sort(done.begin(), done.end(),
                     [](const JobRecord& a, const JobRecord& b) { return a.start < b.start; });
    out.jobs = std::move(done);
    for (const ActivitySample& a : gang.activity)
      out.timeline.push_back(TimelineSample{static_cast<double>(a.time) * q, a.active_processors,
                                            a.jobs_in_system - a.running_jobs, false, -1});
    return out;
  }

  const std::optional<Error>& error() const { return error_; }

 private:
  void ended(GangCore& core, JobId id, long when) {
    if (auto ok = core.ended(id, static_cast<double>(when)); !ok)
      throw std::logic_error(ok.error().message);
  }

  // A job's first slot, in seconds: its nodes and locality, as a batch run records them.
  void record_start(const CoreDecision& d) {
    const Job& job = *seconds_->source[source_[in_system_.at(d.job).outcome]];
    JobRecord r;
    r.id = job.id;
    r.submit = job.submit;
    r.run_time = job.run_time;
    r.time_limit = job.time_limit;
    r.nodes = d.nodes.count();
    r.requested_nodes = job.request.asked_nodes();
    r.user = job.user;
    r.timed_out = job.time_limit > 0 && job.run_time > job.time_limit;  // its work stops there
    if (seconds_->record_placements) {
      r.runs = d.nodes.runs();
      r.average_hops = average_pairwise_hops(*seconds_->machine, d.nodes);
      if (const FatTree* tree = seconds_->machine->fat_tree())
        r.leaf_switches = leaf_switches_spanned(*tree, d.nodes);
    }
    records_.emplace(job.id, std::move(r));
  }

  // Called for every slot: the samples, due about load_samples times a run, are out of line.
  void record_load(long from, long to, gang::LoadIndex load) {
    if (to <= from) return;
    max_tqlb_units_ += static_cast<int64_t>(load.max) * (to - from);
    min_tqlb_units_ += static_cast<int64_t>(load.min) * (to - from);
    result_.max_tqlb = std::max(result_.max_tqlb, load.max);
    if (next_sample_ < to) sample_load(from, to, load);
    recorded_until_ = to;
  }
  [[gnu::noinline]] void sample_load(long from, long to, gang::LoadIndex load) {
    for (; next_sample_ < to; next_sample_ += sample_every_)
      if (next_sample_ >= from) result_.load_series.push_back(LoadSample{next_sample_, load});
  }

  // Runs the slot [now, slot_end): each job in it computes unit by unit.
  void run_slot(const std::vector<gang::SlotJob>& running, long now, long slot_end) {
    finished_.clear();
    any_progress_ = false;
    slot_open_ = true;
    for (const gang::SlotJob& r : running) {
      Progress& p = in_system_.at(r.job);
      if (!p.started) {
        p.started = true;
        JobOutcome& placed = result_.jobs[p.outcome];
        placed.start = now;
        placed.first = r.first;
        placed.partition = r.size;
      }
      long active_until = now;
      if (p.plain()) {
        // Computing and nothing else: the units of the slot in one step (a slot of a space-
        // sharing policy may last from one event to the next).
        const long units = std::min(slot_end - now, p.job->work - p.done);
        if (units > 0) {
          p.done += units;
          p.finished = p.done >= p.job->work;
          active_until = now + units;
          active_units_ += static_cast<int64_t>(r.size) * units;
          useful_units_ += static_cast<int64_t>(r.size) * units;
          any_progress_ = true;
          if (p.finished) finished_.emplace_back(r.job, active_until);
        }
      } else {
        for (long t = now; t < slot_end && !p.finished; ++t) {
          active_units_ += r.size;
          active_until = t + 1;
          if (p.run_unit(t)) {
            useful_units_ += r.size;
            any_progress_ = true;
          }
          if (p.finished) finished_.emplace_back(r.job, t + 1);
        }
      }
      if (config_.record_activity && active_until > now) {
        JobOutcome& o = result_.jobs[p.outcome];
        if (!o.active_spans.empty() && o.active_spans.back().second == now) {
          o.active_spans.back().second = active_until;  // ran in the slot before too
        } else if (o.spans_complete && recorded_spans_ < config_.max_active_spans) {
          o.active_spans.emplace_back(now, active_until);
          ++recorded_spans_;
        } else {
          o.spans_complete = false;
        }
      }
    }
  }

  std::span<const SimJob> jobs_;
  std::span<const Job> arrivals_;
  const GangSimConfig& config_;
  const SecondsView* seconds_;
  GangSimResult result_;
  std::vector<std::size_t> source_;  // outcome index -> SimJob index
  std::unordered_map<JobId, JobRecord> records_;
  JobTable<Progress> in_system_;  // looked up for every job of every slot
  using Wake = std::pair<long, JobId>;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> waiting_input_;  // by input time
  std::vector<std::pair<JobId, long>> finished_;  // in the open slot, and when
  bool drain_ = true;
  bool slot_open_ = false;
  bool any_progress_ = false;
  long now_ = 0;
  long sample_every_ = 1;
  long next_sample_ = 0;
  long recorded_until_ = 0;
  long last_progress_ = 0;
  // Processor-units and load-units, summed as integers (exact, and an integer add is cheaper on
  // a path run for every job of every slot).
  int64_t active_units_ = 0, useful_units_ = 0, max_tqlb_units_ = 0, min_tqlb_units_ = 0;
  std::size_t recorded_spans_ = 0;
  std::size_t arrivals_seen_ = 0;  // admitted or rejected: arrivals_[arrivals_seen_] is next
  std::optional<Error> error_;
};

Status check_config(std::span<const SimJob> jobs, const GangSimConfig& config) {
  if (config.slice < 1) return fail("gang simulation: slice must be at least 1 time unit");
  if (config.end_time == 0 || config.end_time < -1)
    return fail("gang simulation: end time must be positive (or -1 to run until the jobs finish)");
  for (std::size_t i = 1; i < jobs.size(); ++i)
    if (jobs[i].submit < jobs[i - 1].submit)
      return fail("gang simulation: jobs must be in submit order (job " +
                  std::to_string(jobs[i].id) + ")");
  return Ok{};
}

// The time-shared mode of the event loop over `jobs` (in submit order, already checked).
Result<GangSimResult> run_slotted(std::span<const SimJob> all_jobs,
                                  const std::function<std::unique_ptr<gang::GangScheduler>()>& make,
                                  gang::GangScheduler& first, const Curve& order,
                                  const GangSimConfig& config, const SecondsView* seconds,
                                  SimResult* seconds_out) {
  // The jobs that enter the system: all of them, or when draining after an end time, those
  // submitted before it.
  std::span<const SimJob> jobs = all_jobs;
  if (config.drain && config.end_time > 0)
    jobs = jobs.first(static_cast<std::size_t>(
        std::partition_point(all_jobs.begin(), all_jobs.end(),
                             [&](const SimJob& j) { return j.submit < config.end_time; }) -
        all_jobs.begin()));
  std::vector<Job> arrivals(jobs.size());
  std::vector<const Job*> pointers(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    arrivals[i].id = jobs[i].id;
    arrivals[i].submit = static_cast<double>(jobs[i].submit);
    arrivals[i].request.nodes = jobs[i].size;
    arrivals[i].run_time = arrivals[i].time_limit = static_cast<double>(jobs[i].work);
    pointers[i] = &arrivals[i];
  }
  // The model runs the jobs of core.slot(); it needs only the first starts (their nodes).
  GangCoreOptions core_options{static_cast<double>(config.slice), 1, false};
  std::vector<std::unique_ptr<gang::GangScheduler>> restarted;  // policies of restarted cores
  EventLoopOptions<GangCore> loop;
  bool first_made = false;
  loop.make_core = [&]() {
    gang::GangScheduler* policy = &first;
    if (first_made) {
      restarted.push_back(make());
      policy = restarted.back().get();
    }
    first_made = true;
    return std::make_unique<GangCore>(*policy, order, core_options);
  };
  if (config.restart_after_pass >= 0 && make) loop.restart_after_pass = config.restart_after_pass;
  if (!(config.end_time < 0 || config.drain)) loop.stop_at = static_cast<double>(config.end_time);
  loop.time_passes = false;  // a pass per slot: the gang results have no pass timings

  SlottedJobs model(jobs, arrivals, config, first.name(), first.processors(), seconds);
  EventLoopStats stats = run_event_loop<GangCore>(pointers, model, loop);
  if (model.error()) return *model.error();
  GangSimResult result = model.finish(static_cast<long>(stats.end));
  result.passes = stats.passes;
  if (seconds_out != nullptr) *seconds_out = model.seconds_result(result);
  return result;
}

}  // namespace

int GangSimResult::finished() const {
  return static_cast<int>(std::count_if(
      jobs.begin(), jobs.end(), [](const JobOutcome& j) { return j.fate == JobFate::kFinished; }));
}

int GangSimResult::deadlocked() const {
  return static_cast<int>(std::count_if(jobs.begin(), jobs.end(), [](const JobOutcome& j) {
    return j.fate == JobFate::kDeadlocked;
  }));
}

Result<GangSimResult> simulate_gang(const std::vector<SimJob>& jobs, gang::GangScheduler& scheduler,
                                    const GangSimConfig& config) {
  if (auto ok = check_config(jobs, config); !ok) return ok.error();
  return run_slotted(jobs, {}, scheduler, Curve::identity(scheduler.processors()), config, nullptr,
                     nullptr);
}

Result<GangSimResult> simulate_gang(const std::vector<SimJob>& jobs,
                                    const GangPolicyFactory& make_policy,
                                    const GangSimConfig& config) {
  if (auto ok = check_config(jobs, config); !ok) return ok.error();
  std::unique_ptr<gang::GangScheduler> first = make_policy();
  return run_slotted(jobs, make_policy, *first, Curve::identity(first->processors()), config,
                     nullptr, nullptr);
}

Result<TimeSharedRun> simulate_time_shared(const Machine& machine, gang::GangScheduler& scheduler,
                                           const Curve& order, const std::vector<Job>& jobs,
                                           double quantum, const GangSimConfig& config,
                                           bool record_placements) {
  if (!(quantum > 0)) return fail("the gang quantum must be positive");
  const int processors = machine.node_count();
  TimeSharedRun out;
  std::vector<SimJob> sim_jobs;
  std::vector<const Job*> source;
  for (const Job& j : jobs) {
    double ran = j.time_limit > 0 ? std::min(j.run_time, j.time_limit) : j.run_time;
    if (j.request.nodes < 1 || j.request.nodes > processors) {
      out.run.rejected.push_back(rejected_job(j, "needs " + std::to_string(j.request.nodes) +
                                                     " nodes, the machine has " +
                                                     std::to_string(processors)));
      continue;
    }
    if (!(ran > 0)) {
      out.run.rejected.push_back(rejected_job(j, "no run time"));
      continue;
    }
    SimJob s;
    s.id = j.id;
    s.submit = static_cast<long>(std::ceil(j.submit / quantum));
    s.size = j.request.nodes;
    s.work = std::max(1L, static_cast<long>(std::ceil(ran / quantum)));
    sim_jobs.push_back(s);
    source.push_back(&j);
  }
  // Arrival order: by slot, workload order among equals.
  std::vector<std::size_t> by_submit(sim_jobs.size());
  for (std::size_t i = 0; i < by_submit.size(); ++i) by_submit[i] = i;
  std::stable_sort(by_submit.begin(), by_submit.end(), [&](std::size_t a, std::size_t b) {
    return sim_jobs[a].submit < sim_jobs[b].submit;
  });
  std::vector<SimJob> sorted;
  std::vector<const Job*> sorted_source;
  for (std::size_t i : by_submit) {
    sorted.push_back(sim_jobs[i]);
    sorted_source.push_back(source[i]);
  }
  if (auto ok = check_config(sorted, config); !ok) return ok.error();
  SecondsView view{&machine, quantum, record_placements, sorted_source};
  std::vector<RejectedJob> rejected = std::move(out.run.rejected);
  auto gang = run_slotted(sorted, {}, scheduler, order, config, &view, &out.run);
  if (!gang) return gang.error();
  out.gang = std::move(*gang);
  out.run.rejected = std::move(rejected);
  return out;
}

}  // namespace trellis::gangsim
