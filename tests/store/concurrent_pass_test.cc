// Passes of several controllers that commit at once (seed 003's concurrent allocators): a pass
// that finds a node it takes already held, or its job started by another pass, leaves that start
// out (partial passes) or is refused whole (the lease mode's passes), and the start can be tried
// again on other nodes. Node assignment is serialised per node only: a pass that takes other
// nodes is not held up by a transaction that holds a node.
#include <gtest/gtest.h>

#include <future>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

PassCommit partial_pass(std::vector<JobStart> starts) {
  PassCommit pass = pass_of(std::move(starts));
  pass.partial = true;
  return pass;
}

int count_starts(const std::vector<StoredEvent>& events) {
  int n = 0;
  for (const StoredEvent& e : events) n += e.kind == "start";
  return n;
}

TEST_P(StoreTest, APartialPassLeavesOutOnlyTheStartsThatConflictAndTheyCanBeTriedAgain) {
  JobId a = add(simple_job("a", 2));
  JobId b = add(simple_job("b", 2));
  JobId c = add(simple_job("c", 1));
  JobId d = add(simple_job("d", 1));
  // Another controller's pass committed first: a holds nodes 0 and 1.
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {0, 1})}), 10));

  // This controller decided on a snapshot from before that commit.
  Result<PassOutcome> done = store_->apply_pass(
      partial_pass({start_of(b, {1, 2}), start_of(c, {3}), start_of(d, {3}), start_of(a, {4, 5})}),
      11);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->refused, (std::vector<JobId>{b, d, a}));
  ASSERT_EQ(done->reasons.size(), 3u);
  EXPECT_TRUE(has(done->reasons[0], "node 1 (n1) is held exclusively by job " + std::to_string(a)))
      << done->reasons[0];
  EXPECT_TRUE(has(done->reasons[1], "node 3 (n3) is held exclusively by job " + std::to_string(c)))
      << done->reasons[1];
  EXPECT_TRUE(has(done->reasons[2], "RUNNING")) << done->reasons[2];
  // Only c started; the others are as they were, and hold nothing.
  EXPECT_EQ(get(c).state, JobState::kRunning);
  EXPECT_EQ(get(b).state, JobState::kPending);
  EXPECT_EQ(get(d).state, JobState::kPending);
  EXPECT_EQ(get(a).nodes, (std::vector<NodeId>{0, 1}));
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_EQ(nodes[1].jobs, std::vector<JobId>{a});
  EXPECT_TRUE(nodes[2].jobs.empty());
  EXPECT_EQ(nodes[3].jobs, std::vector<JobId>{c});
  EXPECT_EQ(count_starts(all_events()), 2);

  // Tried again on nodes that are free, they start.
  done = store_->apply_pass(partial_pass({start_of(b, {4, 5}), start_of(d, {6})}), 12);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(done->refused.empty());
  EXPECT_EQ(get(b).nodes, (std::vector<NodeId>{4, 5}));
  EXPECT_EQ(get(d).state, JobState::kRunning);
  EXPECT_EQ(count_starts(all_events()), 4);

  // The same conflict in an all-or-nothing pass refuses the whole pass.
  JobId e = add(simple_job("e", 1));
  JobId f = add(simple_job("f", 1));
  Error whole = error_of(store_->commit_pass(pass_of({start_of(e, {7}), start_of(f, {6})}), 13));
  EXPECT_EQ(whole.code, Error::Code::kDoesNotFitNow);
  EXPECT_EQ(get(e).state, JobState::kPending);
  EXPECT_TRUE(value_of(store_->list_nodes())[7].jobs.empty());
}

// Two controllers' transactions at once on one PostgreSQL store: one holds node 3 (it has locked
// its row and written an allocation, and not committed yet). A pass that takes other nodes
// commits meanwhile; a pass that takes node 3 waits for that transaction, then sees the node
// held and leaves its start out, which is then made on another node.
TEST_F(PostgresStoreTest, APlantedConflictingCommitIsRefusedAndRetriedAndOtherNodesDoNotWait) {
  JobId x = add(simple_job("x", 1));
  JobId y = add(simple_job("y", 1));
  JobId z = add(simple_job("z", 1));
  std::unique_ptr<sql::Session> other = value_of(raw_session());
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->begin(true));
  ASSERT_TRUE(other->query("SELECT id FROM nodes WHERE id = 3 FOR UPDATE"));
  ASSERT_TRUE(
      other->query("INSERT INTO allocations (job_id, node_id, exclusive) VALUES (?, 3, 1)", {x}));
  ASSERT_TRUE(
      other->query("UPDATE jobs SET state = 'R', attempt = 1, nodes = '3' WHERE id = ?", {x}));

  // Other nodes: committed while that transaction is open (it would hang here if it waited).
  Result<PassOutcome> beside = store_->apply_pass(partial_pass({start_of(z, {5})}), 20);
  ASSERT_TRUE(beside) << beside.error().message;
  EXPECT_TRUE(beside->refused.empty());
  EXPECT_EQ(get(z).state, JobState::kRunning);

  // Node 3, from a second controller's connection: it waits for the first to commit.
  std::unique_ptr<StateStore> second = value_of(open_another(false));
  ASSERT_TRUE(second);
  std::future<Result<PassOutcome>> contended = std::async(
      std::launch::async, [&] { return second->apply_pass(partial_pass({start_of(y, {3})}), 21); });
  ASSERT_TRUE(other->commit());
  Result<PassOutcome> refused = contended.get();
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_EQ(refused->refused, std::vector<JobId>{y});
  EXPECT_EQ(get(y).state, JobState::kPending);
  EXPECT_EQ(value_of(store_->list_nodes())[3].jobs, std::vector<JobId>{x});

  // Retried on a free node, it starts.
  Result<PassOutcome> retried = second->apply_pass(partial_pass({start_of(y, {4})}), 22);
  ASSERT_TRUE(retried) << retried.error().message;
  EXPECT_TRUE(retried->refused.empty());
  EXPECT_EQ(get(y).nodes, std::vector<NodeId>{4});
}

}  // namespace
}  // namespace trellis::store_test
