// The QOS terms of the priority order (sched/priority_order.h): a job's QOS factor is its QOS's
// Priority over the highest, weighted by PriorityWeightQOS, and orders the queue even where no
// user has an account; UsageFactor scales what a job charges its user, 0 charging nothing.
#include <gtest/gtest.h>

#include "sched/priority_order.h"

namespace trellis {
namespace {

Job qos_job(JobId id, int qos, int association = -1) {
  Job job;
  job.id = id;
  job.submit = static_cast<Seconds>(id);
  job.request.nodes = 1;
  job.qos = qos;
  job.association = association;
  return job;
}

TEST(PriorityQos, TheQosFactorIsItsPriorityOverTheHighestAndOrdersTheQueue) {
  PriorityWeights weights{.age = 0, .fair_share = 0, .qos = 1000};
  PriorityOrder order(ShareTree(), 4, weights);
  order.set_qos({{0, 1}, {100, 1}, {50, 1}});  // normal, high, medium
  const Job normal = qos_job(1, 0), high = qos_job(2, 1), medium = qos_job(3, 2),
            none = qos_job(4, -1), unknown = qos_job(5, 17);
  EXPECT_DOUBLE_EQ(order.factors(high, 10).qos, 1.0);
  EXPECT_DOUBLE_EQ(order.factors(medium, 10).qos, 0.5);
  EXPECT_DOUBLE_EQ(order.factors(normal, 10).qos, 0.0);
  EXPECT_DOUBLE_EQ(order.factors(none, 10).qos, 0.0);
  EXPECT_DOUBLE_EQ(order.factors(unknown, 10).qos, 0.0);
  EXPECT_DOUBLE_EQ(order.priority(medium, 10), 500);
  std::vector<const Job*> queue = {&normal, &none, &medium, &high};
  order.order(queue, 10, 0);
  EXPECT_EQ(queue, (std::vector<const Job*>{&high, &medium, &normal, &none}));
  // Without the weight the queue stays in arrival order.
  PriorityOrder unweighted(ShareTree(), 4, PriorityWeights{.age = 0, .fair_share = 0});
  unweighted.set_qos({{0, 1}, {100, 1}, {50, 1}});
  queue = {&normal, &none, &medium, &high};
  unweighted.order(queue, 10, 0);
  EXPECT_EQ(queue, (std::vector<const Job*>{&normal, &none, &medium, &high}));
}

TEST(PriorityQos, UsageFactorScalesWhatAJobCharges) {
  ShareTree tree;
  const int account = tree.add_account("alpha", ShareTree::kRoot, 1);
  const int user = tree.add_user("alice", account, 1);
  PriorityOrder order(std::move(tree), 4, PriorityWeights{.half_life = 0});
  order.set_qos({{0, 1}, {0, 2}, {0, 0}});  // normal, double, free
  Job normal = qos_job(1, 0, user), twice = qos_job(2, 1, user), free = qos_job(3, 2, user);
  normal.request.nodes = 2;
  order.ended(normal, 0, 10);  // 2 nodes x 10 s
  EXPECT_DOUBLE_EQ(order.tree().nodes()[static_cast<size_t>(user)].usage, 20);
  order.ended(twice, 10, 20);  // 1 node x 10 s x 2
  EXPECT_DOUBLE_EQ(order.tree().nodes()[static_cast<size_t>(user)].usage, 40);
  order.ended(free, 20, 30);
  EXPECT_DOUBLE_EQ(order.tree().nodes()[static_cast<size_t>(user)].usage, 40);
  // A running job counts for what it has run so far, at its rate.
  order.started(twice, 30);
  EXPECT_DOUBLE_EQ(order.tree_at(35).nodes()[static_cast<size_t>(user)].usage, 50);
}

}  // namespace
}  // namespace trellis
