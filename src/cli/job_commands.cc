// The client commands of a live cluster, in Slurm's conventions: submit (sbatch/srun), queue
// (squeue), show job|node (scontrol show), cancel (scancel), nodes (sinfo), drain/resume
// (scontrol update state=drain), suspend/resume JOBID (scontrol suspend/resume). They talk to
// the controllers over gRPC; `queue --store` reads the store directly, with no controller.
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/job_rows.h"
#include "cli/live_client.h"
#include "cli/submission.h"
#include "core/hostlist.h"
#include "core/slurm_time.h"
#include "daemon/grpc_status.h"
#include "daemon/job_spec.h"
#include "daemon/node_types.h"
#include "store/state_store.h"

namespace trellis::cli {
namespace {

int report(const Error& error, std::string_view command) {
  std::cerr << "trellis " << command << ": " << error.message << "\n";
  switch (error.code) {
    case Error::Code::kInvalidArgument:
    case Error::Code::kNeverFits:
    case Error::Code::kNotFound:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

std::string state_letter_of(v1::JobState state) {
  Result<JobState> s = from_proto(state);
  return s ? std::string(trellis::state_letter(*s)) : "?";
}

Seconds now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string truncate(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width);
}

std::string format_epoch(Seconds t) {
  if (t <= 0) return "Unknown";
  std::time_t seconds = static_cast<std::time_t>(t);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

nlohmann::json job_json(const v1::JobInfo& job) {
  nlohmann::json shape = nlohmann::json::array();
  for (int e : job.spec().shape()) shape.push_back(e);
  nlohmann::json argv = nlohmann::json::array();
  for (const std::string& a : job.spec().argv()) argv.push_back(a);
  nlohmann::json out = {{"id", job.id()},
                        {"name", job.spec().name()},
                        {"user", job.user()},
                        {"uid", job.uid()},
                        {"state", state_letter_of(job.state())},
                        {"reason", job.reason()},
                        {"nodes", job.spec().nodes()},
                        {"shape", shape},
                        {"mode", job.spec().mode()},
                        {"nodelist", job.nodelist()},
                        {"time_limit", job.spec().time_limit()},
                        {"submit_time", job.submit_time()},
                        {"start_time", job.start_time()},
                        {"end_time", job.end_time()},
                        {"expected_start", job.expected_start()},
                        {"exit_code", job.exit_code()},
                        {"signal", job.signal()},
                        {"attempt", job.attempt()},
                        {"argv", argv},
                        {"output", job.output()},
                        {"seconds_frozen", job.seconds_frozen()},
                        {"partition", job.partition()},
                        {"idle", job.idle()},
                        {"admin_suspended", job.admin_suspended()},
                        {"hold", job.hold()},
                        {"node_failures", job.node_failures()},
                        {"ntasks", job.ntasks()},
                        {"distribution", job.distribution()},
                        {"mpi", job.spec().mpi()},
                        {"task_layout", job.task_layout()}};
  nlohmann::json steps = nlohmann::json::array();
  for (const v1::StepInfo& step : job.steps())
    steps.push_back({{"step", step.step()},
                     {"attempt", step.attempt()},
                     {"state", state_letter_of(step.state())},
                     {"reason", step.reason()},
                     {"nodelist", step.nodelist()},
                     {"ntasks", step.ntasks()},
                     {"exit_code", step.exit_code()},
                     {"signal", step.signal()},
                     {"start_time", step.start_time()},
                     {"end_time", step.end_time()}});
  out["steps"] = steps;
  if (job.box_shape_size() > 0) {
    out["box"] = {{"origin", std::vector<int>(job.box_origin().begin(), job.box_origin().end())},
                  {"shape", std::vector<int>(job.box_shape().begin(), job.box_shape().end())}};
  }
  return out;
}

// Seconds a job has run: from its start to its end (or now), less the time gang switches kept it
// frozen (as squeue's TIME leaves out suspended time).
Seconds run_seconds(const v1::JobInfo& job, Seconds now) {
  if (job.start_time() <= 0) return 0;
  Seconds elapsed = (job.end_time() > 0 ? job.end_time() : now) - job.start_time();
  return std::max<Seconds>(0, elapsed - job.seconds_frozen());
}

// squeue's default columns: JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON). Under a
// gang policy, PARTITION names the job's slot, the first processor of its gang partition
// ("gang:32"): the jobs of one slot take turns on the same nodes; ST is S while switched out.
void print_queue(std::ostream& out, const std::vector<v1::JobInfo>& jobs, Seconds now) {
  out << std::right << std::setw(8) << "JOBID"
      << " " << std::setw(9) << "PARTITION"
      << " " << std::setw(8) << "NAME"
      << " " << std::setw(8) << "USER"
      << " " << std::setw(2) << "ST"
      << " " << std::setw(10) << "TIME"
      << " " << std::setw(6) << "NODES"
      << " "
      << "NODELIST(REASON)\n";
  for (const JobRow& row : job_rows(jobs, /*compress_pending_arrays=*/true)) {
    const v1::JobInfo& job = *row.job;
    Seconds ran = run_seconds(job, now);
    std::string where = job.nodelist();
    if (job.state() == v1::PENDING)
      where = "(" + (job.hold().empty() ? job.reason() : "JobHeld: " + job.hold()) + ")";
    if (job.idle()) where += " (Idle)";
    if (job.admin_suspended()) where += " (Suspended)";
    std::string partition =
        job.partition() >= 0 ? "gang:" + std::to_string(job.partition()) : job.spec().partition();
    out << std::right << std::setw(8) << row.id << " " << std::setw(9) << partition << " "
        << std::setw(8) << truncate(job.spec().name(), 8) << " " << std::setw(8)
        << truncate(job.user(), 8) << " " << std::setw(2) << state_letter_of(job.state()) << " "
        << std::setw(10) << format_slurm_time(ran) << " " << std::setw(6) << job.spec().nodes()
        << " " << where << "\n";
  }
}

void print_job(std::ostream& out, const v1::JobInfo& job, Seconds now) {
  std::string command;
  for (const std::string& a : job.spec().argv()) command += (command.empty() ? "" : " ") + a;
  std::string request = std::to_string(job.spec().nodes()) + " nodes";
  if (job.spec().shape_size() > 0)
    request = format_shape(Shape(job.spec().shape().begin(), job.spec().shape().end())) +
              (job.spec().rotate() ? "" : " (no rotation)");
  out << "JobId=" << job.id() << " JobName=" << job.spec().name() << "\n"
      << "   UserId=" << job.user() << "(" << job.uid() << ") GroupId=" << job.gid() << "\n"
      << "   JobState=" << state_letter_of(job.state())
      << " Reason=" << (job.reason().empty() ? "None" : job.reason())
      << " ExitCode=" << job.exit_code() << ":" << job.signal() << " Attempt=" << job.attempt()
      << (job.node_failures() > 0 ? " NodeFailures=" + std::to_string(job.node_failures()) : "")
      << "\n"
      << (job.hold().empty() ? "" : "   Held=" + job.hold() + "\n") << "   Request=" << request
      << " Mode=" << job.spec().mode()
      << " TimeLimit=" << format_slurm_time(job.spec().time_limit()) << "\n"
      << "   SubmitTime=" << format_epoch(job.submit_time()) << " StartTime="
      << format_epoch(job.start_time() > 0 ? job.start_time() : job.expected_start())
      << " EndTime=" << format_epoch(job.end_time()) << "\n"
      << "   RunTime=" << format_slurm_time(run_seconds(job, now))
      << " FrozenTime=" << format_slurm_time(job.seconds_frozen())
      << (job.partition() >= 0 ? " GangSlot=" + std::to_string(job.partition()) : "")
      << (job.idle() ? " Idle=yes" : "") << (job.admin_suspended() ? " Suspended=admin" : "")
      << "\n"
      << "   NodeList=" << (job.nodelist().empty() ? "(null)" : job.nodelist());
  if (job.box_shape_size() > 0) {
    out << " Box=" << format_shape(Shape(job.box_shape().begin(), job.box_shape().end())) << "@(";
    for (int i = 0; i < job.box_origin_size(); ++i) out << (i ? "," : "") << job.box_origin(i);
    out << ")";
  }
  out << "\n   NumTasks=" << job.ntasks() << " Distribution=" << job.distribution()
      << " Mpi=" << (job.spec().mpi().empty() ? "default" : job.spec().mpi())
      << (job.spec().label() ? " Label=yes" : "");
  if (!job.task_layout().empty()) out << "\n   Tasks=" << job.task_layout();
  out << "\n   Command=" << command << "\n   WorkDir=" << job.spec().cwd()
      << "\n   StdOut=" << job.output() << "\n";
  // The steps the job ran itself (trellis run / srun inside it), as scontrol show step would.
  for (const v1::StepInfo& step : job.steps()) {
    std::string argv;
    for (const std::string& a : step.argv()) argv += (argv.empty() ? "" : " ") + a;
    out << "   Step=" << step.step() << " State=" << state_letter_of(step.state())
        << " ExitCode=" << step.exit_code() << ":" << step.signal() << " Attempt=" << step.attempt()
        << " NodeList=" << step.nodelist() << " NumTasks=" << step.ntasks() << " RunTime="
        << format_slurm_time(std::max<Seconds>(
               0, (step.end_time() > 0 ? step.end_time() : now) - step.start_time()))
        << (step.reason().empty() ? "" : " Reason=" + step.reason()) << "\n"
        << "      Command=" << argv << "\n";
  }
}

std::string node_state_name(v1::NodeState state) {
  switch (state) {
    case v1::IDLE:
      return "idle";
    case v1::ALLOCATED:
      return "alloc";
    case v1::MIXED:
      return "mix";
    case v1::DOWN:
      return "down";
    case v1::DRAINED:
      return "drain";
    case v1::DRAINING:
      return "drng";
    default:
      return "unknown";
  }
}

Result<std::vector<v1::JobInfo>> fetch_jobs(LiveClient& client,
                                            const v1::ListJobsRequest& request) {
  Result<v1::ListJobsReply> reply = list_jobs(client, request);
  if (!reply) return reply.error();
  return std::vector<v1::JobInfo>(reply->jobs().begin(), reply->jobs().end());
}

// --- queue --------------------------------------------------------------------------------------

struct QueueArgs {
  std::string conf;
  std::string store;
  std::vector<std::string> states;
  std::vector<int64_t> ids;
  std::string user;
  bool all = false;
  bool json = false;
};

Result<std::vector<v1::JobInfo>> jobs_from_store(const std::string& url, const JobQuery& query) {
  Result<std::unique_ptr<StateStore>> store = open_store(url, {.read_only = true});
  if (!store) return store.error();
  Result<std::string> spec = (*store)->machine_spec();
  if (!spec) return spec.error();
  Result<Machine> machine = Machine::parse(*spec);
  if (!machine) return machine.error();
  Result<std::vector<StoredJob>> jobs = (*store)->list_jobs(query);
  if (!jobs) return jobs.error();
  std::vector<v1::JobInfo> out;
  for (const StoredJob& job : *jobs) {
    out.push_back(job_info(job, machine->node_count()));
    out.back().set_admin_suspended(job.state == JobState::kSuspended);
  }
  return out;
}

int run_queue(const QueueArgs& args) {
  v1::ListJobsRequest request;
  JobQuery query;
  for (const std::string& text : args.states) {
    Result<JobState> state = parse_job_state(text);
    if (!state) return report(fail("--state: " + state.error().message), "queue");
    request.add_states(to_proto(*state));
    query.states.push_back(*state);
  }
  for (int64_t id : args.ids) {
    request.add_job_ids(id);
    query.ids.push_back(id);
  }
  if (!args.user.empty()) {
    char* end = nullptr;
    long uid = std::strtol(args.user.c_str(), &end, 10);
    if (*end != '\0' || uid < 0) {
      struct passwd entry {};
      struct passwd* found = nullptr;
      char buffer[4096];
      if (getpwnam_r(args.user.c_str(), &entry, buffer, sizeof buffer, &found) != 0 || !found)
        return report(fail("--user: no user '" + args.user + "'"), "queue");
      uid = found->pw_uid;
    }
    request.set_uid(static_cast<int>(uid));
    request.set_has_uid(true);
    query.uid = static_cast<int>(uid);
  }
  request.set_all_states(args.all);
  query.only_active = query.states.empty() && query.ids.empty() && !args.all;

  Result<std::vector<v1::JobInfo>> jobs = fail("no store or cluster");
  if (!args.store.empty()) {
    jobs = jobs_from_store(args.store, query);
  } else {
    Result<LiveClient> client = connect_to_cluster(args.conf);
    if (!client) return report(client.error(), "queue");
    jobs = fetch_jobs(*client, request);
  }
  if (!jobs) return report(jobs.error(), "queue");
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const v1::JobInfo& job : *jobs) out.push_back(job_json(job));
    std::cout << out.dump(2) << "\n";
  } else {
    print_queue(std::cout, *jobs, now_seconds());
  }
  return kExitOk;
}

// --- cancel -------------------------------------------------------------------------------------

int run_cancel(const std::string& conf, const std::vector<std::string>& texts, int signal) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), "cancel");
  Result<std::vector<int64_t>> ids = resolve_job_ids(*client, texts);
  if (!ids) return report(ids.error(), "cancel");
  v1::CancelRequest request;
  for (int64_t id : *ids) request.add_job_ids(id);
  request.set_exact_ids(true);
  request.set_signal(signal);
  v1::CancelReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Cancel(&context, request, &reply);
      });
  if (!status.ok()) return report(from_grpc(status, "cancelling"), "cancel");
  return kExitOk;
}

// --- suspend, resume (jobs) ---------------------------------------------------------------------

// Whether every argument is a job id (a positive number): `trellis resume` resumes jobs then, and
// drained nodes otherwise (a hostlist starts with a letter).
bool all_job_ids(const std::vector<std::string>& args, std::vector<int64_t>& ids) {
  ids.clear();
  for (const std::string& arg : args) {
    char* end = nullptr;
    long long id = std::strtoll(arg.c_str(), &end, 10);
    if (arg.empty() || *end != '\0' || id <= 0) return false;
    ids.push_back(id);
  }
  return !ids.empty();
}

int run_suspend(const std::string& conf, const std::vector<int64_t>& ids, bool suspend) {
  const std::string command = suspend ? "suspend" : "resume";
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), command);
  std::set<int64_t> acted;
  grpc::Status status;
  if (suspend) {
    v1::SuspendRequest request;
    for (int64_t id : ids) request.add_job_ids(id);
    v1::SuspendReply reply;
    status =
        client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Suspend(&context, request, &reply);
        });
    acted.insert(reply.suspended().begin(), reply.suspended().end());
  } else {
    v1::ResumeRequest request;
    for (int64_t id : ids) request.add_job_ids(id);
    v1::ResumeReply reply;
    status =
        client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Resume(&context, request, &reply);
        });
    acted.insert(reply.resumed().begin(), reply.resumed().end());
  }
  if (!status.ok()) return report(from_grpc(status, suspend ? "suspending" : "resuming"), command);
  // The controller leaves a job that is in the asked state already as it is.
  std::set<int64_t> told;
  for (int64_t id : ids)
    if (!acted.contains(id) && told.insert(id).second)
      std::cerr << "trellis " << command << ": job " << id
                << (suspend ? " was suspended already\n" : " was not suspended\n");
  return kExitOk;
}

int run_release(const std::string& conf, const std::vector<int64_t>& ids) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), "release");
  v1::ReleaseRequest request;
  for (int64_t id : ids) request.add_job_ids(id);
  v1::ReleaseReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Release(&context, request, &reply);
      });
  if (!status.ok()) return report(from_grpc(status, "releasing"), "release");
  std::set<int64_t> released(reply.released().begin(), reply.released().end());
  for (int64_t id : ids)
    if (!released.contains(id)) std::cerr << "trellis release: job " << id << " was not held\n";
  return kExitOk;
}

// --- nodes --------------------------------------------------------------------------------------

int run_nodes(const std::string& conf, bool json) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), "nodes");
  Result<v1::ListNodesReply> listed = list_nodes(*client, {});
  if (!listed) return report(listed.error(), "nodes");
  const v1::ListNodesReply& reply = *listed;
  if (json) {
    Result<Machine> machine = Machine::parse(reply.machine());
    Result<NodeTypes> types =
        NodeTypes::build(client->config.node_types, machine ? machine->node_count() : 0);
    if (!types) return report(types.error(), "nodes");
    nlohmann::json out = nlohmann::json::array();
    for (const v1::NodeInfo& node : reply.nodes()) {
      nlohmann::json row = {
          {"name", node.name()},
          {"index", node.index()},
          {"state", node_state_name(node.state())},
          {"jobs", std::vector<int64_t>(node.job_ids().begin(), node.job_ids().end())},
          {"agent", node.agent()},
          {"reason", node.reason()},
          {"coordinates", std::vector<int>(node.coordinates().begin(), node.coordinates().end())}};
      // What it has ([[nodetype]]) and what is free of it: what its jobs' grants leave (all of
      // it, or nothing while a job holds it whole).
      if (const NodeInventory* has = types->of(node.index())) {
        const bool free = node.job_ids_size() == 0;
        const int gpus = static_cast<int>(has->gpus.size());
        row["type"] = std::string(types->type_name(node.index()));
        row["cpus"] = has->cpus();
        row["memory_mb"] = has->memory_mb;
        row["gpus"] = gpus;
        row["free_cpus"] =
            node.alloc_known() ? has->cpus() - node.alloc_cpus() : (free ? has->cpus() : 0);
        row["free_memory_mb"] = node.alloc_known() ? has->memory_mb - node.alloc_memory_mb()
                                                   : (free ? has->memory_mb : 0);
        row["free_gpus"] = node.alloc_known() ? gpus - node.alloc_gpus() : (free ? gpus : 0);
      }
      out.push_back(std::move(row));
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  // sinfo: one line per state, the nodes hostlist-compressed.
  std::map<std::string, std::vector<NodeId>> by_state;
  int total = 0;
  for (const v1::NodeInfo& node : reply.nodes()) {
    by_state[node_state_name(node.state())].push_back(node.index());
    total = std::max(total, node.index() + 1);
  }
  Result<Machine> machine = Machine::parse(reply.machine());
  if (machine) total = machine->node_count();
  std::cout << std::left << std::setw(10) << "PARTITION" << std::setw(6) << "AVAIL" << std::setw(8)
            << "NODES" << std::setw(8) << "STATE"
            << "NODELIST\n";
  for (const auto& [state, ids] : by_state)
    std::cout << std::left << std::setw(10) << "main*" << std::setw(6) << "up" << std::setw(8)
              << ids.size() << std::setw(8) << state << format_hostlist(NodeSet::of(total, ids))
              << "\n";
  return kExitOk;
}

// --- show ---------------------------------------------------------------------------------------

int run_show(const std::string& conf, const std::string& what, const std::string& name, bool json) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), "show");
  if (what == "job") {
    char* end = nullptr;
    long long id = std::strtoll(name.c_str(), &end, 10);
    if (name.empty() || *end != '\0' || id <= 0)
      return report(fail("'" + name + "' is not a job id"), "show");
    v1::ListJobsRequest request;
    request.add_job_ids(id);
    Result<std::vector<v1::JobInfo>> jobs = fetch_jobs(*client, request);
    if (!jobs) return report(jobs.error(), "show");
    if (jobs->empty()) return report(fail(Error::Code::kNotFound, "no job " + name), "show");
    if (json)
      std::cout << job_json(jobs->front()).dump(2) << "\n";
    else
      print_job(std::cout, jobs->front(), now_seconds());
    return kExitOk;
  }
  if (what != "node") return report(fail("show what? 'job ID' or 'node NAME'"), "show");
  v1::ListNodesRequest request;
  request.set_nodelist(name);
  Result<v1::ListNodesReply> listed = list_nodes(*client, request);
  if (!listed) return report(listed.error(), "show");
  const v1::ListNodesReply& reply = *listed;
  for (const v1::NodeInfo& node : reply.nodes()) {
    std::cout << "NodeName=" << node.name() << " State=" << node_state_name(node.state())
              << " Agent=" << node.agent() << "\n   Coordinates=";
    for (int i = 0; i < node.coordinates_size(); ++i)
      std::cout << (i ? "," : "") << node.coordinates(i);
    std::cout << " Jobs=";
    for (int i = 0; i < node.job_ids_size(); ++i) std::cout << (i ? "," : "") << node.job_ids(i);
    std::cout << " LastHeartbeat=" << format_epoch(node.last_heartbeat())
              << " Reason=" << (node.reason().empty() ? "None" : node.reason()) << "\n";
  }
  return kExitOk;
}

int run_drain(const std::string& conf, const std::string& nodelist, bool resume,
              const std::string& reason) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return report(client.error(), resume ? "resume" : "drain");
  v1::DrainRequest request;
  request.set_nodelist(nodelist);
  request.set_resume(resume);
  request.set_reason(reason);
  v1::DrainReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Drain(&context, request, &reply);
      });
  if (!status.ok()) return report(from_grpc(status, resume ? "resuming" : "draining"), "drain");
  return kExitOk;
}

}  // namespace

void add_job_commands(CLI::App& app, int& status) {
  auto queue = std::make_shared<QueueArgs>();
  CLI::App* q = app.add_subcommand(
      "queue", "List jobs (as squeue): JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)");
  add_conf_option(*q, queue->conf);
  q->add_option("--store", queue->store,
                "Read this store directly (e.g. sqlite:DIR/state.db), with no controller");
  q->add_option("-t,--state", queue->states, "Only these states (PD R S CG CD F CA TO NF)")
      ->delimiter(',');
  q->add_option("-j,--jobs", queue->ids, "Only these job ids")->delimiter(',');
  q->add_option("-u,--user", queue->user, "Only this user's jobs (name or uid)");
  q->add_flag("-a,--all", queue->all, "Also jobs that have ended");
  q->add_flag("--json", queue->json, "JSON output for scripts");
  q->callback([queue, &status] { status = run_queue(*queue); });

  auto cancel_conf = std::make_shared<std::string>();
  auto cancel_ids = std::make_shared<std::vector<std::string>>();
  auto cancel_signal = std::make_shared<int>(0);
  CLI::App* c = app.add_subcommand("cancel", "Cancel jobs (as scancel): trellis cancel 12 13");
  add_conf_option(*c, *cancel_conf);
  c->add_option("-s,--signal", *cancel_signal,
                "Only send this signal number to the job's processes")
      ->check(CLI::Range(1, 64));
  c->add_option("ids", *cancel_ids,
                "Job ids: 12, 12_3 (an array's task), 12_[1-3]; an array's id "
                "cancels every task")
      ->required();
  c->callback([=, &status] { status = run_cancel(*cancel_conf, *cancel_ids, *cancel_signal); });

  auto nodes_conf = std::make_shared<std::string>();
  auto nodes_json = std::make_shared<bool>(false);
  CLI::App* n = app.add_subcommand("nodes", "List nodes by state (as sinfo)");
  add_conf_option(*n, *nodes_conf);
  n->add_flag("--json", *nodes_json, "JSON output for scripts, one entry per node");
  n->callback([=, &status] { status = run_nodes(*nodes_conf, *nodes_json); });

  auto show_conf = std::make_shared<std::string>();
  auto show_what = std::make_shared<std::string>();
  auto show_name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* sh = app.add_subcommand("show", "Show a job or nodes (as scontrol show): show job 12");
  add_conf_option(*sh, *show_conf);
  sh->add_option("what", *show_what, "job or node")
      ->required()
      ->check(CLI::IsMember({"job", "node"}));
  sh->add_option("name", *show_name, "A job id, or a node hostlist (default: every node)");
  sh->add_flag("--json", *show_json, "JSON output (jobs)");
  sh->callback([=, &status] { status = run_show(*show_conf, *show_what, *show_name, *show_json); });

  auto drain_conf = std::make_shared<std::string>();
  auto drain_nodes = std::make_shared<std::string>();
  auto drain_reason = std::make_shared<std::string>();
  CLI::App* d = app.add_subcommand("drain",
                                   "Take nodes out of service (administrators): running jobs "
                                   "finish, nothing new starts");
  add_conf_option(*d, *drain_conf);
  d->add_option("nodes", *drain_nodes, "A hostlist, e.g. n[0-7]")->required();
  d->add_option("--reason", *drain_reason, "Why (shown by show node)");
  d->callback([=, &status] {
    status = run_drain(*drain_conf, *drain_nodes, /*resume=*/false, *drain_reason);
  });

  auto suspend_conf = std::make_shared<std::string>();
  auto suspend_ids = std::make_shared<std::vector<int64_t>>();
  CLI::App* su = app.add_subcommand(
      "suspend", "Suspend running jobs (administrators; as scontrol suspend): trellis suspend 12");
  su->footer(
      "A suspended job is frozen on its nodes until `trellis resume JOBID`, and its time limit "
      "does not count meanwhile. Under a queue policy it keeps its nodes; under a gang policy it "
      "leaves the rotation and its slots go to the other jobs.");
  add_conf_option(*su, *suspend_conf);
  su->add_option("ids", *suspend_ids, "Job ids")->required();
  su->callback([=, &status] { status = run_suspend(*suspend_conf, *suspend_ids, true); });

  auto release_conf = std::make_shared<std::string>();
  auto release_ids = std::make_shared<std::vector<int64_t>>();
  CLI::App* rl = app.add_subcommand(
      "release", "Let held jobs be scheduled again (as scontrol release): trellis release 12");
  rl->footer(
      "A job requeued after node failures [controller] max_requeue times is held rather than "
      "requeued again; `trellis queue` and `trellis show job` say why. Its owner or an "
      "administrator may release it.");
  add_conf_option(*rl, *release_conf);
  rl->add_option("ids", *release_ids, "Job ids")->required();
  rl->callback([=, &status] { status = run_release(*release_conf, *release_ids); });

  // `resume` takes job ids (as scontrol resume) or one hostlist of drained nodes (as scontrol
  // update state=resume): a hostlist starts with a letter, a job id is a number.
  auto resume_conf = std::make_shared<std::string>();
  auto resume_targets = std::make_shared<std::vector<std::string>>();
  auto resume_reason = std::make_shared<std::string>();
  CLI::App* r = app.add_subcommand(
      "resume",
      "Resume suspended jobs (trellis resume 12) or put drained nodes back into service "
      "(trellis resume 'n[0-7]'); administrators");
  add_conf_option(*r, *resume_conf);
  r->add_option("targets", *resume_targets, "Job ids, or a hostlist of nodes, e.g. n[0-7]")
      ->required();
  r->add_option("--reason", *resume_reason, "Why (nodes only; shown by show node)");
  r->callback([=, &status] {
    std::vector<int64_t> ids;
    if (all_job_ids(*resume_targets, ids)) {
      status = resume_reason->empty()
                   ? run_suspend(*resume_conf, ids, false)
                   : report(fail("--reason: jobs are resumed without one"), "resume");
    } else if (resume_targets->size() == 1) {
      status = run_drain(*resume_conf, resume_targets->front(), /*resume=*/true, *resume_reason);
    } else {
      status = report(fail("give job ids (trellis resume 12 13) or one hostlist of nodes "
                           "(trellis resume 'n[0-7]')"),
                      "resume");
    }
  });
}

}  // namespace trellis::cli
