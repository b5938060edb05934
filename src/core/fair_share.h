// Fair-share: how far each user of a tree of accounts is from its share of the machine, as a
// factor in [0, 1] that the job priority weighs (core/job_priority.h). Two algorithms, both as
// Slurm's priority/multifactor defines them, so that a site's numbers carry over:
//
// Fair Tree (Slurm's default since 19.05; fair_tree() here). Each association is compared only
// with its siblings: its level fair-share is LF = S / U, where S is its raw shares over those of
// itself and its siblings and U its usage over theirs (its parent's). LF > 1 is under-served,
// below 1 over-served; no usage is +infinity, no shares 0. The tree is walked depth first with
// every level's children in descending LF, and users are ranked in the order they are met: the
// first of N users gets N/N = 1, the last 1/N. So if account A has a higher LF than its sibling
// B, every user below A ranks above every user below B, at every level. Ties: sibling users of
// equal LF share a rank; a user tied with a sibling account gets the rank of that account's top
// user (users come first among equals); tied sibling accounts have their children merged before
// the walk descends.
//
// Classic (classic_fair_share(); Slurm's PriorityFlags=NO_FAIR_TREE): S is the product of the
// shares fractions from the user up to the root, U the usage over the whole machine's, and the
// effective usage UE = U_self + (UE_parent - U_self) * S_raw_self / S_raw_all_siblings (UE = U
// for the accounts under the root); the factor is 2^(-UE / S / d) with d the dampening factor.
//
// Usage is in any unit that adds up (billing-weighted resource-seconds in the daemon and the
// simulator), decayed with a half-life (decayed_usage()). A tree is a plain value: the caller
// builds it from the accounts in the store (or a trace's users and groups) and the usage it
// keeps, and computes the factors when it sorts the queue; nothing here holds a lock or a clock.
//
//   ShareTree tree;
//   int physics = tree.add_account("physics", ShareTree::kRoot, 40);
//   int alice = tree.add_user("alice", physics, 1);
//   tree.add_usage(alice, 3600.0);
//   std::vector<ShareResult> fs = fair_tree(tree);
//   fs[alice].factor;       // 1.0 if alice ranks first
//   fs[physics].level_fs;   // what `sshare -l` shows as LevelFS
#pragma once

#include <string>
#include <vector>

namespace trellis {

struct ShareNode {
  std::string name;
  bool is_user = false;
  int parent = -1;    // index in ShareTree::nodes(); -1 for the root
  double shares = 1;  // raw shares (Slurm's RawShares), >= 0
  double usage = 0;   // its own decayed usage (a user's); an account's is its subtree's sum
  std::vector<int> children;
};

class ShareTree {
 public:
  static constexpr int kRoot = 0;
  ShareTree();  // just the root, "root"

  // The index of the new node. `parent` must be an account's index (programmer error if not).
  int add_account(const std::string& name, int parent, double shares);
  int add_user(const std::string& name, int account, double shares);
  // Charges a user's own usage (its accounts' sums follow).
  void add_usage(int user, double amount);
  // Multiplies every usage by `factor` (the decay since the last call).
  void scale_usage(double factor);

  const std::vector<ShareNode>& nodes() const { return nodes_; }
  int user_count() const { return users_; }
  // Usage of `node` and everything below it.
  double subtree_usage(int node) const;
  // The index of the user `name` under account `account`, or -1.
  int find_user(int account, const std::string& name) const;
  // The index of the account `name`, or -1.
  int find_account(const std::string& name) const;

 private:
  std::vector<ShareNode> nodes_;
  int users_ = 0;
};

// What the algorithms say of one node of the tree (one per node, by index).
struct ShareResult {
  double norm_shares = 0;      // Fair Tree: among its siblings; classic: of the whole machine
  double effective_usage = 0;  // Fair Tree: its usage over its parent's; classic: UE
  double level_fs = 0;         // Fair Tree's LF (+infinity without usage); classic: unused (0)
  double factor = 0;           // users: the fair-share factor in [0, 1]; accounts: 0
};

std::vector<ShareResult> fair_tree(const ShareTree& tree);
std::vector<ShareResult> classic_fair_share(const ShareTree& tree, double dampening = 1);

// `usage` after `elapsed` seconds of decay with a half-life of `half_life` seconds (0: none).
double decayed_usage(double usage, double elapsed, double half_life);

}  // namespace trellis
