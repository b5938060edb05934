// Fair-share (core/fair_share.h): the classic formula on the worked example of Slurm's
// classic_fair_share page, Fair Tree on the example of its fair_tree page and on its three tie
// rules, and Fair Tree's ordering on random trees against a ranking made independently (users
// sorted by the level fair-shares along their paths), with usage decay.
#include "core/fair_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace trellis {
namespace {

// Slurm's example: A 40 {B 30 {user 1}, C 10 {users 2 and 3, 1 share each}}, D 60 {E 25 {user 4},
// F 35 {user 5}}; users 1, 2 and 4 used 0.2, 0.25 and 0.25 of the machine. The page's factors:
// 0.408479, 0.022097, 0.125000, 0.500000, 0.749154.
TEST(FairShareTest, TheClassicFormulaGivesTheFactorsOfSlurmsWorkedExample) {
  ShareTree tree;
  const int a = tree.add_account("A", ShareTree::kRoot, 40);
  const int b = tree.add_account("B", a, 30);
  const int c = tree.add_account("C", a, 10);
  const int d = tree.add_account("D", ShareTree::kRoot, 60);
  const int e = tree.add_account("E", d, 25);
  const int f = tree.add_account("F", d, 35);
  const int user[] = {tree.add_user("1", b, 1), tree.add_user("2", c, 1), tree.add_user("3", c, 1),
                      tree.add_user("4", e, 1), tree.add_user("5", f, 1)};
  tree.add_usage(user[0], 0.2);
  tree.add_usage(user[1], 0.25);
  tree.add_usage(user[3], 0.25);
  // The rest of the machine's usage went to nobody in the tree: the page's usages are fractions
  // of the machine, and these add up to 0.7 of it.
  const int idle = tree.add_account("unused", ShareTree::kRoot, 0);
  tree.add_usage(tree.add_user("x", idle, 0), 0.3);
  std::vector<ShareResult> fs = classic_fair_share(tree);
  EXPECT_NEAR(fs[static_cast<size_t>(b)].effective_usage, 0.3875, 1e-9);
  EXPECT_NEAR(fs[static_cast<size_t>(c)].effective_usage, 0.3, 1e-9);
  EXPECT_NEAR(fs[static_cast<size_t>(f)].effective_usage, 0.25 * 35 / 60, 1e-9);
  EXPECT_NEAR(fs[static_cast<size_t>(user[1])].norm_shares, 0.05, 1e-12);
  const double want[] = {0.408479, 0.022097, 0.125000, 0.500000, 0.749154};
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(fs[static_cast<size_t>(user[i])].factor, want[i], 5e-7) << "user " << i + 1;
  // The dampening factor d: F = 2^(-UE/S/d).
  std::vector<ShareResult> damped = classic_fair_share(tree, 2);
  EXPECT_NEAR(damped[static_cast<size_t>(user[3])].factor, std::exp2(-0.5), 1e-9);
}

// fair_tree.shtml: root => Acct1 => Acct12 => UserA and root => Acct1 => Acct16 => UserB. Acct1
// is their first common ancestor, and whichever of Acct12 and Acct16 has the higher Level FS has
// the user with the higher FairShare.
TEST(FairShareTest, FairTreeRanksUsersByTheirAncestorsLevelFairShare) {
  ShareTree tree;
  const int acct1 = tree.add_account("Acct1", ShareTree::kRoot, 1);
  const int acct12 = tree.add_account("Acct12", acct1, 1);
  const int acct16 = tree.add_account("Acct16", acct1, 1);
  const int user_a = tree.add_user("UserA", acct12, 1);
  const int user_b = tree.add_user("UserB", acct16, 1);
  tree.add_usage(user_a, 3);
  tree.add_usage(user_b, 1);
  std::vector<ShareResult> fs = fair_tree(tree);
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(acct12)].norm_shares, 0.5);
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(acct12)].effective_usage, 0.75);
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(acct12)].level_fs, 0.5 / 0.75);
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(acct16)].level_fs, 2);
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(user_b)].factor, 1.0);  // rank 2 of 2
  EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(user_a)].factor, 0.5);  // rank 1 of 2
  // No usage: +infinity; no shares: 0.
  ShareTree fresh;
  const int unused = fresh.add_user("new", ShareTree::kRoot, 1);
  const int shareless = fresh.add_user("none", ShareTree::kRoot, 0);
  fresh.add_usage(shareless, 1);
  std::vector<ShareResult> first = fair_tree(fresh);
  EXPECT_TRUE(std::isinf(first[static_cast<size_t>(unused)].level_fs));
  EXPECT_EQ(first[static_cast<size_t>(shareless)].level_fs, 0);
  EXPECT_GT(first[static_cast<size_t>(unused)].factor,
            first[static_cast<size_t>(shareless)].factor);
}

TEST(FairShareTest, FairTreeTiesAreRankedAsSlurmDocumentsThem) {
  {  // Sibling users of the same level fair-share share a rank.
    ShareTree tree;
    const int u1 = tree.add_user("u1", ShareTree::kRoot, 1);
    const int u2 = tree.add_user("u2", ShareTree::kRoot, 1);
    const int u3 = tree.add_user("u3", ShareTree::kRoot, 1);
    tree.add_usage(u1, 5);
    tree.add_usage(u2, 5);
    tree.add_usage(u3, 7);
    std::vector<ShareResult> fs = fair_tree(tree);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(u1)].factor, 1.0);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(u2)].factor, 1.0);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(u3)].factor, 1.0 / 3);  // ranks used up by the tie
  }
  {  // A user tied with a sibling account ranks with that account's top user.
    ShareTree tree;
    const int u = tree.add_user("u", ShareTree::kRoot, 1);
    const int account = tree.add_account("A", ShareTree::kRoot, 1);
    const int v = tree.add_user("v", account, 1);
    const int w = tree.add_user("w", account, 1);
    tree.add_usage(u, 2);
    tree.add_usage(v, 0.5);
    tree.add_usage(w, 1.5);
    std::vector<ShareResult> fs = fair_tree(tree);
    ASSERT_EQ(fs[static_cast<size_t>(u)].level_fs, fs[static_cast<size_t>(account)].level_fs);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(u)].factor, 1.0);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(v)].factor, 1.0);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(w)].factor, 1.0 / 3);
  }
  {  // Tied sibling accounts have their children merged: a1, b1, a2, b2 (not a1, a2, b1, b2).
    ShareTree tree;
    const int a = tree.add_account("A", ShareTree::kRoot, 1);
    const int b = tree.add_account("B", ShareTree::kRoot, 1);
    const int a1 = tree.add_user("a1", a, 1), a2 = tree.add_user("a2", a, 1);
    const int b1 = tree.add_user("b1", b, 3), b2 = tree.add_user("b2", b, 1);
    tree.add_usage(a1, 1);
    tree.add_usage(a2, 3);
    tree.add_usage(b1, 2);
    tree.add_usage(b2, 2);
    std::vector<ShareResult> fs = fair_tree(tree);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(a1)].factor, 1.0);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(b1)].factor, 0.75);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(a2)].factor, 0.5);
    EXPECT_DOUBLE_EQ(fs[static_cast<size_t>(b2)].factor, 0.25);
  }
}

// Random trees of accounts and users with positive shares and usage (so no two level
// fair-shares tie): the ranking must be the users sorted by the level fair-shares along their
// paths from the root, compared at the first level where the paths part, highest first. That is
// Fair Tree's guarantee: a higher account's users all rank above a lower sibling's.
TEST(FairShareTest, FairTreeOrdersEveryPairOfUsersByWhereTheirPathsPart) {
  std::mt19937 random(20261203);
  for (int round = 0; round < 200; ++round) {
    ShareTree tree;
    std::vector<int> accounts = {ShareTree::kRoot};
    std::vector<int> users;
    const int nodes = 2 + static_cast<int>(random() % 30);
    for (int i = 0; i < nodes; ++i) {
      const int parent = accounts[random() % accounts.size()];
      const double shares = 1 + static_cast<double>(random() % 100);
      if (random() % 3 == 0) {
        accounts.push_back(tree.add_account("a" + std::to_string(i), parent, shares));
      } else {
        users.push_back(tree.add_user("u" + std::to_string(i), parent, shares));
        tree.add_usage(users.back(), 1 + std::uniform_real_distribution<double>(0, 1000)(random));
      }
    }
    // Accounts without users have no usage and rank first; give each a user so none is empty.
    for (int account : accounts)
      if (tree.subtree_usage(account) == 0) {
        users.push_back(tree.add_user("filler", account, 1));
        tree.add_usage(users.back(), 1 + static_cast<double>(random() % 1000));
      }
    std::vector<ShareResult> fs = fair_tree(tree);
    const std::vector<ShareNode>& n = tree.nodes();
    auto path = [&](int node) {
      std::vector<int> up;
      for (; node != ShareTree::kRoot; node = n[static_cast<size_t>(node)].parent)
        up.push_back(node);
      std::reverse(up.begin(), up.end());
      return up;
    };
    std::vector<int> ranked = users;
    std::sort(ranked.begin(), ranked.end(), [&](int x, int y) {
      std::vector<int> px = path(x), py = path(y);
      size_t level = 0;
      while (px[level] == py[level]) ++level;
      return fs[static_cast<size_t>(px[level])].level_fs >
             fs[static_cast<size_t>(py[level])].level_fs;
    });
    const double count = static_cast<double>(users.size());
    for (size_t i = 0; i < ranked.size(); ++i)
      ASSERT_DOUBLE_EQ(fs[static_cast<size_t>(ranked[i])].factor, (count - i) / count)
          << "round " << round << ", place " << i;
  }
}

TEST(FairShareTest, UsageDecaysByHalfEachHalfLife) {
  EXPECT_DOUBLE_EQ(decayed_usage(8, 7200, 3600), 2);
  EXPECT_DOUBLE_EQ(decayed_usage(8, 1800, 3600), 8 / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(decayed_usage(8, 7200, 0), 8);  // no half-life: no decay
  ShareTree tree;
  const int u = tree.add_user("u", ShareTree::kRoot, 1);
  tree.add_usage(u, 10);
  tree.scale_usage(0.25);
  EXPECT_DOUBLE_EQ(tree.subtree_usage(ShareTree::kRoot), 2.5);
}

}  // namespace
}  // namespace trellis
