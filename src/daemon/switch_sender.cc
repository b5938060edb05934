#include "daemon/switch_sender.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <set>

#include "daemon/log.h"
#include "daemon/switch_node.h"

namespace trellis {

using Clock = std::chrono::steady_clock;

SwitchSender::SwitchSender(const CredentialSource& credentials, Options options)
    : credentials_(credentials), options_(options) {
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

std::shared_ptr<v1::Agent::Stub> SwitchSender::stub(const std::string& agent) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<v1::Agent::Stub>& stub = stubs_[agent];
  if (!stub) stub = new_agent_stub(agent);
  return stub;
}

v1::SwitchReply SwitchSender::switch_through_tree(const SwitchOrder& order,
                                                  std::vector<std::string> agents) {
  v1::SwitchReply total;
  // Each round sends to the agents the last one did not reach; a round with no failure ends it.
  // Every round removes at least its failed agents, so this ends.
  while (!agents.empty()) {
    v1::SwitchRequest request;
    request.set_switch_id(order.id);
    auto add = [](auto* list, const SwitchOrder::JobAttempt& job) {
      v1::JobAttempt* j = list->Add();
      j->set_job_id(job.first);
      j->set_attempt(job.second);
    };
    for (const auto& job : order.freeze) add(request.mutable_freeze(), job);
    for (const auto& job : order.thaw) add(request.mutable_thaw(), job);
    for (const auto& job : order.probe) add(request.mutable_probe(), job);
    for (size_t i = 1; i < agents.size(); ++i) request.add_subtree(agents[i]);
    request.set_fanout(options_.fanout);
    request.set_deadline_seconds(options_.deadline_seconds * 0.9);
    grpc::ClientContext context;
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::microseconds(static_cast<int64_t>(options_.deadline_seconds * 1e6)));
    v1::SwitchReply reply;
    grpc::Status status = grpc::Status::OK;
    if (Status attached = credentials_.attach(context); !attached)
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE, attached.error().message);
    else
      status = stub(agents[0])->Switch(&context, request, &reply);
    if (!status.ok()) {  // the root itself
      reply.Clear();
      reply.add_failed(agents[0]);
      for (size_t i = 1; i < agents.size(); ++i) reply.add_unreached(agents[i]);
      reply.add_errors(agents[0] + ": " + status.error_message());
    }
    merge_switch_reply(reply, total);
    if (reply.failed_size() == 0) break;
    std::set<std::string> failed(reply.failed().begin(), reply.failed().end());
    {
      std::lock_guard lock(mutex_);
      for (const std::string& agent : failed)
        kept_out_[agent] =
            Clock::now() +
            std::chrono::microseconds(static_cast<int64_t>(options_.keep_out_seconds * 1e6));
    }
    agents.clear();
    for (const std::string& agent : reply.unreached())
      if (!failed.contains(agent)) agents.push_back(agent);
    log_line("gang switch " + std::to_string(order.id) + ": " + std::to_string(failed.size()) +
             " agents did not answer (" + *failed.begin() + (failed.size() > 1 ? ", ..." : "") +
             "); sending to the " + std::to_string(agents.size()) +
             " they did not reach in a new tree");
  }
  // Counted once: the resent rounds' unreached agents were reached after all.
  total.clear_unreached();
  return total;
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
