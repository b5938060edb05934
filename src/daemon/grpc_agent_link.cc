#include "daemon/grpc_agent_link.h"

#include <signal.h>

#include <chrono>
#include <iostream>

#include <grpcpp/grpcpp.h>

#include "daemon/grpc_status.h"
#include "daemon/log.h"

namespace trellis {

GrpcAgentLink::GrpcAgentLink(const CredentialSource& credentials, double deadline_seconds)
    : credentials_(credentials), deadline_seconds_(deadline_seconds) {}

GrpcAgentLink::~GrpcAgentLink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& [agent, sender] : senders_)
    if (sender->thread.joinable()) sender->thread.join();
}

void GrpcAgentLink::launch(const std::string& agent, const v1::LaunchRequest& request) {
  Pending pending;
  pending.what = "launch of job " + std::to_string(request.job_id()) + " attempt " +
                 std::to_string(request.attempt());
  pending.call = [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
    v1::LaunchRequest timed = request;
    timed.set_launch_by(
        std::chrono::duration<double>(context.deadline().time_since_epoch()).count());
    v1::LaunchReply reply;
    return stub.Launch(&context, timed, &reply);
  };
  pending.job = request.job_id();
  pending.attempt = request.attempt();
  pending.is_launch = true;
  pending.failed = [this, request, agent](const grpc::Status& status) {
    if (launch_failed_) launch_failed_(request, from_grpc(status, "launch on agent " + agent));
  };
  enqueue(agent, request.job_id(), std::move(pending));
}

void GrpcAgentLink::signal(const std::string& agent, const v1::SignalRequest& request) {
  Pending pending;
  pending.what =
      "signal " + std::to_string(request.signal()) + " to job " + std::to_string(request.job_id());
  pending.call = [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
    v1::SignalReply reply;
    return stub.Signal(&context, request, &reply);
  };
  pending.job = request.job_id();
  pending.attempt = request.attempt();
  pending.kills_attempt = request.signal() == SIGKILL;
  enqueue(agent, request.job_id(), std::move(pending));
}

void GrpcAgentLink::enqueue(const std::string& agent, int64_t job_id, Pending pending) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  int lane = static_cast<int>(job_id % kLanes);
  std::unique_ptr<Sender>& sender = senders_[{agent, lane}];
  if (!sender) {
    sender = std::make_unique<Sender>();
    for (int other = 0; other < kLanes && !sender->stub; ++other) {
      auto it = senders_.find({agent, other});
      if (it != senders_.end() && it->second && it->second->stub) sender->stub = it->second->stub;
    }
    if (!sender->stub)
      sender->stub =
          v1::Agent::NewStub(grpc::CreateChannel(agent, grpc::InsecureChannelCredentials()));
    Sender& s = *sender;
    sender->queue.push_back(std::move(pending));
    sender->thread = std::thread([this, agent, &s] { run(agent, s); });
    return;
  }
  sender->queue.push_back(std::move(pending));
  wake_.notify_all();
}

bool GrpcAgentLink::superseded(const Pending& launch, const Sender& sender) {
  std::lock_guard lock(mutex_);
  for (const Pending& later : sender.queue)
    if (later.kills_attempt && later.job == launch.job &&
        (later.attempt == 0 || later.attempt == launch.attempt))
      return true;
  return false;
}

void GrpcAgentLink::run(const std::string& agent, Sender& sender) {
  constexpr int kAttempts = 4;
  for (;;) {
    Pending next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !sender.queue.empty(); });
      if (sender.queue.empty()) return;  // stopping, and everything was sent
      next = std::move(sender.queue.front());
      sender.queue.pop_front();
    }
    grpc::Status status;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      if (attempt > 1 && next.is_launch && superseded(next, sender)) {
        log_line("agent " + agent + ": " + next.what + " not tried again: the attempt was ended");
        status = grpc::Status::OK;
        break;
      }
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(static_cast<long>(deadline_seconds_ * 1000)));
      if (Status ok = credentials_.attach(context); !ok) {
        status = grpc::Status(grpc::StatusCode::UNAVAILABLE, ok.error().message);
      } else {
        status = next.call(*sender.stub, context);
      }
      // Only a call that may not have arrived is worth repeating; the agent makes a repeated
      // launch a no-op, so repeating one that did arrive is safe.
      if (status.ok() || (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
                          status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED))
        break;
      {
        std::unique_lock lock(mutex_);
        if (stopping_) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    }
    if (!status.ok()) {
      log_line("agent " + agent + ": " + next.what + " failed: " + status.error_message());
      if (next.failed) next.failed(status);
    }
  }
}

}  // namespace trellis
