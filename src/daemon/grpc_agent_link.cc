#include "daemon/grpc_agent_link.h"

#include <signal.h>

#include <chrono>
#include <iostream>

#include <grpcpp/grpcpp.h>

#include "daemon/grpc_status.h"
#include "daemon/log.h"

namespace trellis {

GrpcAgentLink::GrpcAgentLink(const CredentialSource& credentials, double deadline_seconds,
                             SwitchSender::Options switches)
    : credentials_(credentials),
      deadline_seconds_(deadline_seconds),
      switches_(credentials, switches) {
  switches_.on_done([this](const SwitchOutcome& outcome) {
    if (switch_done_) switch_done_(outcome);
  });
}

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
  pending.launch = request;
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

namespace {

// Only a call that may not have arrived is worth repeating; the agent makes a repeated launch a
// no-op, so repeating one that did arrive is safe.
bool worth_repeating(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

}  // namespace

void GrpcAgentLink::run(const std::string& agent, Sender& sender) {
  for (;;) {
    std::vector<Pending> batch;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !sender.queue.empty(); });
      if (sender.queue.empty()) return;  // stopping, and everything was sent
      // The launches at the front go together; anything else goes alone, in order.
      do {
        batch.push_back(std::move(sender.queue.front()));
        sender.queue.pop_front();
      } while (batch.front().is_launch && batch.size() < kMaxBatch && !sender.queue.empty() &&
               sender.queue.front().is_launch);
    }
    std::vector<grpc::Status> results;
    if (batch.size() == 1) {
      results.push_back(send_one(agent, sender, batch.front()));
    } else {
      bool delivered = false;
      results = send_batch(agent, sender, batch, delivered);
      // A launch the agent answered it got too late (or could not take now) is tried again alone;
      // a batch that never got through was tried enough.
      for (size_t i = 0; i < batch.size() && delivered; ++i)
        if (worth_repeating(results[i])) results[i] = send_one(agent, sender, batch[i]);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (results[i].ok()) continue;
      log_line("agent " + agent + ": " + batch[i].what + " failed: " + results[i].error_message());
      if (batch[i].failed) batch[i].failed(results[i]);
    }
  }
}

grpc::Status GrpcAgentLink::call_once(Sender& sender, const Call& call) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<long>(deadline_seconds_ * 1000)));
  if (Status ok = credentials_.attach(context); !ok)
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, ok.error().message);
  return call(*sender.stub, context);
}

grpc::Status GrpcAgentLink::send_one(const std::string& agent, Sender& sender,
                                     const Pending& pending) {
  grpc::Status status;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    if (attempt > 1 && pending.is_launch && superseded(pending, sender)) {
      log_line("agent " + agent + ": " + pending.what + " not tried again: the attempt was ended");
      return grpc::Status::OK;
    }
    status = call_once(sender, pending.call);
    if (status.ok() || !worth_repeating(status)) break;
    {
      std::unique_lock lock(mutex_);
      if (stopping_) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
  return status;
}

std::vector<grpc::Status> GrpcAgentLink::send_batch(const std::string& agent, Sender& sender,
                                                    std::vector<Pending>& launches,
                                                    bool& delivered) {
  delivered = false;
  std::vector<grpc::Status> results(launches.size());
  std::vector<bool> dropped(launches.size(), false);
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    if (attempt > 1) {
      for (size_t i = 0; i < launches.size(); ++i) {
        if (!dropped[i] && superseded(launches[i], sender)) {
          log_line("agent " + agent + ": " + launches[i].what +
                   " not tried again: the attempt was ended");
          dropped[i] = true;
        }
      }
    }
    v1::LaunchBatchReply reply;
    std::vector<size_t> sent;
    grpc::Status status =
        call_once(sender, [&](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          v1::LaunchBatchRequest request;
          double launch_by =
              std::chrono::duration<double>(context.deadline().time_since_epoch()).count();
          for (size_t i = 0; i < launches.size(); ++i) {
            if (dropped[i]) continue;
            v1::LaunchRequest* one = request.add_launches();
            *one = *launches[i].launch;
            one->set_launch_by(launch_by);
            sent.push_back(i);
          }
          return stub.LaunchBatch(&context, request, &reply);
        });
    if (status.ok()) {
      delivered = true;
      for (size_t k = 0; k < sent.size(); ++k) {
        results[sent[k]] =
            k < static_cast<size_t>(reply.results_size())
                ? grpc::Status(
                      static_cast<grpc::StatusCode>(reply.results(static_cast<int>(k)).code()),
                      reply.results(static_cast<int>(k)).message())
                : grpc::Status(grpc::StatusCode::INTERNAL,
                               "the agent's reply left this launch out");
      }
      return results;
    }
    for (size_t i = 0; i < launches.size(); ++i)
      results[i] = dropped[i] ? grpc::Status::OK : status;
    if (!worth_repeating(status)) return results;
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return results;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
  return results;
}

}  // namespace trellis
