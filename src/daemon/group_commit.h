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
#pragma once

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

  Result<Out> run(In item) {
    Slot slot{std::move(item), std::nullopt};
    std::unique_lock lock(mutex_);
    queue_.push_back(&slot);
    while (!slot.result) {
      if (leading_) {
        done_.wait(lock);
        continue;
      }
      leading_ = true;
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
      ++batches_;
      items_ += batch.size();
      done_.notify_all();
    }
    return std::move(*slot.result);
  }

  // Batches flushed and items in them so far (items / batches is the mean batch).
  std::pair<int64_t, int64_t> counts() const {
    std::lock_guard lock(mutex_);
    return {batches_, items_};
  }

 private:
  struct Slot {
    In item;
    std::optional<Result<Out>> result;
  };

  Flush flush_;
  size_t most_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::vector<Slot*> queue_;
  bool leading_ = false;
  int64_t batches_ = 0, items_ = 0;
};

}  // namespace trellis
