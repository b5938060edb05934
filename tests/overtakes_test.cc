// bench/overtakes.h: a start counts as an overtake only when an earlier job was waiting and asked
// for no more nodes than were free; checked against hand-made histories on a 4-node machine.
#include "bench/overtakes.h"

#include <gtest/gtest.h>

namespace trellis::bench {
namespace {

StoredJob job(JobId id, int nodes, Seconds submit, Seconds start, Seconds end,
              std::vector<NodeId> held) {
  StoredJob j;
  j.id = id;
  j.request.nodes = nodes;
  j.submit_time = submit;
  j.start_time = start;
  j.end_time = end;
  j.attempt = start > 0 || !held.empty() ? 1 : 0;
  j.nodes = std::move(held);
  return j;
}

TEST(Overtakes, OnlyALaterStartWhileAnEarlierFittingJobWaitsCounts) {
  // 1 runs on 3 nodes from 1 to 10. 2 (4 nodes, waiting from 2) cannot fit before 10; 3 (1 node,
  // from 3) starts at 4 on the free node: it passes 2, which did not fit: no overtake.
  std::vector<StoredJob> jobs = {job(1, 3, 1, 1, 10, {0, 1, 2}), job(2, 4, 2, 10, 20, {0, 1, 2, 3}),
                                 job(3, 1, 3, 4, 5, {3})};
  EXPECT_EQ(count_overtakes(jobs, 4), 0);
  // 4 (1 node, from 5) waits; 5 (1 node, from 6) starts at 7 on the node 3 left at 5: 4 fitted.
  jobs.push_back(job(4, 1, 5, 8, 9, {3}));
  jobs.push_back(job(5, 1, 6, 7, 8, {3}));
  EXPECT_EQ(count_overtakes(jobs, 4), 1);
  // Starts at one instant are taken in id order: two jobs of one pass do not overtake each other.
  std::vector<StoredJob> one_pass = {job(1, 1, 0, 5, 6, {0}), job(2, 1, 1, 5, 6, {1})};
  EXPECT_EQ(count_overtakes(one_pass, 4), 0);
  // A job that started "before" it was submitted (a pass's instant) is not left waiting.
  std::vector<StoredJob> early = {job(1, 1, 5.001, 5, 6, {0}), job(2, 1, 7, 8, 9, {0})};
  EXPECT_EQ(count_overtakes(early, 4), 0);
  // A job cancelled while it waited stops waiting at its end.
  std::vector<StoredJob> cancelled = {job(1, 1, 0, 0, 2, {}), job(2, 1, 3, 4, 5, {0})};
  EXPECT_EQ(count_overtakes(cancelled, 4), 0);
}

}  // namespace
}  // namespace trellis::bench
