#include "core/fair_share.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace trellis {
namespace {

// Every node's usage with its subtree's: a child always has a larger index than its parent, so
// one pass from the last node up adds each into its parent.
std::vector<double> subtree_usages(const std::vector<ShareNode>& nodes) {
  std::vector<double> sum(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) sum[i] = nodes[i].usage;
  for (size_t i = nodes.size(); i-- > 1;) sum[static_cast<size_t>(nodes[i].parent)] += sum[i];
  return sum;
}

// Per node, the raw shares of all its children: one pass, so that a node's siblings are not
// summed again for each of them (an account of 1,000 users would cost a million additions).
std::vector<double> children_shares(const std::vector<ShareNode>& nodes) {
  std::vector<double> sum(nodes.size(), 0);
  for (size_t i = 1; i < nodes.size(); ++i)
    sum[static_cast<size_t>(nodes[i].parent)] += nodes[i].shares;
  return sum;
}

// The walk of Fair Tree over one list of siblings (the children of one account, or of several
// tied ones merged). `next` is the rank the next user met gets unless tied; `rank` the one the
// last user got.
struct FairTreeWalk {
  const std::vector<ShareNode>& nodes;
  std::vector<ShareResult>& out;
  int users;
  int next;
  int rank;

  void visit(std::vector<int> siblings, bool tied_with_previous) {
    // Descending LF; among equals users first, then by index for a stable walk.
    std::sort(siblings.begin(), siblings.end(), [&](int a, int b) {
      const double la = out[static_cast<size_t>(a)].level_fs;
      const double lb = out[static_cast<size_t>(b)].level_fs;
      if (la != lb) return la > lb;
      const bool ua = nodes[static_cast<size_t>(a)].is_user;
      const bool ub = nodes[static_cast<size_t>(b)].is_user;
      if (ua != ub) return ua;
      return a < b;
    });
    double previous = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = 0; i < siblings.size(); ++i) {
      const int node = siblings[i];
      const double lf = out[static_cast<size_t>(node)].level_fs;
      // The first of a list inherits the tie its account had with a user before it.
      const bool tied = (i == 0 && tied_with_previous) || lf == previous;
      previous = lf;
      if (nodes[static_cast<size_t>(node)].is_user) {
        if (!tied) rank = next;
        out[static_cast<size_t>(node)].factor = static_cast<double>(rank) / users;
        --next;
        continue;
      }
      // Tied sibling accounts: their children are walked as one list.
      std::vector<int> merged = nodes[static_cast<size_t>(node)].children;
      while (i + 1 < siblings.size() && !nodes[static_cast<size_t>(siblings[i + 1])].is_user &&
             out[static_cast<size_t>(siblings[i + 1])].level_fs == lf) {
        ++i;
        const std::vector<int>& more = nodes[static_cast<size_t>(siblings[i])].children;
        merged.insert(merged.end(), more.begin(), more.end());
      }
      visit(std::move(merged), tied);
    }
  }
};

ShareNode make_node(const std::string& name, bool is_user, int parent, double shares) {
  ShareNode node;
  node.name = name;
  node.is_user = is_user;
  node.parent = parent;
  node.shares = shares;
  return node;
}

}  // namespace

ShareTree::ShareTree() {
  nodes_.push_back(make_node("root", false, -1, 1));
}

int ShareTree::add_account(const std::string& name, int parent, double shares) {
  assert(parent >= 0 && parent < static_cast<int>(nodes_.size()) &&
         !nodes_[static_cast<size_t>(parent)].is_user);
  const int index = static_cast<int>(nodes_.size());
  nodes_.push_back(make_node(name, false, parent, shares));
  nodes_[static_cast<size_t>(parent)].children.push_back(index);
  return index;
}

int ShareTree::add_user(const std::string& name, int account, double shares) {
  assert(account >= 0 && account < static_cast<int>(nodes_.size()) &&
         !nodes_[static_cast<size_t>(account)].is_user);
  const int index = static_cast<int>(nodes_.size());
  nodes_.push_back(make_node(name, true, account, shares));
  nodes_[static_cast<size_t>(account)].children.push_back(index);
  ++users_;
  return index;
}

void ShareTree::add_usage(int user, double amount) {
  assert(user > 0 && user < static_cast<int>(nodes_.size()));
  nodes_[static_cast<size_t>(user)].usage += amount;
}

void ShareTree::scale_usage(double factor) {
  for (ShareNode& node : nodes_) node.usage *= factor;
}

double ShareTree::subtree_usage(int node) const {
  return subtree_usages(nodes_)[static_cast<size_t>(node)];
}

int ShareTree::find_user(int account, const std::string& name) const {
  for (int child : nodes_[static_cast<size_t>(account)].children)
    if (nodes_[static_cast<size_t>(child)].is_user &&
        nodes_[static_cast<size_t>(child)].name == name)
      return child;
  return -1;
}

int ShareTree::find_account(const std::string& name) const {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!nodes_[i].is_user && nodes_[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<ShareResult> fair_tree(const ShareTree& tree) {
  const std::vector<ShareNode>& nodes = tree.nodes();
  std::vector<ShareResult> out(nodes.size());
  const std::vector<double> usage = subtree_usages(nodes);
  const std::vector<double> shares = children_shares(nodes);
  out[0].norm_shares = 1;
  out[0].effective_usage = 1;
  out[0].level_fs = 1;
  for (size_t i = 1; i < nodes.size(); ++i) {
    const double siblings = shares[static_cast<size_t>(nodes[i].parent)];
    const double parent_usage = usage[static_cast<size_t>(nodes[i].parent)];
    ShareResult& r = out[i];
    r.norm_shares = siblings > 0 ? nodes[i].shares / siblings : 0;
    r.effective_usage = parent_usage > 0 ? usage[i] / parent_usage : 0;
    if (r.norm_shares == 0) {
      r.level_fs = 0;
    } else if (r.effective_usage == 0) {
      r.level_fs = std::numeric_limits<double>::infinity();
    } else {
      r.level_fs = r.norm_shares / r.effective_usage;
    }
  }
  FairTreeWalk walk{nodes, out, tree.user_count(), tree.user_count(), tree.user_count()};
  if (tree.user_count() > 0) walk.visit(nodes[0].children, false);
  return out;
}

std::vector<ShareResult> classic_fair_share(const ShareTree& tree, double dampening) {
  const std::vector<ShareNode>& nodes = tree.nodes();
  std::vector<ShareResult> out(nodes.size());
  const std::vector<double> usage = subtree_usages(nodes);
  const std::vector<double> shares = children_shares(nodes);
  const double total = usage[0];
  out[0].norm_shares = 1;
  out[0].effective_usage = total > 0 ? 1 : 0;
  // Parents come before their children, so one pass in index order has each parent done.
  for (size_t i = 1; i < nodes.size(); ++i) {
    const size_t parent = static_cast<size_t>(nodes[i].parent);
    const double siblings = shares[parent];
    const double fraction = siblings > 0 ? nodes[i].shares / siblings : 0;
    ShareResult& r = out[i];
    r.norm_shares = out[parent].norm_shares * fraction;
    const double actual = total > 0 ? usage[i] / total : 0;
    r.effective_usage =
        parent == 0 ? actual : actual + (out[parent].effective_usage - actual) * fraction;
    if (nodes[i].is_user)
      r.factor = r.norm_shares > 0
                     ? std::exp2(-r.effective_usage / r.norm_shares / std::max(dampening, 1e-9))
                     : 0;
  }
  return out;
}

double decayed_usage(double usage, double elapsed, double half_life) {
  if (half_life <= 0 || elapsed <= 0) return usage;
  return usage * std::exp2(-elapsed / half_life);
}

}  // namespace trellis
