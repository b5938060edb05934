// RoundRobinQueue: the run queue of one DQT node and its place in the round robin (thesis
// section 7.1.2). Both DQT engines (the message-passing Dqt and DirectDqt) keep one per tree node,
// so the rules for jobs arriving and leaving in the middle of a lap exist once.
//
//   - The pointer persists across laps: it names the job that runs next.
//   - `ran` counts the own jobs that have had their turn in the current lap; they are the `ran`
//     jobs just before the pointer in round-robin order.
//   - A selected job takes its step only when the next turn arrives (end_turn), so a selection
//     cancelled in the same slot leaves the pointer where it was (Fig. 7.2, slot 9: node 6 resumes
//     at Q6(1)).
#pragma once

#include <cstddef>
#include <vector>

#include "core/job.h"

namespace trellis::gang {

class RoundRobinQueue {
 public:
  const std::vector<JobId>& jobs() const { return jobs_; }
  bool empty() const { return jobs_.empty(); }
  int size() const { return static_cast<int>(jobs_.size()); }

  // Whether some own job has not had its turn in this lap.
  bool turns_left() const { return ran_ < size(); }
  // Whether the job under the pointer was selected to run in the current slot, and which it is.
  bool selected() const { return selected_; }
  JobId current() const { return jobs_[next_]; }

  // Adds `job` last in round-robin order (just before the pointer). If the node's own turns in
  // this lap are over (`lap_over`), the job counts as having had its turn: it first runs in the
  // next lap, and the children, who hold the turn now, are not interrupted.
  void add(JobId job, bool lap_over);
  // Removes `job` (it must be queued), keeping the pointer on the job that runs next and `ran`
  // counting only jobs still queued.
  void remove(JobId job);

  void select() { selected_ = true; }
  void cancel() { selected_ = false; }
  // The slot is over: the job selected for it has had its turn.
  void end_turn() {
    if (!selected_) return;
    selected_ = false;
    next_ = (next_ + 1) % jobs_.size();
    ++ran_;
  }
  void new_lap() { ran_ = 0; }

 private:
  std::vector<JobId> jobs_;
  std::size_t next_ = 0;
  int ran_ = 0;
  bool selected_ = false;
};

}  // namespace trellis::gang
