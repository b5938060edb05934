#include "daemon/switch_sender.h"

#include <algorithm>
#include <set>

#include "daemon/log.h"

namespace trellis {

using Clock = std::chrono::steady_clock;

SwitchSender::SwitchSender(TreeSender& tree, Options options) : tree_(tree), options_(options) {
  thread_ = std::thread([this] { run(); });
}

SwitchSender::~SwitchSender() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SwitchSender::on_done(AgentLink::SwitchDone callback) {
  std::lock_guard lock(mutex_);
  done_ = std::move(callback);
}

void SwitchSender::send(SwitchOrder order) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    queue_.push_back(std::move(order));
  }
  wake_.notify_all();
}

v1::SwitchReply SwitchSender::switch_through_tree(const SwitchOrder& order,
                                                  std::vector<std::string> agents) {
  v1::TreeBody body;
  v1::GangSwitch& request = *body.mutable_gang_switch();
  request.set_switch_id(order.id);
  auto add = [](auto* list, const SwitchOrder::JobAttempt& job) {
    v1::JobAttempt* j = list->Add();
    j->set_job_id(job.first);
    j->set_attempt(job.second);
  };
  for (const auto& job : order.freeze) add(request.mutable_freeze(), job);
  for (const auto& job : order.thaw) add(request.mutable_thaw(), job);
  for (const auto& job : order.probe) add(request.mutable_probe(), job);
  for (const auto& job : order.skip_activity) add(request.mutable_skip_activity(), job);
  v1::TreeReply tree =
      tree_.send(std::move(body), std::move(agents),
                 {.fanout = options_.fanout, .deadline_seconds = options_.deadline_seconds});
  v1::SwitchReply reply = tree.gang_switch();
  reply.set_agents(tree.agents());
  for (const std::string& failed : tree.failed()) reply.add_failed(failed);
  for (const std::string& error : tree.errors()) reply.add_errors(error);
  if (tree.failed_size() > 0) {
    {
      std::lock_guard lock(mutex_);
      for (const std::string& agent : tree.failed())
        kept_out_[agent] =
            Clock::now() +
            std::chrono::microseconds(static_cast<int64_t>(options_.keep_out_seconds * 1e6));
    }
    log_line("gang switch " + std::to_string(order.id) + ": " + std::to_string(tree.failed_size()) +
             " agents did not answer (" + tree.failed(0) + (tree.failed_size() > 1 ? ", ..." : "") +
             "); their subtrees were sent a new tree");
  }
  return reply;
}

void SwitchSender::run() {
  for (;;) {
    SwitchOrder order;
    AgentLink::SwitchDone done;
    std::vector<std::string> agents;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      order = std::move(queue_.front());
      queue_.pop_front();
      done = done_;
      const Clock::time_point now = Clock::now();
      for (const std::string& agent : order.agents) {
        auto out = kept_out_.find(agent);
        if (out != kept_out_.end() && out->second > now) continue;
        if (out != kept_out_.end()) kept_out_.erase(out);
        agents.push_back(agent);
      }
    }
    Clock::time_point start = Clock::now();
    SwitchOutcome outcome;
    outcome.reply = switch_through_tree(order, std::move(agents));
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    outcome.order = std::move(order);
    if (done) done(outcome);
  }
}

}  // namespace trellis
