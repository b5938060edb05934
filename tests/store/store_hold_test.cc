// Holds on both engines: a requeue after a node failure counts it, one that holds the job keeps it
// pending and held until release_job(), and each step is in the event log.
#include <gtest/gtest.h>

#include <algorithm>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

TEST_P(StoreTest, NodeFailureRequeuesAreCountedAndAHeldJobWaitsForItsRelease) {
  JobId a = add(simple_job("a"));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {3})}), 10));
  JobEnd failed = ending(a, 1, JobState::kPending, 0, 9, "node n3 failed");
  failed.node_failure = true;
  EXPECT_EQ(value_of(store_->end_job(failed, 20)), true);
  StoredJob once = get(a);
  EXPECT_EQ(once.node_failures, 1);
  EXPECT_EQ(once.hold, "");
  // Not held: releasing it changes nothing.
  EXPECT_EQ(value_of(store_->release_job(a, 21)), false);
  // The second failure holds it.
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {4}, 2)}), 30));
  failed.attempt = 2;
  failed.hold = "requeued 2 times after node failures";
  EXPECT_EQ(value_of(store_->end_job(failed, 40)), true);
  StoredJob held = get(a);
  EXPECT_EQ(held.state, JobState::kPending);
  EXPECT_EQ(held.node_failures, 2);
  EXPECT_EQ(held.hold, "requeued 2 times after node failures");
  EXPECT_EQ(held.reason, "node n3 failed");
  // Released: not held any more, and said so.
  EXPECT_EQ(value_of(store_->release_job(a, 50)), true);
  StoredJob released = get(a);
  EXPECT_EQ(released.hold, "");
  EXPECT_EQ(released.reason, "released");
  EXPECT_EQ(released.node_failures, 2);
  EXPECT_EQ(value_of(store_->release_job(a, 51)), false);
  EXPECT_EQ(error_of(store_->release_job(a + 100, 52)).code, Error::Code::kNotFound);
  // Only a requeue counts failures or holds.
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {4}, 3)}), 60));
  JobEnd wrong = ending(a, 3, JobState::kCompleted);
  wrong.node_failure = true;
  EXPECT_EQ(error_of(store_->end_job(wrong, 70)).code, Error::Code::kInvalidArgument);
  std::vector<std::string> kinds = event_kinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "release"), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "requeue"), 2);
}

}  // namespace
}  // namespace trellis::store_test
