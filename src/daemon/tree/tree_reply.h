// What a control-tree message must hold, and how the replies of a tree fold into one.
#pragma once

#include <string>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

// The limits a TreeBody must keep; an agent refuses others with the field named.
constexpr int kMaxTreeJobs = 100000;       // jobs of a gang switch, launches of a batch
constexpr int kMaxTreeAddressBytes = 255;  // an agent's "host:port"
Status check_tree_body(const v1::TreeBody& body);

// Folds a child's reply into `into`: agents, failures and errors add up; a gang switch's
// activity is summed per job and its phases keep the slowest agent's time; each launch keeps
// its first refusal; signalled processes add up.
void merge_tree_reply(const v1::TreeReply& child, v1::TreeReply& into);

// The reply of a child that did not answer: it failed, and its subtree was not reached.
v1::TreeReply lost_subtree(const std::string& child, const std::vector<std::string>& subtree,
                           const std::string& why);

// The name of a body's operation, for logs ("gang switch", "launch", ...).
std::string tree_op_name(const v1::TreeBody& body);

}  // namespace trellis
