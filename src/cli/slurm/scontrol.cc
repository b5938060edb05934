// scontrol: show job|jobid|node|partition|config as Slurm's Key=Value lines (-o: one line each),
// and suspend/resume of jobs.
#include <getopt.h>
#include <unistd.h>

#include <iostream>
#include <set>
#include <sstream>

#include "cli/job_rows.h"
#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_format.h"
#include "cli/slurm/slurm_help.h"
#include "core/dependency.h"
#include "core/hostlist.h"
#include "daemon/grpc_status.h"
#include "daemon/node_types.h"
#include "topology/machine.h"

namespace trellis::cli::slurm {
namespace {

const std::vector<LongOption> kOptions = {
    {"details", no_argument, 'd', nullptr, "equivalent to \"details\" command"},
    {"oneliner", no_argument, 'o', nullptr, "equivalent to \"oneliner\" command"},
    {"all", no_argument, 'a', nullptr, "equivalent to \"all\" command"},
    {"quiet", no_argument, 'Q', nullptr, "equivalent to \"quiet\" command"},
    {"verbose", no_argument, 'v', nullptr, "equivalent to \"verbose\" command"},
    {"clusters", required_argument, 'M'},
};

// "afterok:12(unfulfilled),singleton(unfulfilled)", as scontrol shows a pending dependency.
std::string dependency_text(const v1::JobInfo& job) {
  if (job.spec().dependency().empty()) return "(null)";
  Result<Dependency> parsed = parse_dependency(job.spec().dependency());
  if (!parsed) return job.spec().dependency();
  std::string status =
      job.reason().starts_with("DependencyNeverSatisfied") ? "(failed)" : "(unfulfilled)";
  std::string out;
  for (const DependencyTerm& term : parsed->terms) {
    auto add = [&](std::string item) {
      if (!out.empty()) out += parsed->any ? "?" : ",";
      out += item + status;
    };
    if (term.targets.empty()) add(std::string(to_string(term.kind)));
    for (const DependencyTarget& t : term.targets) {
      std::string item(to_string(term.kind));
      item += ':';
      item += std::to_string(t.job);
      if (t.task >= 0) {
        item += '_';
        item += std::to_string(t.task);
      }
      add(item);
    }
  }
  return out;
}

std::string first_host(const std::string& nodelist) {
  size_t open = nodelist.find('[');
  if (open == std::string::npos) return nodelist.substr(0, nodelist.find(','));
  size_t end = nodelist.find_first_of("-,]", open);
  return nodelist.substr(0, open) + nodelist.substr(open + 1, end - open - 1);
}

// scontrol show job, field for field as Slurm 22.05 prints it (tests/golden/slurm/scontrol-1.txt).
std::string show_job(const v1::JobInfo& job, Seconds now, bool details) {
  const v1::JobSpec& spec = job.spec();
  const bool started = job.start_time() > 0;
  const int nodes = spec.nodes();
  std::ostringstream out;
  out << "JobId=" << job.id();
  if (job.array_job_id() != 0) {
    out << " ArrayJobId=" << job.array_job_id() << " ArrayTaskId=" << job.array_task_id();
    if (job.array_limit() > 0) out << " ArrayTaskThrottle=" << job.array_limit();
  }
  out << " JobName=" << spec.name() << "\n";
  out << "   UserId=" << job.user() << "(" << job.uid() << ") GroupId=" << group_name(job.gid())
      << "(" << job.gid() << ") MCS_label=N/A\n";
  out << "   Priority=1 Nice=0 Account=" << (spec.account().empty() ? "(null)" : spec.account())
      << " QOS=" << job_qos(job) << "\n";
  out << "   JobState=" << state_name(job.state()) << " Reason=" << reason(job)
      << " Dependency=" << dependency_text(job) << "\n";
  out << "   Requeue=1 Restarts=" << std::max(0, job.attempt() - 1)
      << " BatchFlag=" << (job.batch() ? 1 : 0) << " Reboot=0 ExitCode=" << exit_code(job) << "\n";
  if (details) out << "   DerivedExitCode=0:0\n";
  out << "   RunTime=" << elapsed(run_seconds(job, now))
      << " TimeLimit=" << time_limit(spec.time_limit(), elapsed) << " TimeMin=N/A\n";
  const bool eligible = job.state() != v1::PENDING || job.reason() == "Resources" ||
                        job.reason() == "Priority" || started;
  out << "   SubmitTime=" << date(job.submit_time())
      << " EligibleTime=" << (eligible ? date(job.submit_time()) : "Unknown") << "\n";
  out << "   AccrueTime=" << (eligible ? date(job.submit_time()) : "Unknown") << "\n";
  out << "   StartTime=" << date(started ? job.start_time() : job.expected_start())
      << " EndTime=" << date(job.end_time()) << " Deadline=N/A\n";
  out << "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=" << date(job.submit_time())
      << " Scheduler=Main\n";
  out << "   Partition=" << spec.partition() << " AllocNode:Sid=(null):0\n";
  out << "   ReqNodeList=(null) ExcNodeList=(null)\n";
  out << "   NodeList=" << job.nodelist() << "\n";
  if (started && !job.nodelist().empty())
    out << "   BatchHost=" << first_host(job.nodelist()) << "\n";
  // Cores, memory and GPUs as select/cons_tres counts them: what the grants hold once it runs
  // on shared nodes, else what it asked; a job on whole featureless nodes as select/linear.
  const ResourceRequest asked = job_resources(job);
  std::string tres = job_tres(job, /*allocated=*/started);
  if (tres.empty()) tres = job_tres(job, /*allocated=*/false);
  if (tres.empty()) {
    out << "   NumNodes=" << nodes << " NumCPUs=" << nodes << " NumTasks=" << nodes
        << " CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n";
    out << "   TRES=cpu=" << nodes << ",node=" << nodes << ",billing=" << nodes << "\n";
  } else {
    const std::string cpus = tres.substr(4, tres.find(',') - 4);
    out << "   NumNodes=" << nodes << " NumCPUs=" << cpus
        << " NumTasks=" << std::max(job.ntasks(), nodes)
        << " CPUs/Task=" << std::max(asked.cpus_per_task, 1) << " ReqB:S:C:T=0:0:*:*\n";
    out << "   TRES=" << tres << "\n";
  }
  out << "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n";
  const std::string memory =
      asked.mem_per_cpu_mb > 0    ? "MinMemoryCPU=" + format_memory_mb(asked.mem_per_cpu_mb)
      : asked.mem_per_node_mb > 0 ? "MinMemoryNode=" + format_memory_mb(asked.mem_per_node_mb)
                                  : std::string("MinMemoryNode=0");
  out << "   MinCPUsNode=" << std::max(asked.cpus_per_task, 1) << " " << memory
      << " MinTmpDiskNode=0\n";
  out << "   Features=(null) DelayBoot=00:00:00\n";
  out << "   OverSubscribe=" << (spec.share() ? "YES" : "NO")
      << " Contiguous=0 Licenses=(null) Network=(null)\n";
  std::string command = spec.argv_size() > 0 ? spec.argv(0) : "(null)";
  if (command == "(wrap)") command = "(null)";
  out << "   Command=" << command << "\n";
  out << "   WorkDir=" << spec.cwd() << "\n";
  std::string stdout_path = job.output();
  std::string stderr_path = spec.error().empty() ? stdout_path : spec.error();
  out << "   StdErr=" << stderr_path << "\n";
  out << "   StdIn=/dev/null\n";
  out << "   StdOut=" << stdout_path << "\n";
  out << "   Power=\n";
  // The GPUs by how they were asked, each on a line of its own after Power=, as Slurm 22.05.
  for (const auto& [key, value] : {std::pair{"TresPerJob", job_tres_per_job(job)},
                                   std::pair{"TresPerNode", job_tres_per_node(job)},
                                   std::pair{"TresPerTask", job_tres_per_task(job)}})
    if (value != "N/A") out << "   " << key << "=" << value << "\n";
  out << "   \n\n";
  return out.str();
}

std::string node_state(v1::NodeState s) {
  switch (s) {
    case v1::IDLE:
      return "IDLE";
    case v1::ALLOCATED:
      return "ALLOCATED";
    case v1::MIXED:
      return "MIXED";
    case v1::DOWN:
      return "DOWN";
    case v1::DRAINED:
      return "IDLE+DRAIN";
    case v1::DRAINING:
      return "ALLOCATED+DRAIN";
    default:
      return "UNKNOWN";
  }
}

std::string one_line(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    line = line.substr(first);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += (out.empty() ? "" : " ") + line;
  }
  return out + "\n";
}

int show(LiveClient& client, const std::vector<std::string>& words, bool details, bool oneliner) {
  const std::string what = words.size() > 1 ? words[1] : "";
  const std::string name = words.size() > 2 ? words[2] : "";
  const Seconds now = now_seconds();
  auto emit = [&](const std::string& text) { std::cout << (oneliner ? one_line(text) : text); };
  if (what == "job" || what == "jobs" || what == "jobid") {
    v1::ListJobsRequest request;
    if (!name.empty()) {
      Result<std::vector<int64_t>> ids = resolve_job_ids(client, {name});
      if (!ids) return report_error("scontrol", ids.error());
      for (int64_t id : *ids) request.add_job_ids(id);
      request.set_exact_ids(true);
    }
    request.set_all_states(true);
    Result<v1::ListJobsReply> reply = list_jobs(client, request);
    if (!reply) return report_error("scontrol", reply.error());
    if (reply->jobs_size() == 0) {
      if (name.empty()) {
        std::cout << "No jobs in the system\n";
        return 0;
      }
      std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    for (const v1::JobInfo& job : reply->jobs()) emit(show_job(job, now, details));
    return 0;
  }
  if (what == "node" || what == "nodes") {
    v1::ListNodesRequest request;
    request.set_nodelist(name);
    Result<v1::ListNodesReply> reply = list_nodes(client, request);
    if (!reply) return report_error("scontrol", reply.error());
    std::vector<PartitionConfig> partitions = cluster_partitions(client.config);
    Result<Machine> machine = Machine::parse(reply->machine());
    const int total = machine ? machine->node_count() : reply->nodes_size();
    Result<NodeTypes> types = NodeTypes::build(client.config.node_types, total);
    if (!types) return report_error("scontrol", types.error());
    for (const v1::NodeInfo& node : reply->nodes()) {
      std::string in;
      for (const PartitionConfig& p : partitions) {
        Result<NodeSet> members = p.nodes.empty() ? Result<NodeSet>(NodeSet::all(total))
                                                  : parse_hostlist(p.nodes, total, "n");
        if (members && node.index() >= 0 && node.index() < total && members->test(node.index()))
          in += (in.empty() ? "" : ",") + p.name;
      }
      // What the node has ([[nodetype]]); a featureless node is one CPU and 1 MiB, as a Slurm
      // node with no configuration is.
      const NodeInventory* has = types->of(node.index());
      const NodeInventory plain;
      const NodeInventory& inventory = has ? *has : plain;
      const int cpus = inventory.cpus();
      const int64_t memory = has ? inventory.memory_mb : 1;
      // What its jobs hold: from their grants on shared nodes, else all of it while in use.
      const bool in_use = node.job_ids_size() > 0;
      const int alloc_cpus = node.alloc_known() ? node.alloc_cpus() : (in_use ? cpus : 0);
      const int64_t alloc_memory =
          node.alloc_known() ? node.alloc_memory_mb() : (in_use ? memory : 0);
      const int alloc_gpus = node.alloc_known()
                                 ? node.alloc_gpus()
                                 : (in_use ? static_cast<int>(inventory.gpus.size()) : 0);
      std::string features;
      for (const std::string& f : inventory.features) features += (features.empty() ? "" : ",") + f;
      if (features.empty()) features = "(null)";
      std::string configured = "cpu=" + std::to_string(cpus) + ",mem=" + format_memory_mb(memory) +
                               ",billing=" + std::to_string(cpus);
      if (!inventory.gpus.empty())
        configured += ",gres/gpu=" + std::to_string(inventory.gpus.size());
      std::ostringstream out;
      out << "NodeName=" << node.name()
          << " Arch=x86_64 CoresPerSocket=" << inventory.cores_per_socket << " \n";
      out << "   CPUAlloc=" << alloc_cpus << " CPUEfctv=" << cpus << " CPUTot=" << cpus << "\n";
      out << "   AvailableFeatures=" << features << "\n";
      out << "   ActiveFeatures=" << features << "\n";
      out << "   Gres=" << gres_text(inventory) << "\n";
      out << "   RealMemory=" << memory << " AllocMem=" << alloc_memory
          << " FreeMem=N/A Sockets=" << inventory.sockets << " Boards=1\n";
      out << "   State=" << node_state(node.state())
          << " ThreadsPerCore=" << inventory.threads_per_core << " TmpDisk=0 Weight=1"
          << " Owner=N/A MCS_label=N/A\n";
      out << "   Partitions=" << in << " \n";
      out << "   LastBusyTime=" << date(node.last_heartbeat()) << "\n";
      out << "   CfgTRES=" << configured << "\n";
      // What is held: on typed nodes as select/cons_tres says it, without billing
      // ("cpu=1,mem=100M"); on featureless ones as select/linear, the node's whole TRES.
      std::string allocated = !node.alloc_known() && in_use ? configured : "";
      if (node.alloc_known() && alloc_cpus > 0) {
        allocated = "cpu=" + std::to_string(alloc_cpus);
        if (alloc_memory > 0) allocated += ",mem=" + format_memory_mb(alloc_memory);
        if (alloc_gpus > 0) allocated += ",gres/gpu=" + std::to_string(alloc_gpus);
      }
      out << "   AllocTRES=" << allocated << "\n";
      if (!node.reason().empty()) out << "   Reason=" << node.reason() << "\n";
      out << "\n";
      emit(out.str());
    }
    return 0;
  }
  if (what == "partition" || what == "partitions") {
    for (const PartitionConfig& p : cluster_partitions(client.config)) {
      if (!name.empty() && p.name != name) continue;
      std::ostringstream out;
      out << "PartitionName=" << p.name << "\n";
      out << "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n";
      out << "   AllocNodes=ALL Default=" << (p.is_default ? "YES" : "NO") << " QoS=N/A\n";
      out << "   DefaultTime=" << (p.default_time > 0 ? elapsed(p.default_time) : "NONE")
          << " DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n";
      out << "   MaxNodes=UNLIMITED MaxTime="
          << (p.max_time > 0 ? elapsed(p.max_time) : "UNLIMITED")
          << " MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n";
      out << "   Nodes=" << (p.nodes.empty() ? "ALL" : p.nodes) << "\n";
      out << "   State=UP\n\n";
      emit(out.str());
    }
    return 0;
  }
  if (what == "config") {
    const ClusterConfig& c = client.config;
    std::ostringstream out;
    out << "Configuration data as of " << date(now) << "\n";
    auto line = [&](const std::string& key, const std::string& value) {
      std::string padded = key;
      if (padded.size() < 23) padded.resize(23, ' ');
      out << padded << " = " << value << "\n";
    };
    line("AccountingStorageType", "accounting_storage/trellis");
    line("ClusterName", "trellis");
    line("MaxArraySize", std::to_string(c.controller.max_array_size));
    line("SchedulerType", "sched/" + c.controller.policy);
    line("SelectType", "select/" + (c.controller.allocator.empty() ? std::string("default")
                                                                   : c.controller.allocator));
    line("SLURM_CONF", "(null)");
    line("SLURM_VERSION", "22.05.8 (Trellis)");
    line("SlurmctldHost[0]", c.controllers.empty() ? "(null)" : c.controllers.front());
    line("TrellisMachine", c.machine);
    out << "\nSlurmctld(primary) at " << (c.controllers.empty() ? "" : c.controllers.front())
        << " is UP\n";
    std::cout << out.str();
    return 0;
  }
  return report_error("scontrol", fail("show '" + what +
                                       "' is not supported by Trellis (job, node, partition, "
                                       "config)"));
}

}  // namespace

int scontrol_main(const std::vector<std::string>& args) {
  static const CommandHelp help{
      "scontrol",
      "[OPTIONS] COMMAND [ARGS...]",
      kOptions,
      {.h_is_help = true, .options_end_at_command = true},
      "Commands: show job [ID], show node [NAME], show partition [NAME], show config; "
      "suspend ID[,ID...]; resume ID[,ID...]; release ID[,ID...]. Job ids may be an array's "
      "(12, 12_3)."};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "+doaQvM:", kOptions);
  if (!parsed) return report_error("scontrol", parsed.error());
  int details = 0;
  bool oneliner = false;
  for (const Parsed& o : parsed->options) {
    if (o.id == 'd')
      ++details;
    else if (o.id == 'o')
      oneliner = true;
    else if (o.id == 'M')
      return report_error("scontrol", fail("option '-M' is not supported by Trellis"));
  }
  std::vector<std::string> words = parsed->rest;
  // Options may follow the command too ("scontrol show jobid -dd 12").
  std::vector<std::string> kept;
  for (const std::string& w : words) {
    if (w == "-d" || w == "--details")
      ++details;
    else if (w == "-dd")
      details += 2;
    else if (w == "-o" || w == "--oneliner")
      oneliner = true;
    else
      kept.push_back(w);
  }
  words = kept;
  if (words.empty())
    return report_error("scontrol", fail("no command (e.g. scontrol show job 12)"));
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("scontrol", client.error());
  const std::string& command = words.front();
  if (command == "show") return show(*client, words, details > 0, oneliner);
  if (command == "suspend" || command == "resume") {
    if (words.size() < 2) return report_error("scontrol", fail(command + ": give job ids"));
    Result<std::vector<int64_t>> ids = resolve_job_ids(*client, split_list(words[1]));
    if (!ids) return report_error("scontrol", ids.error());
    grpc::Status status;
    if (command == "suspend") {
      v1::SuspendRequest request;
      for (int64_t id : *ids) request.add_job_ids(id);
      v1::SuspendReply reply;
      status = client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
        return stub.Suspend(&c, request, &reply);
      });
    } else {
      v1::ResumeRequest request;
      for (int64_t id : *ids) request.add_job_ids(id);
      v1::ResumeReply reply;
      status = client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
        return stub.Resume(&c, request, &reply);
      });
    }
    if (!status.ok()) return report_error("scontrol", from_grpc(status, command));
    return 0;
  }
  if (command == "release") {
    // Lets held jobs be scheduled again; one that was not held is said so, as Slurm does.
    if (words.size() < 2) return report_error("scontrol", fail("release: give job ids"));
    Result<std::vector<int64_t>> ids = resolve_job_ids(*client, split_list(words[1]));
    if (!ids) return report_error("scontrol", ids.error());
    v1::ReleaseRequest request;
    for (int64_t id : *ids) request.add_job_ids(id);
    v1::ReleaseReply reply;
    grpc::Status status =
        client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
          return stub.Release(&c, request, &reply);
        });
    if (!status.ok()) return report_error("scontrol", from_grpc(status, command));
    std::set<int64_t> released(reply.released().begin(), reply.released().end());
    int code = 0;
    for (int64_t id : *ids)
      if (!released.contains(id)) {
        std::cerr << "scontrol: error: job " << id << " is not held\n";
        code = 1;
      }
    return code;
  }
  return report_error("scontrol", fail("'" + command +
                                       "' is not supported by Trellis (show, suspend, resume, "
                                       "release)"));
}

}  // namespace trellis::cli::slurm
