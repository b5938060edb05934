// Mailbox: the FIFO through which DQT nodes talk. In the simulator one mailbox carries every
// message in order of sending; a distributed deployment replaces it with per-node channels. The
// protocol relies only on messages between one pair of nodes arriving in sending order.
// An `info` message carries its sender's SubtreeSummary; the summaries wait in their own FIFO so
// that the other messages stay small.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sched/gang/message.h"
#include "sched/gang/subtree_summary.h"

namespace trellis::gang {

class Mailbox {
 public:
  void post(const Message& message) {
    if (count_ == ring_.size()) grow();
    ring_[(head_ + count_) & (ring_.size() - 1)] = message;
    ++count_;
    ++posted_;
  }
  void post_info(const Message& message, const SubtreeSummary& summary) {
    post(message);
    summaries_.push_back(summary);
  }
  bool empty() const { return count_ == 0; }
  // The oldest message. For an `info` message its summary is then in last_summary().
  Message take() {
    Message m = ring_[head_];
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
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
  // Doubles the ring (a power of two, so positions wrap with a mask), oldest message first.
  void grow() {
    std::vector<Message> bigger(ring_.empty() ? 64 : 2 * ring_.size());
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) & (ring_.size() - 1)];
    ring_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<Message> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::deque<SubtreeSummary> summaries_;
  SubtreeSummary last_summary_;
  uint64_t posted_ = 0;
};

}  // namespace trellis::gang
