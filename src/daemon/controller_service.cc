#include "daemon/controller_service.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <grpcpp/grpcpp.h>

#include "daemon/grpc_status.h"
#include "daemon/log.h"
#include "daemon/server_threads.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

namespace {

// The v1 Controller service: authenticate, call the Controller, map the result.
class Service final : public v1::Controller::Service {
 public:
  Service(Controller& controller, const Authenticator& auth, ControllerServer& server)
      : controller_(controller), auth_(auth), server_(server) {}

  grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest* request,
                      v1::SubmitReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    std::vector<JobId> tasks;
    Result<JobId> id = controller_.submit(request->spec(), *caller, wall_clock_now(), &tasks);
    if (!id) return to_grpc(id.error());
    reply->set_job_id(*id);
    if (!request->spec().array().empty())
      for (JobId task : tasks) reply->add_task_job_ids(task);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Cancel(grpc::ServerContext* context, const v1::CancelRequest* request,
                      v1::CancelReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    std::vector<JobId> ids(request->job_ids().begin(), request->job_ids().end());
    Result<std::vector<JobId>> done =
        controller_.cancel(ids, request->signal(), *caller, wall_clock_now(), request->exact_ids());
    if (!done) return to_grpc(done.error());
    for (JobId id : *done) reply->add_cancelled(id);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status RunStep(grpc::ServerContext* context, const v1::RunStepRequest* request,
                       v1::RunStepReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::RunStepReply> step = controller_.run_step(*request, *caller, wall_clock_now());
    if (!step) return to_grpc(step.error());
    *reply = std::move(*step);
    return grpc::Status::OK;
  }

  grpc::Status ChangeAccounts(grpc::ServerContext* context, const v1::AccountChangeRequest* request,
                              v1::AccountChangeReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::AccountChangeReply> done =
        controller_.change_accounts(*request, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    *reply = std::move(*done);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status ListAccounts(grpc::ServerContext* context, const v1::ListAccountsRequest*,
                            v1::ListAccountsReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::ListAccountsReply> accounts = controller_.list_accounts(wall_clock_now());
    if (!accounts) return to_grpc(accounts.error());
    *reply = std::move(*accounts);
    return grpc::Status::OK;
  }

  grpc::Status ListSteps(grpc::ServerContext* context, const v1::ListStepsRequest* request,
                         v1::ListStepsReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::ListStepsReply> steps = controller_.list_steps(*request);
    if (!steps) return to_grpc(steps.error());
    *reply = std::move(*steps);
    return grpc::Status::OK;
  }

  grpc::Status CancelStep(grpc::ServerContext* context, const v1::CancelStepRequest* request,
                          v1::CancelStepReply*) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    if (Status ok = controller_.cancel_step(*request, *caller, wall_clock_now()); !ok)
      return to_grpc(ok.error());
    return grpc::Status::OK;
  }

  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::ListJobsReply> jobs = controller_.list_jobs(*request, wall_clock_now());
    if (!jobs) return to_grpc(jobs.error());
    *reply = std::move(*jobs);
    return grpc::Status::OK;
  }

  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::ListNodesReply> nodes = controller_.list_nodes(*request);
    if (!nodes) return to_grpc(nodes.error());
    *reply = std::move(*nodes);
    return grpc::Status::OK;
  }

  grpc::Status Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                     v1::DrainReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::DrainReply> done = controller_.drain(*request, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    *reply = std::move(*done);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Suspend(grpc::ServerContext* context, const v1::SuspendRequest* request,
                       v1::SuspendReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    std::vector<JobId> ids(request->job_ids().begin(), request->job_ids().end());
    Result<std::vector<JobId>> done = controller_.suspend(ids, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    for (JobId id : *done) reply->add_suspended(id);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Resume(grpc::ServerContext* context, const v1::ResumeRequest* request,
                      v1::ResumeReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    std::vector<JobId> ids(request->job_ids().begin(), request->job_ids().end());
    Result<std::vector<JobId>> done = controller_.resume(ids, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    for (JobId id : *done) reply->add_resumed(id);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                        v1::RegisterReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Result<v1::RegisterReply> done =
        controller_.register_agent(*request, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    *reply = std::move(*done);
    log_line("agent " + request->address() + " registered " +
             std::to_string(request->nodes_size()) + " node(s)");
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* reply) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    std::vector<JobId> ids(request->job_ids().begin(), request->job_ids().end());
    Result<std::vector<JobId>> done = controller_.release(ids, *caller, wall_clock_now());
    if (!done) return to_grpc(done.error());
    for (JobId id : *done) reply->add_released(id);
    server_.poke();
    return grpc::Status::OK;
  }

  grpc::Status ReportExit(grpc::ServerContext* context, const v1::ExitRequest* request,
                          v1::ExitReply*) override {
    Result<Caller> caller = auth_.verify(*context);
    if (!caller) return to_grpc(caller.error());
    Status ok = controller_.report_exits(*request, *caller, wall_clock_now());
    if (!ok) return to_grpc(ok.error());
    server_.poke();
    return grpc::Status::OK;
  }

 private:
  Controller& controller_;
  const Authenticator& auth_;
  ControllerServer& server_;
};

}  // namespace

Result<std::unique_ptr<ControllerServer>> ControllerServer::start(const ClusterConfig& config) {
  std::unique_ptr<ControllerServer> s(new ControllerServer());
  s->config_ = config;
  Result<std::unique_ptr<StateStore>> store = open_store(config.store);
  if (!store) return store.error();
  s->store_ = std::move(*store);
  Result<std::unique_ptr<ChangeFeed>> feed = open_change_feed(config.store);
  if (!feed) return feed.error();
  s->feed_ = std::move(*feed);
  s->credentials_ = std::make_unique<CredentialSource>(config.munge_socket);
  s->authenticator_ = std::make_unique<Authenticator>(config.munge_socket);
  // The controller's own credential proves munged is there before anything is served.
  if (Result<std::string> probe = s->credentials_->encode(); !probe) return probe.error();
  TreeAgentLink::Options link;
  link.fanout = config.controller.tree_fanout;
  link.switches.fanout = config.controller.tree_fanout;
  s->agents_ = std::make_unique<TreeAgentLink>(*s->credentials_, link);
  Result<std::unique_ptr<Controller>> controller =
      Controller::open(config, *s->store_, *s->agents_, wall_clock_now());
  if (!controller) return controller.error();
  s->controller_ = std::move(*controller);
  s->service_ = std::make_unique<Service>(*s->controller_, *s->authenticator_, *s);
  s->agents_->on_launch_failed(
      [raw = s.get()](const v1::LaunchRequest& request, const Error& error) {
        // A step's launch failing fails that step; the job's own command failing, the job.
        Status ok = request.step() != 0
                        ? raw->controller_->step_launch_failed(request, error, wall_clock_now())
                        : raw->controller_->launch_failed(request.job_id(), request.attempt(),
                                                          error, wall_clock_now());
        if (!ok)
          log_line("launch failure of job " + std::to_string(request.job_id()) + ": " +
                   ok.error().message);
        raw->poke();
      });
  s->agents_->on_switch_done([raw = s.get()](const SwitchOutcome& outcome) {
    raw->controller_->switch_done(outcome, wall_clock_now());
    raw->poke();
  });

  grpc::ServerBuilder builder;
  keep_server_threads(builder);
  builder.AddListeningPort(config.controller.listen, grpc::InsecureServerCredentials(), &s->port_);
  builder.RegisterService(s->service_.get());
  // A hostile client must not make the daemon buffer gigabytes.
  builder.SetMaxReceiveMessageSize(4 * 1024 * 1024);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0)
    return fail(Error::Code::kUnavailable,
                "cannot listen on " + config.controller.listen + " (in use, or not an address)");
  s->scheduler_ = std::thread([raw = s.get()] { raw->schedule_loop(); });
  s->liveness_ = std::thread([raw = s.get()] { raw->liveness_loop(); });
  if (s->feed_) s->watcher_ = std::thread([raw = s.get()] { raw->watch_loop(); });
  log_line("controller " + s->controller_->identity() + " serving on port " +
           std::to_string(s->port_));
  return s;
}

ControllerServer::~ControllerServer() {
  shutdown();
  if (scheduler_.joinable()) scheduler_.join();
  if (watcher_.joinable()) watcher_.join();
  if (liveness_.joinable()) liveness_.join();
  if (controller_) controller_->resign();  // after the last pass, so it is not taken back
  // The link's threads call back into the controller and this server (a launch failed, a gang
  // switch came back): they stop while both still exist. (Members die in reverse order, the
  // link last: its switch thread used the freed controller and hung trellisd's exit.)
  agents_.reset();
}

void ControllerServer::wait() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return stopping_; });
}

void ControllerServer::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

void ControllerServer::poke() {
  {
    std::lock_guard lock(mutex_);
    poked_ = true;
  }
  wake_.notify_all();
}

void ControllerServer::schedule_loop() {
  // Without events the loop still looks at least this often (heartbeats, time limits), and often
  // enough to renew the scheduler lease, or to take it over soon after it runs out.
  const double kMaxSleep = std::min(0.25, config_.controller.scheduler_lease / 4);
  for (;;) {
    double sleep = kMaxSleep;
    if (std::optional<Seconds> wake = controller_->next_wakeup())
      sleep = std::clamp(*wake - wall_clock_now(), 0.0, kMaxSleep);
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::duration<double>(sleep),
                     [&] { return stopping_ || poked_; });
      if (stopping_) return;
      poked_ = false;
    }
    Seconds now = wall_clock_now();
    if (Status ok = controller_->tick(now); !ok) log_line("tick: " + ok.error().message);
    if (controller_->pass_due(now)) {
      Result<std::vector<JobId>> started = controller_->run_pass(now);
      if (!started) log_line("scheduling pass: " + started.error().message);
    }
  }
}

void ControllerServer::liveness_loop() {
  const double interval = config_.controller.heartbeat_interval;
  // A probe waits longer than a ping: an agent busy starting many processes is slow, not dead.
  const double probe_deadline = std::clamp(2 * interval, 0.5, 10.0);
  constexpr double kRecordEvery = 10;  // seconds between writes of the agents' last-heard times
  double recorded_at = 0;
  for (;;) {
    const Seconds started = wall_clock_now();
    if (controller_->is_scheduler()) {
      Liveness& liveness = controller_->liveness();
      std::vector<std::string> agents = liveness.agents();
      std::vector<std::string> register_again = liveness.registration_wanted(started);
      // A round takes at most most of an interval, so that rounds keep their pace.
      std::vector<std::string> failed =
          agents_->ping(agents, register_again, std::max(0.05, interval * 0.8));
      liveness.round(agents, failed, wall_clock_now());
      std::vector<std::string> probe = liveness.to_probe();
      if (!probe.empty()) {
        std::vector<std::string> silent = agents_->ping(probe, {}, probe_deadline);
        std::set<std::string> still(silent.begin(), silent.end());
        for (const std::string& agent : probe)
          liveness.probed(
              agent, !still.count(agent),
              still.count(agent)
                  ? "no answer within " + std::to_string(probe_deadline).substr(0, 4) + " s"
                  : "",
              wall_clock_now());
      }
      if (started - recorded_at >= kRecordEvery) {
        controller_->record_heard(started);
        recorded_at = started;
      }
      poke();  // the scheduler thread acts on what changed
    }
    std::unique_lock lock(mutex_);
    const double left = interval - (wall_clock_now() - started);
    wake_.wait_for(lock, std::chrono::duration<double>(std::max(0.0, left)),
                   [&] { return stopping_; });
    if (stopping_) return;
  }
}

void ControllerServer::watch_loop() {
  bool failing = false;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    Result<bool> changed = feed_->wait(0.25);
    if (changed && *changed) poke();
    if (!changed && !failing)
      log_line(changed.error().message + " (the scheduler polls meanwhile)");
    failing = !changed;
    if (!changed) {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_; });
    }
  }
}

}  // namespace trellis
