// GroupCommit: callers that arrive together share one flush, each gets its own item's result, and
// a gathering wait holds a busy group's leader for company but never a lone caller.
//
// The gathering waits here are an hour long: a leader that waited for one when it should not
// (or was not woken when its batch filled) hangs the test until ctest's timeout fails it.
#include "daemon/group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon_test_support.h"

namespace trellis {
namespace {

using std::chrono::hours;

using testing::eventually;

// A flush that records each batch and answers each item with its double. The batch holding
// `blocker` waits until `release` is set.
struct RecordingFlush {
  std::mutex mutex;
  std::vector<std::vector<int>> batches;
  std::atomic<bool> release{true};
  std::atomic<bool> blocked{false};  // the blocker's batch is being flushed
  int blocker = -1;

  std::vector<Result<int>> operator()(std::vector<int>& batch) {
    for (int item : batch)
      if (item == blocker) {
        blocked = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    std::lock_guard lock(mutex);
    batches.push_back(batch);
    std::vector<Result<int>> results;
    for (int item : batch) results.emplace_back(item * 2);
    return results;
  }
  std::vector<size_t> sizes() {
    std::lock_guard lock(mutex);
    std::vector<size_t> out;
    for (const auto& b : batches) out.push_back(b.size());
    return out;
  }
};

TEST(GroupCommitTest, CallersThatArriveDuringAFlushShareTheNextAndEachGetsItsOwnResult) {
  RecordingFlush flush;
  flush.blocker = 1;
  flush.release = false;
  GroupCommit<int, int> group([&](std::vector<int>& batch) { return flush(batch); });
  std::thread first([&] { EXPECT_EQ(*group.run(1), 2); });
  ASSERT_TRUE(eventually([&] { return flush.blocked.load(); }));
  std::vector<std::thread> others;
  for (int item = 2; item <= 4; ++item)
    others.emplace_back([&, item] { EXPECT_EQ(*group.run(item), item * 2); });
  ASSERT_TRUE(eventually([&] { return group.queued() == 3; }));
  flush.release = true;
  first.join();
  for (std::thread& t : others) t.join();
  EXPECT_EQ(flush.sizes(), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(group.counts(), (std::pair<int64_t, int64_t>{2, 4}));
}

TEST(GroupCommitTest, ALoneCallerIsNeverHeldByTheGatheringWait) {
  RecordingFlush flush;
  GroupCommit<int, int> group([&](std::vector<int>& batch) { return flush(batch); });
  group.set_gather_wait(hours(1));
  for (int item = 1; item <= 3; ++item) EXPECT_EQ(*group.run(item), item * 2);
  EXPECT_EQ(flush.sizes(), (std::vector<size_t>{1, 1, 1}));
}

TEST(GroupCommitTest, ABusyGroupsLeaderGathersUntilItsBatchIsFull) {
  RecordingFlush flush;
  flush.blocker = 1;
  flush.release = false;
  GroupCommit<int, int> group([&](std::vector<int>& batch) { return flush(batch); }, /*most=*/3);
  group.set_gather_wait(hours(1));
  // A batch with company: 2 and 3 queue while 1 is flushed, and are flushed together (the batch
  // before theirs was alone, so their leader does not wait).
  std::thread first([&] { EXPECT_EQ(*group.run(1), 2); });
  ASSERT_TRUE(eventually([&] { return flush.blocked.load(); }));
  std::thread second([&] { EXPECT_EQ(*group.run(2), 4); });
  std::thread third([&] { EXPECT_EQ(*group.run(3), 6); });
  ASSERT_TRUE(eventually([&] { return group.queued() == 2; }));
  flush.release = true;
  for (std::thread* t : {&first, &second, &third}) t->join();
  ASSERT_EQ(flush.sizes(), (std::vector<size_t>{1, 2}));
  // The group is busy now: whoever leads next waits for company until the batch holds `most`,
  // instead of flushing alone.
  std::vector<std::thread> late;
  for (int item = 4; item <= 6; ++item) {
    late.emplace_back([&, item] { EXPECT_EQ(*group.run(item), item * 2); });
    // One at a time, so that the first to arrive leads; the third fills the batch.
    if (item < 6) {
      ASSERT_TRUE(eventually([&] { return group.queued() == static_cast<size_t>(item - 3); }));
    }
  }
  for (std::thread& t : late) t.join();
  EXPECT_EQ(flush.sizes(), (std::vector<size_t>{1, 2, 3}));
}

}  // namespace
}  // namespace trellis
