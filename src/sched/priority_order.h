// PriorityOrder: Slurm's multifactor priority as a QueueOrder (sched/queue_order.h). Each pass it
// gives every waiting job
//
//   priority = weight_age * age + weight_fair_share * fair_share + weight_job_size * job_size
//              + weight_qos * qos
//
// with every factor in [0, 1]: age = min(1, waited / max_age), fair_share the job's user's
// factor from the tree of accounts (core/fair_share.h: Fair Tree, or the classic formula), and
// job_size = nodes asked / nodes of the machine, qos = the Priority of the job's QOS over the
// highest Priority of any QOS (core/qos.h; set_qos()). The queue is sorted by it, highest first,
// then by submission and id. The defaults are what a site would keep, as the multi-user issue asks:
// fair-share counts ten times more than a week's waiting, size nothing.
//
// Usage: each job is charged its node-seconds (nodes x run time, times its QOS's UsageFactor) to
// its user when it ends, and
// the jobs running are counted for what they have run so far, so a user's factor moves by the
// next pass after a start or an end, not every five minutes as in Slurm. All usage decays with a
// half-life (7 days by default), applied when time moves on rather than by a periodic walk.
//
// Which user of the tree a job charges is its `association` (core/job.h), set by whoever made
// the tree (sim/user_accounts.h for a trace): the user's node index, or, when the tree came with
// a map (replace_tree()), an index into that map, so that jobs keep their association while
// the tree is rebuilt (trellisd, when accounts change). A job of no user in the tree gets a
// fair-share factor of 0 and charges nothing. A tree with no users leaves the queue in arrival
// order (every factor would be 0 but age's, which is arrival order).
//
//   ShareTree tree = ...;  // accounts and users, with their shares
//   PriorityOrder order(std::move(tree), machine.node_count());
//   SimOptions options;
//   options.order = &order;
#pragma once

#include <unordered_map>
#include <vector>

#include "core/fair_share.h"
#include "sched/queue_order.h"

namespace trellis {

struct PriorityWeights {
  double age = 1000;
  double fair_share = 10000;
  double job_size = 0;
  double qos = 0;  // PriorityWeightQOS: 0, as Slurm's (set it for QOS Priority to count)
  Seconds max_age = 7 * 86400;    // PriorityMaxAge
  Seconds half_life = 7 * 86400;  // PriorityDecayHalfLife; 0 = no decay
  bool classic = false;           // the classic formula instead of Fair Tree
  double dampening = 1;           // FairShareDampeningFactor (classic only)
};

class PriorityOrder final : public QueueOrder {
 public:
  PriorityOrder(ShareTree tree, int machine_nodes, PriorityWeights weights = {});

  void started(const Job& job, Seconds start) override;
  void ended(const Job& job, Seconds start, Seconds end) override;
  void order(std::vector<const Job*>& queue, Seconds now, size_t head) override;

  // A new tree of accounts, each job's association mapped to a user's node by
  // `node_of_association` (-1: none; empty: the association is the node). With `keep_usage`,
  // each user's usage so far moves to the node of the same user under the account of the same
  // name; without, usage starts at 0 and the running jobs are forgotten (a rebuild tells them
  // again with started()).
  void replace_tree(ShareTree tree, std::vector<int> node_of_association, bool keep_usage);

  // The site's QOS, by Job::qos: each one's Priority and UsageFactor. A job of no QOS in it
  // (Job::qos -1) has factor 0 and is charged what it uses.
  struct QosTerms {
    double priority = 0;
    double usage_factor = 1;
  };
  void set_qos(std::vector<QosTerms> by_qos);

  // As of the last order(): each tree node's shares, usage and factor (sshare's columns).
  const std::vector<ShareResult>& shares() const { return shares_; }
  // The tree with its usage decayed to the last time it was told of.
  const ShareTree& tree() const { return tree_; }
  // The tree as of `now`: usage decayed to then, with what the running jobs have used so far
  // (what sshare shows).
  ShareTree tree_at(Seconds now) const;
  // `job`'s priority with the factors of the last order() at `now`, and its factors (each in
  // [0, 1], before the weights): what sprio shows.
  double priority(const Job& job, Seconds now) const;
  struct Factors {
    double age = 0, fair_share = 0, job_size = 0, qos = 0;
  };
  Factors factors(const Job& job, Seconds now) const;
  const PriorityWeights& weights() const { return weights_; }

 private:
  // Decays every usage from usage_time_ to `now` (later only).
  void decay_to(Seconds now);
  // The user node a job's association charges, or -1.
  int user_node(int association) const;
  // What one node-second of a job of QOS `qos` charges.
  double usage_factor(int qos) const;

  ShareTree tree_;
  std::vector<int> node_of_association_;  // empty: association = node
  std::vector<QosTerms> qos_;
  double highest_qos_priority_ = 0;
  int machine_nodes_;
  PriorityWeights weights_;
  Seconds usage_time_ = 0;  // what time tree_'s usage is as of
  bool usage_time_set_ = false;
  std::vector<ShareResult> shares_;
  struct Running {
    int association = -1;
    double rate = 0;  // charged per second: nodes x its QOS's UsageFactor
    Seconds start = 0;
  };
  std::unordered_map<JobId, Running> running_;
  std::vector<std::pair<double, const Job*>> keyed_;  // order() scratch
};

}  // namespace trellis
