// Mailbox: the FIFO through which DQT nodes talk. In the simulator one mailbox carries every
// message in order of sending; a distributed deployment replaces it with per-node channels. The
// protocol relies only on messages between one pair of nodes arriving in sending order.
#pragma once

#include <cstdint>
#include <deque>

#include "sched/gang/message.h"

namespace trellis::gang {

class Mailbox {
 public:
  void post(const Message& message) {
    queue_.push_back(message);
    ++posted_;
  }
  bool empty() const { return queue_.empty(); }
  Message take() {
    Message m = queue_.front();
    queue_.pop_front();
    return m;
  }
  // Messages posted since construction (a cost measure of the protocol).
  uint64_t posted() const { return posted_; }

 private:
  std::deque<Message> queue_;
  uint64_t posted_ = 0;
};

}  // namespace trellis::gang
