#include "daemon/grpc_agent_link.h"

#include <chrono>
#include <iostream>

#include <grpcpp/grpcpp.h>

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
  std::string what = "launch of job " + std::to_string(request.job_id()) + " attempt " +
                     std::to_string(request.attempt());
  enqueue(agent, std::move(what), [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
    v1::LaunchReply reply;
    return stub.Launch(&context, request, &reply);
  });
}

void GrpcAgentLink::signal(const std::string& agent, const v1::SignalRequest& request) {
  std::string what =
      "signal " + std::to_string(request.signal()) + " to job " + std::to_string(request.job_id());
  enqueue(agent, std::move(what), [request](v1::Agent::Stub& stub, grpc::ClientContext& context) {
    v1::SignalReply reply;
    return stub.Signal(&context, request, &reply);
  });
}

void GrpcAgentLink::enqueue(const std::string& agent, std::string what, Call call) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  std::unique_ptr<Sender>& sender = senders_[agent];
  if (!sender) {
    sender = std::make_unique<Sender>();
    sender->stub =
        v1::Agent::NewStub(grpc::CreateChannel(agent, grpc::InsecureChannelCredentials()));
    Sender& s = *sender;
    sender->queue.emplace_back(std::move(what), std::move(call));
    sender->thread = std::thread([this, agent, &s] { run(agent, s); });
    return;
  }
  sender->queue.emplace_back(std::move(what), std::move(call));
  wake_.notify_all();
}

void GrpcAgentLink::run(const std::string& agent, Sender& sender) {
  constexpr int kAttempts = 4;
  for (;;) {
    std::pair<std::string, Call> next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !sender.queue.empty(); });
      if (sender.queue.empty()) return;  // stopping, and everything was sent
      next = std::move(sender.queue.front());
      sender.queue.pop_front();
    }
    grpc::Status status;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(static_cast<long>(deadline_seconds_ * 1000)));
      if (Status ok = credentials_.attach(context); !ok) {
        status = grpc::Status(grpc::StatusCode::UNAVAILABLE, ok.error().message);
      } else {
        status = next.second(*sender.stub, context);
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
    if (!status.ok())
      log_line("agent " + agent + ": " + next.first + " failed: " + status.error_message());
  }
}

}  // namespace trellis
