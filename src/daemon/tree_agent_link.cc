#include "daemon/tree_agent_link.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "core/wall_clock.h"
#include "daemon/grpc_status.h"
#include "daemon/log.h"

namespace trellis {
namespace {

// Only a refusal that may mean the message never took effect is worth repeating; the agent makes
// a repeated launch a no-op, so repeating one that did take effect is safe.
bool worth_repeating(int code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED;
}

std::string list_of(const std::vector<std::string>& agents) {
  std::string text;
  for (size_t i = 0; i < agents.size() && i < 3; ++i) text += (i ? ", " : "") + agents[i];
  if (agents.size() > 3) text += " and " + std::to_string(agents.size() - 3) + " more";
  return text;
}

}  // namespace

TreeAgentLink::TreeAgentLink(const CredentialSource& credentials, Options options)
    : options_(options),
      signer_(credentials,
              options.daemon_uid >= 0 ? options.daemon_uid : static_cast<int>(::geteuid())),
      tree_(signer_, channel_, "controller pid " + std::to_string(::getpid())),
      switches_(tree_, options.switches) {
  switches_.on_done([this](const SwitchOutcome& outcome) {
    if (switch_done_) switch_done_(outcome);
  });
  for (Lane& lane : lanes_) lane.thread = std::thread([this, &lane] { run(lane); });
}

TreeAgentLink::~TreeAgentLink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (Lane& lane : lanes_)
    if (lane.thread.joinable()) lane.thread.join();
}

bool TreeAgentLink::stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void TreeAgentLink::launch(const std::vector<std::string>& agents,
                           const v1::LaunchRequest& request) {
  if (agents.empty()) return;
  enqueue(request.job_id(), Pending{agents, request, {}});
}

void TreeAgentLink::signal(const std::vector<std::string>& agents,
                           const v1::SignalRequest& request) {
  if (agents.empty()) return;
  enqueue(request.job_id(), Pending{agents, std::nullopt, request});
}

void TreeAgentLink::enqueue(int64_t job, Pending pending) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    lanes_[static_cast<size_t>(job % kLanes)].queue.push_back(std::move(pending));
  }
  wake_.notify_all();
}

bool TreeAgentLink::superseded(const v1::LaunchRequest& launch, const Lane& lane) {
  std::lock_guard lock(mutex_);
  for (const Pending& later : lane.queue)
    if (!later.launch && later.signal.signal() == SIGKILL &&
        later.signal.job_id() == launch.job_id() &&
        (later.signal.attempt() == 0 || later.signal.attempt() == launch.attempt()))
      return true;
  return false;
}

std::vector<std::string> TreeAgentLink::ping(const std::vector<std::string>& agents,
                                             const std::vector<std::string>& register_again,
                                             double deadline_seconds) {
  if (agents.empty()) return {};
  v1::TreeBody body;
  v1::Ping& ping = *body.mutable_ping();
  for (const std::string& agent : register_again) ping.add_register_again(agent);
  v1::TreeReply reply = tree_.send(
      std::move(body), agents,
      {.fanout = options_.fanout, .deadline_seconds = std::clamp(deadline_seconds, 0.01, 60.0)});
  return {reply.failed().begin(), reply.failed().end()};
}

void TreeAgentLink::run(Lane& lane) {
  for (;;) {
    std::vector<Pending> batch;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !lane.queue.empty(); });
      if (lane.queue.empty()) return;  // stopping, and everything was sent
      // The launches at the front go together; a signal goes alone, in order.
      do {
        batch.push_back(std::move(lane.queue.front()));
        lane.queue.pop_front();
      } while (batch.front().launch && batch.size() < kMaxBatch && !lane.queue.empty() &&
               lane.queue.front().launch);
    }
    if (batch.front().launch)
      send_launches(lane, batch);
    else
      send_signal(batch.front());
  }
}

void TreeAgentLink::send_launches(Lane& lane, std::vector<Pending>& batch) {
  // Each launch's agents that still have to get it, tried again up to kAttempts times.
  std::vector<std::vector<std::string>> due(batch.size());
  std::vector<std::string> last_error(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) due[i] = batch[i].agents;
  auto any_due = [&] {
    return std::any_of(due.begin(), due.end(), [](const auto& agents) { return !agents.empty(); });
  };
  // The backoff comes only before a retry: once every launch has reached its agents, the lane
  // goes on to the next message at once (it slept 400 ms after every message that needed no
  // retry, which held each lane's next launch back by that much).
  for (int attempt = 1; attempt <= kAttempts && any_due(); ++attempt) {
    if (attempt > 1) {
      if (stopping()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
      for (size_t i = 0; i < batch.size(); ++i) {
        if (!due[i].empty() && superseded(*batch[i].launch, lane)) {
          log_line("launch of job " + std::to_string(batch[i].launch->job_id()) + " attempt " +
                   std::to_string(batch[i].launch->attempt()) +
                   " not tried again: the attempt was ended");
          due[i].clear();
        }
      }
    }
    // One message: every launch still due, to the union of their agents in order.
    v1::TreeBody body;
    std::vector<size_t> sent;
    std::vector<std::string> agents;
    std::set<std::string> seen;
    const double launch_by = wall_clock_now() + options_.deadline_seconds;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (due[i].empty()) continue;
      v1::LaunchRequest* one = body.mutable_launch()->add_launches();
      *one = *batch[i].launch;
      one->set_launch_by(launch_by);
      sent.push_back(i);
      for (const std::string& agent : due[i])
        if (seen.insert(agent).second) agents.push_back(agent);
    }
    if (sent.empty()) break;
    v1::TreeReply reply =
        tree_.send(std::move(body), agents,
                   {.fanout = options_.fanout, .deadline_seconds = options_.deadline_seconds});
    std::set<std::string> failed(reply.failed().begin(), reply.failed().end());
    std::string why = reply.errors_size() > 0 ? reply.errors(0) : "no answer";
    for (size_t k = 0; k < sent.size(); ++k) {
      const size_t i = sent[k];
      const v1::LaunchResult result = k < static_cast<size_t>(reply.launches_size())
                                          ? reply.launches(static_cast<int>(k))
                                          : v1::LaunchResult();
      if (result.code() != 0 && !worth_repeating(result.code())) {
        // Refused (a bad request, a user the agent cannot become): no retry helps.
        log_line("launch of job " + std::to_string(batch[i].launch->job_id()) +
                 " refused: " + result.message());
        if (launch_failed_)
          launch_failed_(*batch[i].launch,
                         from_grpc(grpc::Status(static_cast<grpc::StatusCode>(result.code()),
                                                result.message()),
                                   "launch"));
        due[i].clear();
        continue;
      }
      std::vector<std::string> again;
      for (const std::string& agent : due[i])
        if (failed.contains(agent)) again.push_back(agent);
      if (result.code() != 0) {
        // An agent got it too late or could not take it now: every agent of it is asked again
        // (those that took it ignore the repeat).
        again = due[i];
        last_error[i] = result.message();
      } else if (!again.empty()) {
        last_error[i] = "agents " + list_of(again) + " did not answer: " + why;
      }
      due[i] = std::move(again);
    }
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (due[i].empty()) continue;
    log_line("launch of job " + std::to_string(batch[i].launch->job_id()) + " attempt " +
             std::to_string(batch[i].launch->attempt()) + " failed after " +
             std::to_string(kAttempts) + " tries: " + last_error[i]);
    if (launch_failed_)
      launch_failed_(*batch[i].launch, fail(Error::Code::kUnavailable, last_error[i]));
  }
}

void TreeAgentLink::send_signal(const Pending& pending) {
  std::vector<std::string> due = pending.agents;
  std::string why;
  for (int attempt = 1; attempt <= kAttempts && !due.empty(); ++attempt) {
    if (attempt > 1) {
      if (stopping()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    }
    v1::TreeBody body;
    *body.mutable_signal() = pending.signal;
    v1::TreeReply reply =
        tree_.send(std::move(body), due,
                   {.fanout = options_.fanout, .deadline_seconds = options_.deadline_seconds});
    due.assign(reply.failed().begin(), reply.failed().end());
    if (reply.errors_size() > 0) why = reply.errors(0);
  }
  if (!due.empty())
    log_line("signal " + std::to_string(pending.signal.signal()) + " to job " +
             std::to_string(pending.signal.job_id()) + " did not reach " + list_of(due) + ": " +
             why + " (dropped; the liveness pings will find those agents)");
}

}  // namespace trellis
