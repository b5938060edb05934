#include "daemon/pmi_tree_link.h"

#include "core/number_text.h"
#include "daemon/agent.h"

namespace trellis {

PmiTreeLink::PmiTreeLink(TreeChannel& channel, const CredentialSource& credentials, int daemon_uid,
                         std::string self, double deadline_seconds)
    : signer_(credentials, daemon_uid),
      sender_(signer_, channel, "pmi exchange of " + self),
      self_(std::move(self)),
      deadline_seconds_(deadline_seconds) {
  for (int i = 0; i < kSenders; ++i) threads_.emplace_back([this] { run(); });
}

PmiTreeLink::~PmiTreeLink() {
  stop();
}

v1::PmiExchange PmiTreeLink::op(const StepKey& step, uint32_t round, const std::string& from,
                                std::string data, bool complete) {
  v1::PmiExchange op;
  op.set_job_id(step.job);
  op.set_attempt(step.attempt);
  op.set_step(step.step);
  op.set_round(round);
  op.set_from(from);
  op.set_data(std::move(data));
  op.set_complete(complete);
  return op;
}

void PmiTreeLink::send_up(const std::string& parent, const StepKey& step, uint32_t round,
                          std::string data, Failed failed) {
  Send send;
  *send.body.mutable_pmi_exchange() = op(step, round, self_, std::move(data), false);
  send.agents = {parent};
  send.failed = std::move(failed);
  queue(std::move(send));
}

void PmiTreeLink::send_down(const StepKey& step, uint32_t round, std::string data,
                            std::vector<std::string> agents, int fanout) {
  Send send;
  *send.body.mutable_pmi_exchange() = op(step, round, self_, std::move(data), true);
  send.agents = std::move(agents);
  send.fanout = fanout;
  queue(std::move(send));
}

void PmiTreeLink::queue(Send send) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(std::move(send));
      ready_.notify_one();
      return;
    }
  }
  if (send.failed) send.failed("the agent is stopping");
}

void PmiTreeLink::stop() {
  std::deque<Send> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  ready_.notify_all();
  for (Send& send : dropped)
    if (send.failed) send.failed("the agent is stopping");
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
}

void PmiTreeLink::run() {
  for (;;) {
    Send send;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      send = std::move(queue_.front());
      queue_.pop_front();
    }
    deliver(send);
  }
}

void PmiTreeLink::deliver(Send& send) {
  const v1::PmiExchange& x = send.body.pmi_exchange();
  const std::string what = "pmi exchange: step " +
                           StepKey{x.job_id(), x.attempt(), x.step()}.name() + " barrier " +
                           std::to_string(x.round());
  for (int attempt = 1;; ++attempt) {
    v1::TreeReply reply = sender_.send(
        send.body, send.agents, {.fanout = send.fanout, .deadline_seconds = deadline_seconds_});
    if (reply.failed_size() == 0 && reply.errors_size() == 0) return;
    std::string why;
    for (const std::string& error : reply.errors()) why += (why.empty() ? "" : "; ") + error;
    // Agents that did not answer (`failed`, each with an error) may only have been slow (a host
    // starved of CPU): they are sent the same message again, which they take as the first copy
    // (pmi_exchange.h). A refusal (an error without a failed agent) is final.
    if (reply.failed_size() > 0 && attempt < kAttempts) {
      if (stopping()) return fail_send(send, what, "the agent is stopping");
      std::vector<std::string> unanswered(reply.failed().begin(), reply.failed().end());
      agent_log(what + ": no answer from " + std::to_string(unanswered.size()) + " agent(s) (" +
                unanswered.front() + (unanswered.size() > 1 ? ", ..." : "") + ") in " +
                exact_number(deadline_seconds_) + " s; sending again (attempt " +
                std::to_string(attempt + 1) + " of " + std::to_string(kAttempts) + ")");
      send.agents = std::move(unanswered);
      continue;
    }
    if (why.empty()) why = "no answer from " + reply.failed(0);
    if (send.failed) {
      agent_log(what + ": the parent agent " + send.agents.front() + " did not take it: " + why);
      send.failed("the parent agent " + send.agents.front() + ": " + why);
    } else {
      agent_log(what + ": not every agent got every node's data (" +
                std::to_string(reply.failed_size()) + " failed): " + why);
    }
    return;
  }
}

bool PmiTreeLink::stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void PmiTreeLink::fail_send(Send& send, const std::string& what, const std::string& why) {
  agent_log(what + ": " + why);
  if (send.failed) send.failed(why);
}

}  // namespace trellis
