#include "daemon/tree/tree_sender.h"

#include <future>
#include <set>

#include "daemon/tree/tree_reply.h"

namespace trellis {

TreeSender::TreeSender(TreeSigner& signer, TreeChannel& channel, std::string origin)
    : signer_(signer), channel_(channel), origin_(std::move(origin)) {}

v1::TreeReply TreeSender::send_once(v1::TreeBody body, const std::vector<std::string>& agents,
                                    Options options) {
  v1::TreeReply reply;
  if (agents.empty()) return reply;
  body.clear_agents();
  for (const std::string& agent : agents) body.add_agents(agent);
  body.set_fanout(options.fanout);
  body.set_deadline_seconds(options.deadline_seconds);
  body.set_origin(origin_);
  v1::TreeMessage message;
  message.set_body(body.SerializeAsString());
  const std::vector<std::string> below(agents.begin() + 1, agents.end());
  Result<v1::TreeAuth> auth = signer_.sign(message.body());
  if (!auth) return lost_subtree(agents[0], below, auth.error().message);
  *message.mutable_auth() = *auth;
  // The root's deadline is the whole tree's, and a little more: the root answers by then.
  const auto deadline =
      std::chrono::system_clock::now() +
      std::chrono::microseconds(static_cast<int64_t>(options.deadline_seconds * 1.05 * 1e6));
  std::promise<std::pair<grpc::Status, v1::TreeAnswer>> answered;
  channel_.send(agents[0], message, deadline,
                [&](const grpc::Status& status, const v1::TreeAnswer& answer) {
                  answered.set_value({status, answer});
                });
  auto [status, answer] = answered.get_future().get();
  if (!status.ok()) return lost_subtree(agents[0], below, status.error_message());
  if (Status signed_ok = signer_.check_answer(message.auth(), answer); !signed_ok)
    return lost_subtree(agents[0], below, signed_ok.error().message);
  if (!reply.ParseFromString(answer.body()))
    return lost_subtree(agents[0], below, "its answer is malformed");
  return reply;
}

v1::TreeReply TreeSender::send(v1::TreeBody body, std::vector<std::string> agents,
                               Options options) {
  v1::TreeReply total;
  std::set<std::string> failed;
  while (!agents.empty()) {
    v1::TreeReply round = send_once(body, agents, options);
    std::vector<std::string> again;
    for (const std::string& agent : round.unreached())
      if (!failed.contains(agent)) again.push_back(agent);
    for (const std::string& agent : round.failed()) failed.insert(agent);
    round.clear_unreached();  // reached by the next round, or failed there
    merge_tree_reply(round, total);
    // Each round drops its failed agents (a failure names at least one), so this ends.
    std::erase_if(again, [&](const std::string& agent) { return failed.contains(agent); });
    if (round.failed_size() == 0) break;
    agents = std::move(again);
  }
  return total;
}

}  // namespace trellis
