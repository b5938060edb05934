// The controller's RPC handlers (daemon/controller.h), fed a sequence of decoded protobuf
// requests from the fuzzer's bytes, as the gRPC service hands them over after MUNGE: submit,
// cancel, list jobs and nodes, drain/resume, agent registration, liveness rounds and releases, exit
// reports, launch failures, passes and ticks, from a user, an administrator or an agent, at moving
// times. Each input starts from a new cluster (torus:4x4 on an in-memory SQLite store, its agent
// registered).
//
// After every call: the handler returned (an exception or abort is a crash), and the store's
// invariants hold: no node in two exclusive allocations, every job that holds nodes is running
// and holds exactly the nodes that list it, every running job has nodes, and the jobs add up to
// the submissions acknowledged.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <map>
#include <set>

#include "daemon/agent_link.h"
#include "daemon/controller.h"
#include "fuzz_support.h"
#include "store/state_store.h"

using namespace trellis;

namespace {

// Records nothing and runs nothing: what matters here is the controller and its store.
class NoAgents final : public AgentLink {
 public:
  void launch(const std::vector<std::string>&, const v1::LaunchRequest&) override {}
  void signal(const std::vector<std::string>&, const v1::SignalRequest&) override {}
};

void check_store(StateStore& store, size_t acknowledged, const std::string& step) {
  Result<std::vector<StoredJob>> jobs = store.list_jobs({});
  FUZZ_CHECK(jobs.ok(), step + ": list_jobs: " + jobs.error().message);
  Result<std::vector<StoredNode>> nodes = store.list_nodes();
  FUZZ_CHECK(nodes.ok(), step + ": list_nodes: " + nodes.error().message);
  FUZZ_CHECK(jobs->size() == acknowledged, step + ": " + std::to_string(jobs->size()) +
                                               " jobs stored, " + std::to_string(acknowledged) +
                                               " acknowledged");
  std::map<JobId, const StoredJob*> by_id;
  for (const StoredJob& job : *jobs) by_id[job.id] = &job;
  std::map<JobId, std::set<NodeId>> listed;
  for (const StoredNode& node : *nodes) {
    int exclusive = 0;
    for (JobId id : node.jobs) {
      auto job = by_id.find(id);
      FUZZ_CHECK(job != by_id.end(), step + ": node " + node.name + " held by unknown job");
      FUZZ_CHECK(holds_nodes(job->second->state),
                 step + ": node " + node.name + " held by job " + std::to_string(id) + " in " +
                     std::string(state_letter(job->second->state)));
      exclusive += job->second->share ? 0 : 1;
      listed[id].insert(node.id);
    }
    FUZZ_CHECK(exclusive == 0 || node.jobs.size() == 1,
               step + ": node " + node.name + " given to " + std::to_string(node.jobs.size()) +
                   " jobs, one of them exclusive");
  }
  for (const StoredJob& job : *jobs) {
    if (!holds_nodes(job.state)) {
      FUZZ_CHECK(!listed.count(job.id),
                 step + ": ended job " + std::to_string(job.id) + " holds nodes");
      continue;
    }
    FUZZ_CHECK(!job.nodes.empty(),
               step + ": running job " + std::to_string(job.id) + " has no nodes");
    std::set<NodeId> own(job.nodes.begin(), job.nodes.end());
    FUZZ_CHECK(own == listed[job.id],
               step + ": job " + std::to_string(job.id) + "'s nodes differ from the allocations");
  }
}

template <typename Message>
Message decode(FuzzedDataProvider& input) {
  Message message;
  std::string bytes = input.ConsumeRandomLengthString(400);
  (void)message.ParseFromString(bytes);  // a message that does not decode stays empty
  return message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  ClusterConfig config;
  config.machine = "torus:4x4";
  config.store = "sqlite::memory:";
  config.controller.admins = {0};
  config.controller.heartbeat_interval = 2;
  Result<std::unique_ptr<StateStore>> store = open_store(config.store);
  FUZZ_CHECK(store.ok(), store.ok() ? "" : store.error().message);
  NoAgents agents;
  Result<std::unique_ptr<Controller>> opened = Controller::open(config, **store, agents, 0, "fuzz");
  FUZZ_CHECK(opened.ok(), opened.ok() ? "" : opened.error().message);
  Controller& controller = **opened;
  const Caller admin{0, 0}, user{1000, 1000}, other{1001, 1001};
  v1::RegisterRequest hello;
  hello.set_address("fake:1");
  for (int n = 0; n < 16; ++n) hello.add_nodes("n" + std::to_string(n));
  FUZZ_CHECK(controller.register_agent(hello, admin, 0).ok(), "the first registration");

  size_t acknowledged = 0;
  Seconds now = 1;
  for (int step = 0; step < 48 && input.remaining_bytes() > 0; ++step) {
    const Caller caller = input.PickValueInArray({admin, user, other});
    now += input.ConsumeIntegralInRange(0, 4000) / 1000.0;
    int op = input.ConsumeIntegralInRange(0, 10);
    std::string what = "step " + std::to_string(step) + " op " + std::to_string(op);
    switch (op) {
      case 0: {
        if (controller.submit(decode<v1::SubmitRequest>(input).spec(), caller, now)) ++acknowledged;
        break;
      }
      case 1: {
        v1::CancelRequest request = decode<v1::CancelRequest>(input);
        std::vector<JobId> ids(request.job_ids().begin(), request.job_ids().end());
        (void)controller.cancel(ids, request.signal(), caller, now);
        break;
      }
      case 2:
        (void)controller.list_jobs(decode<v1::ListJobsRequest>(input), now);
        break;
      case 3:
        (void)controller.list_nodes(decode<v1::ListNodesRequest>(input));
        break;
      case 4:
        (void)controller.drain(decode<v1::DrainRequest>(input), caller, now);
        break;
      case 5:
        (void)controller.register_agent(decode<v1::RegisterRequest>(input), caller, now);
        break;
      case 6: {
        // A liveness round in which the agent did or did not answer (a probe failing with it),
        // then the jobs a node failure takes, held after max_requeue: a release.
        Liveness& liveness = controller.liveness();
        std::vector<std::string> agents = liveness.agents();
        bool silent = input.ConsumeBool();
        liveness.round(agents, silent ? agents : std::vector<std::string>{}, now);
        for (const std::string& agent : liveness.to_probe()) liveness.probed(agent, false, "", now);
        v1::ReleaseRequest release = decode<v1::ReleaseRequest>(input);
        (void)controller.release({release.job_ids().begin(), release.job_ids().end()}, caller, now);
        break;
      }
      case 7:
        (void)controller.report_exits(decode<v1::ExitRequest>(input), caller, now);
        break;
      case 8: {
        JobId id = input.ConsumeIntegralInRange<JobId>(-1, 20);
        int attempt = input.ConsumeIntegralInRange(-1, 4);
        Error error{"fuzz", input.PickValueInArray(
                                {Error::Code::kInvalidArgument, Error::Code::kUnavailable})};
        (void)controller.launch_failed(id, attempt, error, now);
        break;
      }
      case 9:
        (void)controller.run_pass(now);
        break;
      default:
        (void)controller.tick(now);
        break;
    }
    check_store(**store, acknowledged, what);
  }
  return 0;
}
