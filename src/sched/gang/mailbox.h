// Mailbox: the FIFO through which DQT nodes talk. In the simulator one mailbox carries every
// message in order of sending; a distributed deployment replaces it with per-node channels. The
// protocol relies only on messages between one pair of nodes arriving in sending order.
// An `info` message carries its sender's SubtreeSummary; the summaries wait in their own FIFO so
// that the other messages stay small.
#pragma once

#include <cstdint>
#include <deque>

#include "sched/gang/message.h"
#include "sched/gang/subtree_summary.h"

namespace trellis::gang {

class Mailbox {
 public:
  void post(const Message& message) {
    queue_.push_back(message);
    ++posted_;
  }
  void post_info(const Message& message, const SubtreeSummary& summary) {
    post(message);
    summaries_.push_back(summary);
  }
  bool empty() const { return queue_.empty(); }
  // The oldest message. For an `info` message its summary is then in last_summary().
  Message take() {
    Message m = queue_.front();
    queue_.pop_front();
    if (m.kind == MessageKind::kInfo) {
      last_summary_ = summaries_.front();
      summaries_.pop_front();
    }
    return m;
  }
  const SubtreeSummary& last_summary() const { return last_summary_; }
  // Messages posted since construction (a cost measure of the protocol).
  uint64_t posted() const { return posted_; }

 private:
  std::deque<Message> queue_;
  std::deque<SubtreeSummary> summaries_;
  SubtreeSummary last_summary_;
  uint64_t posted_ = 0;
};

}  // namespace trellis::gang
