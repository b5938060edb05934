// EventHistory: the cluster's past, replayed from the store's append-only event log for the
// dashboard's history view (utilization, queue length, a Gantt chart of recent runs) and each
// job's state history. It reads the log incrementally: catch_up() fetches only the events added
// since the last call, so a dashboard that refreshes every few seconds does not reread the log.
//
//   EventHistory history;
//   history.catch_up(store);
//   std::vector<HistorySample> samples = history.samples(now - 3600, now, 120);
//
// Not thread-safe: the dashboard server guards it with a mutex.
#pragma once

#include <map>
#include <vector>

#include "store/state_store.h"

namespace trellis::web {

// The machine at one instant: nodes held by running jobs, and jobs waiting to start.
struct HistorySample {
  Seconds time = 0;
  int busy_nodes = 0;
  int queued_jobs = 0;
};

// One attempt of a job on its nodes (a requeued job has several).
struct JobRun {
  JobId job = 0;
  int attempt = 0;
  int nodes = 0;
  Seconds start = 0;
  Seconds end = 0;  // 0 while it runs
};

class EventHistory {
 public:
  // Reads the events appended since the last call (all of them the first time).
  Status catch_up(StateStore& store);

  // The state after every event up to `time` (the log's order), at `points` evenly spaced
  // instants from `since` to `until` inclusive (at least 2).
  std::vector<HistorySample> samples(Seconds since, Seconds until, int points) const;

  // The runs that overlap [since, now]: started before now and not ended before since.
  std::vector<JobRun> runs_since(Seconds since) const;

  // Every event of one job, oldest first (empty for a job the log does not name).
  std::vector<StoredEvent> job_events(JobId job) const;

  int64_t last_seq() const { return last_seq_; }
  // The time of the first job event read (0 when none): where "since the log began" starts.
  Seconds first_time() const { return steps_.empty() ? 0 : steps_.front().time; }

 private:
  enum class Phase { kPending, kRunning, kDone };
  struct JobTrack {
    Phase phase = Phase::kPending;
    int nodes = 0;        // held while running
    size_t open_run = 0;  // index in runs_ while running
    std::vector<StoredEvent> events;
  };

  void apply(const StoredEvent& event);
  void change(Seconds time, int busy_delta, int queued_delta);

  int64_t last_seq_ = 0;
  std::map<JobId, JobTrack> jobs_;
  std::vector<JobRun> runs_;
  // The state after each event that changed it, in log order.
  std::vector<HistorySample> steps_;
};

}  // namespace trellis::web
