#include "cli/slurm/account_tree.h"

#include <algorithm>
#include <vector>

namespace trellis::cli::slurm {

void walk_account_tree(const v1::ListAccountsReply& reply,
                       const std::function<void(const v1::AccountInfo&, int depth)>& on_account,
                       const std::function<void(const v1::AccountInfo&, const v1::AssociationInfo&,
                                                int depth)>& on_association) {
  std::function<void(const v1::AccountInfo&, int)> visit = [&](const v1::AccountInfo& account,
                                                               int depth) {
    on_account(account, depth);
    for (const v1::AssociationInfo& a : reply.associations())
      if (a.account() == account.name()) on_association(account, a, depth + 1);
    std::vector<const v1::AccountInfo*> children;
    for (const v1::AccountInfo& child : reply.accounts())
      if (child.parent() == account.name() && child.name() != account.name())
        children.push_back(&child);
    std::sort(children.begin(), children.end(),
              [](const auto* a, const auto* b) { return a->name() < b->name(); });
    // A broken store could hold a cycle; depth stops it (check() refuses one on every change).
    if (depth < 1000)
      for (const v1::AccountInfo* child : children) visit(*child, depth + 1);
  };
  for (const v1::AccountInfo& account : reply.accounts())
    if (account.name() == "root") visit(account, 0);
}

}  // namespace trellis::cli::slurm
