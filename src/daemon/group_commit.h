// GroupCommit: callers that arrive together share one transaction. Each caller hands in its item
// and waits; one of them at a time (the leader) takes every item queued so far, runs `flush` on
// the batch, and hands each caller the result for its own item. While a leader flushes, new
// arrivals queue for the next batch, so under load a batch holds whatever came during one commit:
// a store round trip is paid per batch, not per call (how the controller service groups
// submissions and exit reports).
//
//   GroupCommit<StoredJob, JobId> submissions([&](std::vector<StoredJob>& jobs) {
//     return commit_all(jobs);  // one Result<JobId> per job, in order
//   });
//   Result<JobId> id = submissions.run(job);  // from any thread
//
// `flush` runs on the leader's thread, never on two threads at once, and must return exactly one
// result per item.
//
// A gathering wait (set_gather_wait) makes a leader wait up to that long for more items before it
// flushes, but only while the group is busy: when the batch before had company (two items or
// more), and only until the batch holds as many items as that one did. Under load that trades a
// little latency for fewer, larger transactions, as PostgreSQL's commit_delay (with
// commit_siblings) does; a lone caller never waits, nor do callers that all arrived already
// (a few clients each waiting for its answer before it sends the next: waiting the whole time
// for company that cannot come held each of their calls that long).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/result.h"

namespace trellis {

template <typename In, typename Out>
class GroupCommit {
 public:
  using Flush = std::function<std::vector<Result<Out>>(std::vector<In>& batch)>;

  // `most` bounds a batch (the rest waits for the next one).
  explicit GroupCommit(Flush flush, size_t most = 512) : flush_(std::move(flush)), most_(most) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // How long a leader waits for company while the group is busy (0, the default: never).
  void set_gather_wait(std::chrono::microseconds wait) {
    std::lock_guard lock(mutex_);
    gather_wait_ = wait;
  }

  Result<Out> run(In item) {
    Slot slot{std::move(item), std::nullopt};
    std::unique_lock lock(mutex_);
    queue_.push_back(&slot);
    if (gathering_ && queue_.size() >= gather_target()) arrived_.notify_one();
    while (!slot.result) {
      if (leading_) {
        done_.wait(lock);
        continue;
      }
      leading_ = true;
      if (gather_wait_.count() > 0 && last_batch_ >= 2 && queue_.size() < gather_target()) {
        gathering_ = true;
        arrived_.wait_for(lock, gather_wait_, [&] { return queue_.size() >= gather_target(); });
        gathering_ = false;
      }
      size_t n = std::min(queue_.size(), most_);
      std::vector<Slot*> batch(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
      lock.unlock();
      std::vector<In> items;
      items.reserve(batch.size());
      for (Slot* s : batch) items.push_back(std::move(s->item));
      std::vector<Result<Out>> results = flush_(items);
      lock.lock();
      for (size_t i = 0; i < batch.size(); ++i)
        batch[i]->result = i < results.size()
                               ? std::move(results[i])
                               : Result<Out>(fail(Error::Code::kInternal,
                                                  "a group commit returned too few results"));
      leading_ = false;
      last_batch_ = batch.size();
      ++batches_;
      items_ += batch.size();
      done_.notify_all();
    }
    return std::move(*slot.result);
  }

  // Items waiting for a batch (a gathering leader's own included).
  size_t queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

  // Batches flushed and items in them so far (items / batches is the mean batch).
  std::pair<int64_t, int64_t> counts() const {
    std::lock_guard lock(mutex_);
    return {batches_, items_};
  }

 private:
  // A gathering leader flushes once the batch is as large as the one before (callers hold
  // mutex_).
  size_t gather_target() const { return std::min(most_, std::max<size_t>(last_batch_, 2)); }

  struct Slot {
    In item;
    std::optional<Result<Out>> result;
  };

  Flush flush_;
  size_t most_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::condition_variable arrived_;  // a gathering leader's: the batch is full
  std::vector<Slot*> queue_;
  bool leading_ = false;
  bool gathering_ = false;
  size_t last_batch_ = 0;
  std::chrono::microseconds gather_wait_{0};
  int64_t batches_ = 0, items_ = 0;
};

}  // namespace trellis
