#include "web/event_history.h"

#include <algorithm>
#include <charconv>

namespace trellis::web {
namespace {

// "attempt 2 on 8 nodes: 0,1,..." (the store's start event) -> 8; 0 when unreadable.
int nodes_of_start(const std::string& detail) {
  size_t on = detail.find(" on ");
  if (on == std::string::npos) return 0;
  int nodes = 0;
  const char* first = detail.data() + on + 4;
  std::from_chars(first, detail.data() + detail.size(), nodes);
  return std::max(nodes, 0);
}

int attempt_of_start(const std::string& detail) {
  int attempt = 0;
  if (detail.rfind("attempt ", 0) == 0) {
    std::from_chars(detail.data() + 8, detail.data() + detail.size(), attempt);
  }
  return attempt;
}

// The state a "cancel" or "state" event leads to ("RUNNING -> COMPLETING: why" -> "COMPLETING").
std::string target_state(const std::string& detail) {
  size_t arrow = detail.find(" -> ");
  if (arrow == std::string::npos) return "";
  size_t start = arrow + 4;
  size_t end = detail.find(':', start);
  return detail.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool names_final_state(const std::string& state) {
  Result<JobState> parsed = parse_job_state(state);
  return parsed && is_final(*parsed);
}

}  // namespace

Status EventHistory::catch_up(StateStore& store) {
  constexpr int kPage = 5000;
  for (;;) {
    Result<std::vector<StoredEvent>> page = store.events(last_seq_, kPage);
    if (!page) return page.error();
    for (const StoredEvent& event : *page) {
      apply(event);
      last_seq_ = event.seq;
    }
    if (static_cast<int>(page->size()) < kPage) return Ok{};
  }
}

void EventHistory::change(Seconds time, int busy_delta, int queued_delta) {
  HistorySample next = steps_.empty() ? HistorySample{} : steps_.back();
  next.time = time;
  next.busy_nodes += busy_delta;
  next.queued_jobs += queued_delta;
  // Several changes at one instant are one step.
  if (!steps_.empty() && steps_.back().time == time) {
    steps_.back() = next;
  } else {
    steps_.push_back(next);
  }
}

void EventHistory::apply(const StoredEvent& event) {
  if (event.job == 0) return;  // node and scheduler events change no job
  JobTrack& job = jobs_[event.job];
  job.events.push_back(event);

  // Leaves the running phase: frees the nodes and closes the run.
  auto stop_running = [&] {
    change(event.time, -job.nodes, 0);
    runs_[job.open_run].end = event.time;
    job.nodes = 0;
  };

  if (event.kind == "submit") {
    job.phase = Phase::kPending;
    change(event.time, 0, +1);
  } else if (event.kind == "start") {
    if (job.phase == Phase::kRunning) stop_running();  // a start without an end: a lost record
    if (job.phase == Phase::kPending) change(event.time, 0, -1);
    job.phase = Phase::kRunning;
    job.nodes = nodes_of_start(event.detail);
    job.open_run = runs_.size();
    runs_.push_back(JobRun{event.job, attempt_of_start(event.detail), job.nodes, event.time, 0});
    change(event.time, job.nodes, 0);
  } else if (event.kind == "requeue") {
    if (job.phase == Phase::kRunning) stop_running();
    if (job.phase != Phase::kPending) change(event.time, 0, +1);
    job.phase = Phase::kPending;
  } else if (event.kind == "end" || ((event.kind == "cancel" || event.kind == "state") &&
                                     names_final_state(target_state(event.detail)))) {
    if (job.phase == Phase::kRunning) stop_running();
    if (job.phase == Phase::kPending) change(event.time, 0, -1);
    job.phase = Phase::kDone;
  }
}

std::vector<HistorySample> EventHistory::samples(Seconds since, Seconds until, int points) const {
  points = std::max(points, 2);
  std::vector<HistorySample> out;
  out.reserve(static_cast<size_t>(points));
  size_t next = 0;
  HistorySample state;
  for (int i = 0; i < points; ++i) {
    Seconds t = since + (until - since) * i / (points - 1);
    while (next < steps_.size() && steps_[next].time <= t) state = steps_[next++];
    out.push_back(HistorySample{t, state.busy_nodes, state.queued_jobs});
  }
  return out;
}

std::vector<JobRun> EventHistory::runs_since(Seconds since) const {
  std::vector<JobRun> out;
  for (const JobRun& run : runs_) {
    if (run.end == 0 || run.end >= since) out.push_back(run);
  }
  return out;
}

std::vector<StoredEvent> EventHistory::job_events(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? std::vector<StoredEvent>{} : it->second.events;
}

}  // namespace trellis::web
