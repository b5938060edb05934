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

// Runs items `from`..`to` on threads, one arriving after the other (each once the ones before
// it are queued), so that the first to arrive leads.
std::vector<std::thread> arrive_one_by_one(GroupCommit<int, int>& group, int from, int to) {
  std::vector<std::thread> threads;
  for (int item = from; item <= to; ++item) {
    threads.emplace_back([&group, item] { EXPECT_EQ(*group.run(item), item * 2); });
    if (item < to)
      EXPECT_TRUE(
          eventually([&] { return group.queued() == static_cast<size_t>(item - from + 1); }));
  }
  return threads;
}

TEST(GroupCommitTest, ABusyGroupsLeaderGathersUntilItsBatchIsAsLargeAsTheLastOne) {
  RecordingFlush flush;
  flush.blocker = 1;
  flush.release = false;
  GroupCommit<int, int> group([&](std::vector<int>& batch) { return flush(batch); }, /*most=*/8);
  group.set_gather_wait(hours(1));
  // A batch with company: 2, 3 and 4 queue while 1 is flushed, and are flushed together (the
  // batch before theirs was alone, so their leader does not wait).
  std::thread first([&] { EXPECT_EQ(*group.run(1), 2); });
  ASSERT_TRUE(eventually([&] { return flush.blocked.load(); }));
  std::vector<std::thread> queued;
  for (int item = 2; item <= 4; ++item)
    queued.emplace_back([&, item] { EXPECT_EQ(*group.run(item), item * 2); });
  ASSERT_TRUE(eventually([&] { return group.queued() == 3; }));
  flush.release = true;
  first.join();
  for (std::thread& t : queued) t.join();
  ASSERT_EQ(flush.sizes(), (std::vector<size_t>{1, 3}));
  // The group is busy now: whoever leads next waits for company (an hour here), but only until
  // the batch holds as many as the last one (3), not until it is full (8): callers that each wait
  // for their answer before the next call would otherwise wait the whole time, every time.
  for (std::thread& t : arrive_one_by_one(group, 5, 7)) t.join();
  ASSERT_EQ(flush.sizes(), (std::vector<size_t>{1, 3, 3}));
  for (std::thread& t : arrive_one_by_one(group, 8, 10)) t.join();
  EXPECT_EQ(flush.sizes(), (std::vector<size_t>{1, 3, 3, 3}));
}

TEST(GroupCommitTest, ABusyGroupsBatchNeverExceedsItsBound) {
  RecordingFlush flush;
  flush.blocker = 1;
  flush.release = false;
  GroupCommit<int, int> group([&](std::vector<int>& batch) { return flush(batch); }, /*most=*/2);
  group.set_gather_wait(hours(1));
  std::thread first([&] { EXPECT_EQ(*group.run(1), 2); });
  ASSERT_TRUE(eventually([&] { return flush.blocked.load(); }));
  std::vector<std::thread> queued;
  for (int item = 2; item <= 4; ++item)
    queued.emplace_back([&, item] { EXPECT_EQ(*group.run(item), item * 2); });
  ASSERT_TRUE(eventually([&] { return group.queued() == 3; }));
  flush.release = true;
  first.join();
  // Three queued behind a bound of two: a full batch, then the one left over, which waits for the
  // company a batch of two had until a fifth arrives.
  ASSERT_TRUE(eventually([&] { return flush.sizes().size() == 2 && group.queued() == 1; }));
  std::thread fifth([&] { EXPECT_EQ(*group.run(5), 10); });
  fifth.join();
  for (std::thread& t : queued) t.join();
  EXPECT_EQ(flush.sizes(), (std::vector<size_t>{1, 2, 2}));
}

}  // namespace
}  // namespace trellis
