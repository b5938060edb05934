#include "sim/gang/gang_simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <queue>
#include <unordered_map>

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

// The jobs in the system, looked up by id for every running job in every slot. Ids in a compact
// range (the usual 1..n) index a vector; any others go through a hash map.
class JobsInSystem {
 public:
  explicit JobsInSystem(const std::vector<SimJob>& jobs) {
    if (jobs.empty()) return;
    auto [low, high] = std::minmax_element(
        jobs.begin(), jobs.end(), [](const SimJob& a, const SimJob& b) { return a.id < b.id; });
    if (high->id - low->id < 4 * static_cast<JobId>(jobs.size()) + 1024) {
      lowest_ = low->id;
      dense_.resize(static_cast<std::size_t>(high->id - low->id) + 1);
    }
  }
  bool empty() const { return count_ == 0; }
  // `id` is not in the system (the scheduler has rejected a second submission of a live id).
  void add(JobId id, const Progress& progress) {
    ++count_;
    if (auto* slot = dense_slot(id)) {
      *slot = progress;
    } else {
      sparse_.emplace(id, progress);
    }
  }
  Progress* find(JobId id) {
    if (auto* slot = dense_slot(id)) return *slot ? &**slot : nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  Progress& at(JobId id) {
    Progress* p = find(id);
    assert(p != nullptr && "a scheduler named a job that is not in the system");
    return *p;
  }
  void erase(JobId id) {
    --count_;
    if (auto* slot = dense_slot(id)) {
      slot->reset();
    } else {
      sparse_.erase(id);
    }
  }
  // Whether `f` holds for every job in the system.
  template <typename F>
  bool all_of(F f) const {
    for (const auto& slot : dense_)
      if (slot && !f(*slot)) return false;
    for (const auto& entry : sparse_)
      if (!f(entry.second)) return false;
    return true;
  }
  template <typename F>
  void for_each(F f) const {
    all_of([&](const Progress& p) {
      f(p);
      return true;
    });
  }

 private:
  std::optional<Progress>* dense_slot(JobId id) {
    if (dense_.empty() || id < lowest_ || id - lowest_ >= static_cast<JobId>(dense_.size()))
      return nullptr;
    return &dense_[static_cast<std::size_t>(id - lowest_)];
  }

  JobId lowest_ = 0;
  std::vector<std::optional<Progress>> dense_;
  std::unordered_map<JobId, Progress> sparse_;
  std::size_t count_ = 0;
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
  if (config.slice < 1) return fail("gang simulation: slice must be at least 1 time unit");
  if (config.end_time == 0 || config.end_time < -1)
    return fail("gang simulation: end time must be positive (or -1 to run until the jobs finish)");
  for (std::size_t i = 1; i < jobs.size(); ++i)
    if (jobs[i].submit < jobs[i - 1].submit)
      return fail("gang simulation: jobs must be in submit order (job " +
                  std::to_string(jobs[i].id) + ")");

  GangSimResult result;
  result.policy = scheduler.name();
  result.processors = scheduler.processors();
  const double processors = scheduler.processors();
  const bool drain = config.end_time < 0 || config.drain;
  const long end = drain ? -1 : config.end_time;
  // The jobs that enter the system: all of them, or when draining after an end time, those
  // submitted before it.
  std::size_t admitted = jobs.size();
  if (config.drain && config.end_time > 0)
    admitted = static_cast<std::size_t>(
        std::partition_point(jobs.begin(), jobs.end(),
                             [&](const SimJob& j) { return j.submit < config.end_time; }) -
        jobs.begin());
  const long sample_every =
      std::max(1L, (drain ? (admitted == 0 ? 1 : jobs[admitted - 1].submit + 1) : end) /
                       std::max(1L, config.load_samples));

  JobsInSystem in_system(jobs);
  using Wake = std::pair<long, JobId>;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> suspended;  // by input time
  std::size_t next_arrival = 0;
  double active_units = 0, useful_units = 0, max_tqlb_units = 0, min_tqlb_units = 0;
  long next_sample = 0;
  long now = 0;
  long last_progress = 0;
  std::vector<std::pair<JobId, long>> finished;  // in the current slot, and when
  std::size_t recorded_spans = 0;

  auto record_load = [&](long from, long to, gang::LoadIndex load) {
    max_tqlb_units += static_cast<double>(load.max) * (to - from);
    min_tqlb_units += static_cast<double>(load.min) * (to - from);
    result.max_tqlb = std::max(result.max_tqlb, load.max);
    while (next_sample < to) {
      if (next_sample >= from) result.load_series.push_back(LoadSample{next_sample, load});
      next_sample += sample_every;
    }
  };

  for (;;) {
    if (!drain && now >= end) break;
    if (config.progress && now - last_progress >= 100000) {
      config.progress(now, end);
      last_progress = now;
    }
    // Nothing in the system: jump to the next arrival.
    if (in_system.empty()) {
      if (next_arrival == admitted) {
        if (!drain) record_load(now, end, gang::LoadIndex{});
        if (!drain) now = end;
        break;
      }
      long next = jobs[next_arrival].submit;
      if (!drain) next = std::min(next, end);
      if (next > now) {
        record_load(now, next, gang::LoadIndex{});
        if (config.record_activity && !result.activity.empty() &&
            result.activity.back().jobs_in_system != 0)
          result.activity.push_back(ActivitySample{now, 0, 0, 0});
        now = next;
        continue;
      }
    }
    while (next_arrival < admitted && jobs[next_arrival].submit <= now) {
      const SimJob& job = jobs[next_arrival++];
      if (auto ok = scheduler.submit(job.id, job.size); !ok) return ok.error();
      JobOutcome outcome;
      outcome.id = job.id;
      outcome.size = job.size;
      outcome.submit = job.submit;
      outcome.work = job.work;
      result.jobs.push_back(outcome);
      Progress p;
      p.job = &job;
      p.outcome = result.jobs.size() - 1;
      in_system.add(job.id, p);
    }

    const std::vector<gang::SlotJob>& running = scheduler.next_slot();
    // A scheduler with nothing to run does not wait for its timer: it starts the next slot as
    // soon as work is there (an arrival, or the input a suspended job waits for).
    const long length = running.empty() ? 1 : config.slice;
    const long slot_end = drain ? now + length : std::min(now + length, end);
    if (static_cast<int>(result.trace.size()) < config.trace_slots) {
      // Schedulers name a slot's jobs in any order; the trace reads left to right.
      SlotRecord record{now, running};
      std::sort(record.running.begin(), record.running.end(),
                [](const gang::SlotJob& a, const gang::SlotJob& b) { return a.first < b.first; });
      result.trace.push_back(std::move(record));
    }
    record_load(now, slot_end, scheduler.load());
    ++result.slots;
    if (config.record_activity) {
      ActivitySample a{now, 0, static_cast<int>(running.size()), scheduler.jobs_in_system()};
      for (const gang::SlotJob& r : running) a.active_processors += r.size;
      const ActivitySample* last = result.activity.empty() ? nullptr : &result.activity.back();
      if (!last || last->active_processors != a.active_processors ||
          last->running_jobs != a.running_jobs || last->jobs_in_system != a.jobs_in_system)
        result.activity.push_back(a);
    }

    finished.clear();
    bool any_progress = false;
    for (const gang::SlotJob& r : running) {
      Progress& p = in_system.at(r.job);
      if (!p.started) {
        p.started = true;
        JobOutcome& placed = result.jobs[p.outcome];
        placed.start = now;
        placed.first = r.first;
        placed.partition = r.size;
      }
      long active_until = now;
      for (long t = now; t < slot_end && !p.finished; ++t) {
        active_units += r.size;
        active_until = t + 1;
        if (p.run_unit(t)) {
          useful_units += r.size;
          any_progress = true;
        }
        if (p.finished) finished.emplace_back(r.job, t + 1);
      }
      if (config.record_activity && active_until > now) {
        JobOutcome& o = result.jobs[p.outcome];
        if (!o.active_spans.empty() && o.active_spans.back().second == now) {
          o.active_spans.back().second = active_until;  // ran in the slot before too
        } else if (o.spans_complete && recorded_spans < config.max_active_spans) {
          o.active_spans.emplace_back(now, active_until);
          ++recorded_spans;
        } else {
          o.spans_complete = false;
        }
      }
    }
    now = slot_end;

    // The switch at the end of the slot: finished jobs leave; with idle detection, the global
    // state of each job that ran decides whether it is skipped or removed.
    for (const auto& [id, at] : finished) {
      Progress& p = in_system.at(id);
      JobOutcome& o = result.jobs[p.outcome];
      o.end = at;
      o.done = p.done;
      o.fate = JobFate::kFinished;
      o.retr = static_cast<double>(at - o.submit) / static_cast<double>(o.work);
      scheduler.finish(id);
      in_system.erase(id);
    }
    if (config.idle_detection) {
      for (const gang::SlotJob& r : running) {
        Progress* found = in_system.find(r.job);
        if (found == nullptr) continue;
        Progress& p = *found;
        if (p.waiting_input(now)) {
          if (scheduler.suspend(r.job)) {
            p.suspended = true;
            suspended.emplace(p.input_at, r.job);
            ++result.idle_skips;
          }
        } else if (p.stopped()) {
          JobOutcome& o = result.jobs[p.outcome];
          o.end = now;
          o.done = p.done;
          o.fate = JobFate::kDeadlocked;
          scheduler.finish(r.job);
          in_system.erase(r.job);
        }
      }
    }
    while (!suspended.empty() && suspended.top().first <= now) {
      JobId id = suspended.top().second;
      suspended.pop();
      in_system.at(id).suspended = false;
      scheduler.resume(id);
    }
    // Running until the jobs finish: stop when what is left can never progress (deadlocked jobs
    // nobody removes).
    if (drain && next_arrival == admitted && !any_progress && suspended.empty()) {
      bool stuck =
          in_system.all_of([&](const Progress& p) { return p.stopped() && !p.waiting_input(now); });
      if (stuck) break;
    }
  }

  in_system.for_each([&](const Progress& p) { result.jobs[p.outcome].done = p.done; });
  result.duration = now;
  if (now > 0) {
    double demand = 0;
    for (std::size_t i = 0; i < admitted; ++i)
      if (const SimJob& j = jobs[i]; j.submit < now)
        demand += static_cast<double>(j.size) * static_cast<double>(j.work);
    result.offered_load = demand / (processors * static_cast<double>(now));
    result.utilization = active_units / (processors * static_cast<double>(now));
    result.useful_utilization = useful_units / (processors * static_cast<double>(now));
    result.mean_max_tqlb = max_tqlb_units / static_cast<double>(now);
    result.mean_min_tqlb = min_tqlb_units / static_cast<double>(now);
  }
  std::vector<double> log_size, retr;
  for (const JobOutcome& o : result.jobs) {
    if (o.fate != JobFate::kFinished) continue;
    log_size.push_back(std::log2(static_cast<double>(o.size)));
    retr.push_back(o.retr);
  }
  if (!retr.empty()) {
    double sum = 0;
    for (double r : retr) sum += r;
    result.mean_retr = sum / static_cast<double>(retr.size());
  }
  result.retr_size_correlation = pearson(log_size, retr);
  return result;
}

}  // namespace trellis::gangsim
