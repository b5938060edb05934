// The tree of accounts as sacctmgr and sshare list it: depth first from root, each account
// followed by its users' associations (in the order listed) and then its sub-accounts by name.
#pragma once

#include <functional>

#include "trellis/v1/trellis.pb.h"

namespace trellis::cli::slurm {

// Calls `on_account` for each account and `on_association` for each association, in that order,
// with how far below root each is (root 0; an account's associations one below it).
void walk_account_tree(const v1::ListAccountsReply& reply,
                       const std::function<void(const v1::AccountInfo&, int depth)>& on_account,
                       const std::function<void(const v1::AccountInfo&, const v1::AssociationInfo&,
                                                int depth)>& on_association);

}  // namespace trellis::cli::slurm
