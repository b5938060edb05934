// The one simulation loop: a virtual clock that drives a SchedulingCore (sched/core.h) through a
// workload. Batch runs (sim/simulator.h: BatchCore, jobs that run for their recorded time) and
// time-shared runs (sim/gang/gang_simulator.h: GangCore, jobs that advance only in the slots
// they are switched in) are two instances of it; they differ only in their JobModel.
//
// At each instant the loop (1) lets the model report what happened to the started jobs (ends,
// and for a time-sharing core jobs found idle or busy again), (2) submits the jobs that arrive,
// (3) runs one pass if anything changed or a wake-up the core asked for is due, and (4) shows the
// pass to the model. The instants are the arrivals, the model's job ends and the core's
// wake-ups (a reservation's start, the end of a slot).
//
// A JobModel is any type with these members (Core is BatchCore or GangCore):
//   bool arrivals_wait_for_wakeup() const;  // hold arrivals until a pending wake-up (slots)
//   Seconds next_end() const;               // the next time a started job ends; kNever if none
//   bool advance_to(Seconds now, Core&);    // report what happened up to `now`; true if anything
//   bool stuck() const;                     // nothing left can ever progress: stop now
//   void admitted(const Job&, Seconds now);  // the core took an arrival
//   void rejected(const Job&, const Error&);  // ... or refused it
//   void after_pass(const PassResult&, Core&, std::optional<Seconds> wake, bool arrivals_left);
//                                           // wake: the core's next_wakeup() after the pass
// A template rather than virtual calls: the loop runs millions of times per simulation.
#pragma once

#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>

#include "sched/core.h"

namespace trellis {

inline constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();

template <typename Core>
struct EventLoopOptions {
  // Makes a fresh core: the first, and the one a restart restores into.
  std::function<std::unique_ptr<Core>()> make_core;
  // Called after each pass with its decisions and the core as they left it.
  std::function<void(const PassResult&, const Core&)> on_pass;
  // After this many passes, carry on with a fresh core restored from the old one's snapshot, as
  // a restarted controller does (-1: never). The schedule must not change: tests check it.
  long restart_after_pass = -1;
  // Stop at this time: the model is advanced to it and nothing later is processed.
  Seconds stop_at = kNever;
  // Measure each pass's wall time (EventLoopStats); off for runs of millions of tiny passes.
  bool time_passes = true;
};

struct EventLoopStats {
  Seconds end = 0;  // the last instant processed
  long passes = 0;
  double pass_seconds = 0;  // wall time in passes
  double max_pass_seconds = 0;
};

// Runs `arrivals` (sorted by submit time) to the end. Throws std::logic_error if a core cannot
// restore its own snapshot (a bug).
template <typename Core, typename Model>
EventLoopStats run_event_loop(std::span<const Job* const> arrivals, Model& model,
                              const EventLoopOptions<Core>& options) {
  using Clock = std::chrono::steady_clock;
  EventLoopStats stats;
  std::unique_ptr<Core> core = options.make_core();
  std::optional<Seconds> wake;
  size_t next_arrival = 0;
  PassResult kept;  // a restart's decisions, which outlive the core that made them
  for (;;) {
    Seconds now = model.next_end();
    if (wake) now = std::min(now, *wake);
    if (next_arrival < arrivals.size() && !(wake && model.arrivals_wait_for_wakeup()))
      now = std::min(now, arrivals[next_arrival]->submit);
    if (now == kNever) break;
    if (now >= options.stop_at) {
      model.advance_to(options.stop_at, *core);
      stats.end = options.stop_at;
      break;
    }
    stats.end = now;

    bool changed = wake && now == *wake;
    if (model.advance_to(now, *core)) changed = true;
    if (next_arrival == arrivals.size() && model.stuck()) break;
    while (next_arrival < arrivals.size() && arrivals[next_arrival]->submit <= now) {
      const Job& job = *arrivals[next_arrival++];
      if (auto ok = core->submit(job, now); !ok) {
        model.rejected(job, ok.error());
      } else {
        model.admitted(job, now);
        changed = true;
      }
    }
    if (!changed) continue;  // only jobs that can never run arrived: nothing to decide

    const PassResult* decided;
    if (options.time_passes) {
      auto pass_start = Clock::now();
      decided = &core->pass(now);
      double pass_time = std::chrono::duration<double>(Clock::now() - pass_start).count();
      stats.pass_seconds += pass_time;
      stats.max_pass_seconds = std::max(stats.max_pass_seconds, pass_time);
    } else {
      decided = &core->pass(now);
    }
    ++stats.passes;
    if (options.on_pass) options.on_pass(*decided, *core);
    if (stats.passes == options.restart_after_pass) {
      kept = *decided;
      decided = &kept;
      std::unique_ptr<Core> restarted = options.make_core();
      if (auto ok = restarted->restore(core->snapshot()); !ok)
        throw std::logic_error("restoring the core's own snapshot failed: " + ok.error().message);
      core = std::move(restarted);
    }
    wake = core->next_wakeup();
    model.after_pass(*decided, *core, wake, next_arrival < arrivals.size());
    wake = core->next_wakeup();  // the model may have run the slot for longer (repeat_slot)
  }
  return stats;
}

}  // namespace trellis
