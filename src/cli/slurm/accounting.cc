#include "cli/slurm/accounting.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "cli/job_rows.h"
#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "core/hostlist_names.h"
#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "daemon/job_spec.h"
#include "topology/machine.h"

namespace trellis::cli::slurm {
namespace {

// Slurm 22.05's sacct fields, in its order (src/sacct/sacct.c), with their default widths: a
// typed name matches the first field it is a prefix of, as in sacct. Those Trellis has no value
// for are refused by name (resource usage, energy, reservations, ...).
struct FieldInfo {
  const char* name;
  int width;
  bool supported;
};
constexpr FieldInfo kFields[] = {
    {"Account", 10, true},
    {"AdminComment", 15, true},
    {"AllocCPUS", 10, true},
    {"AllocNodes", 10, true},
    {"AllocTRES", 10, true},
    {"AssocID", 7, false},
    {"AveCPU", 10, false},
    {"AveCPUFreq", 10, false},
    {"AveDiskRead", 14, false},
    {"AveDiskWrite", 14, false},
    {"AvePages", 10, false},
    {"AveRSS", 10, false},
    {"AveVMSize", 10, false},
    {"BlockID", 16, false},
    {"Cluster", 10, true},
    {"Comment", 14, true},
    {"Constraints", 19, true},
    {"ConsumedEnergy", 14, false},
    {"ConsumedEnergyRaw", 17, false},
    {"Container", 19, false},
    {"CPUTime", 10, true},
    {"CPUTimeRAW", 10, true},
    {"DBIndex", -10, false},
    {"DerivedExitCode", 15, true},
    {"Elapsed", 10, true},
    {"ElapsedRaw", 10, true},
    {"Eligible", 19, true},
    {"End", 19, true},
    {"ExitCode", 8, true},
    {"Flags", 19, true},
    {"GID", 6, true},
    {"Group", 9, true},
    {"JobID", -12, true},
    {"JobIDRaw", -12, true},
    {"JobName", 10, true},
    {"Layout", 9, false},
    {"MaxDiskRead", 12, false},
    {"MaxDiskReadNode", 15, false},
    {"MaxDiskReadTask", 15, false},
    {"MaxDiskWrite", 12, false},
    {"MaxDiskWriteNode", 16, false},
    {"MaxDiskWriteTask", 16, false},
    {"MaxPages", 8, false},
    {"MaxPagesNode", 12, false},
    {"MaxPagesTask", 14, false},
    {"MaxRSS", 10, true},
    {"MaxRSSNode", 10, true},
    {"MaxRSSTask", 10, false},
    {"MaxVMSize", 10, false},
    {"MaxVMSizeNode", 14, false},
    {"MaxVMSizeTask", 14, false},
    {"McsLabel", 12, false},
    {"MinCPU", 10, false},
    {"MinCPUNode", 10, false},
    {"MinCPUTask", 10, false},
    {"NCPUS", 10, true},
    {"NNodes", 8, true},
    {"NodeList", 15, true},
    {"NTasks", 8, true},
    {"Partition", 10, true},
    {"Priority", 10, true},
    {"QOS", 10, true},
    {"QOSRAW", 6, true},
    {"Reason", 22, true},
    {"ReqCPUFreq", 10, false},
    {"ReqCPUFreqGov", 13, false},
    {"ReqCPUFreqMax", 13, false},
    {"ReqCPUFreqMin", 13, false},
    {"ReqCPUS", 8, true},
    {"ReqMem", 10, true},
    {"ReqNodes", 8, true},
    {"ReqTRES", 10, true},
    {"Reservation", 20, false},
    {"ReservationId", 8, false},
    {"Reserved", 10, true},
    {"ResvCPU", 10, false},
    {"ResvCPURAW", 10, false},
    {"Start", 19, true},
    {"State", 10, true},
    {"Submit", 19, true},
    {"SubmitLine", 20, true},
    {"Suspended", 10, true},
    {"SystemComment", 15, true},
    {"SystemCPU", 10, true},
    {"Timelimit", 10, true},
    {"TimelimitRaw", 10, true},
    {"TotalCPU", 10, true},
    {"TRESUsageInAve", 14, false},
    {"TRESUsageInMax", 14, false},
    {"TRESUsageInMaxNode", 18, false},
    {"TRESUsageInMaxTask", 18, false},
    {"TRESUsageInMin", 14, false},
    {"TRESUsageInMinNode", 18, false},
    {"TRESUsageInMinTask", 18, false},
    {"TRESUsageInTot", 14, false},
    {"TRESUsageOutAve", 15, false},
    {"TRESUsageOutMax", 15, false},
    {"TRESUsageOutMaxNode", 19, false},
    {"TRESUsageOutMaxTask", 19, false},
    {"TRESUsageOutMin", 15, false},
    {"TRESUsageOutMinNode", 19, false},
    {"TRESUsageOutMinTask", 19, false},
    {"TRESUsageOutTot", 15, false},
    {"UID", 6, true},
    {"User", 9, true},
    {"UserCPU", 10, true},
    {"WCKey", 10, true},
    {"WCKeyID", 10, true},
    {"WorkDir", 20, true},
};

bool prefix_of(std::string_view typed, std::string_view name) {
  if (typed.size() > name.size()) return false;
  for (size_t i = 0; i < typed.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(typed[i])) !=
        std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

std::string command_of(const v1::JobInfo& job) {
  std::string command;
  for (const std::string& a : job.spec().argv()) command += (command.empty() ? "" : " ") + a;
  return command;
}

// What a job holds in all on shared nodes, from its grants; nullopt on whole nodes.
struct GrantTotals {
  int cores = 0;
  int64_t memory_mb = 0;
  int gpus = 0;
};
std::optional<GrantTotals> grant_totals(const v1::JobInfo& job) {
  if (job.grants().empty()) return std::nullopt;
  Result<std::vector<NodeGrant>> grants = decode_grants(job.grants());
  if (!grants) return std::nullopt;
  GrantTotals totals;
  for (const NodeGrant& grant : *grants) {
    totals.cores += static_cast<int>(grant.cores.size());
    totals.memory_mb += grant.memory_mb;
    totals.gpus += static_cast<int>(grant.gpus.size());
  }
  return totals;
}

// What the job holds on its first node (the batch host), when it runs on shared nodes.
std::optional<NodeGrant> first_grant(const v1::JobInfo& job) {
  if (job.grants().empty()) return std::nullopt;
  Result<std::vector<NodeGrant>> grants = decode_grants(job.grants());
  if (!grants || grants->empty()) return std::nullopt;
  return grants->front();
}

// A TRES list ("cpu=2,mem=1G,node=1,billing=2,gres/gpu=2") with its items by name, as sacct
// prints ReqTRES and AllocTRES ("billing=2,cpu=2,gres/gpu=2,mem=1G,node=1", recorded from Slurm
// 22.05 with slurmdbd), where scontrol keeps the TRES ids' order.
std::string by_name(const std::string& tres) {
  std::vector<std::string> items = split_list(tres);
  std::sort(items.begin(), items.end());
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// What step `step` of the job used (0: its own command), if it is known.
const v1::StepUsage* usage_of_step(const v1::JobInfo& job, int step) {
  for (const v1::StepUsage& used : job.usage())
    if (used.step() == step) return &used;
  return nullptr;
}

// sacct's usage fields (MaxRSS, MaxRSSNode, TotalCPU, UserCPU, SystemCPU) of a row; nullopt for
// other fields. A step's come from its tasks; the job's CPU times are the sum over its steps,
// and its MaxRSS is its own command's when that is no step of its own (a command job), blank
// otherwise (as Slurm leaves an allocation's).
std::optional<std::string> usage_field(const std::string& f, const AccountingRow& row) {
  const bool cpu = f == "TotalCPU" || f == "UserCPU" || f == "SystemCPU";
  if (!cpu && f != "MaxRSS" && f != "MaxRSSNode") return std::nullopt;
  const v1::JobInfo& job = *row.job;
  auto cpu_of = [&](const v1::StepUsage& used) {
    return f == "UserCPU"     ? used.user_usec()
           : f == "SystemCPU" ? used.system_usec()
                              : used.user_usec() + used.system_usec();
  };
  const v1::StepUsage* used = nullptr;
  if (row.step) {
    used = usage_of_step(job, row.step->step());
  } else if (row.batch_step || !job.batch()) {
    used = usage_of_step(job, 0);
  }
  if (!row.step && !row.batch_step && cpu) {
    if (job.usage().empty()) return std::string();
    int64_t total = 0;
    for (const v1::StepUsage& step : job.usage()) total += cpu_of(step);
    return cpu_time(total);
  }
  if (!used) return std::string();
  if (cpu) return cpu_time(cpu_of(*used));
  if (f == "MaxRSS") return max_rss_text(used->max_rss_kb());
  return used->max_rss_node();
}

// A field of a step the job ran itself (srun inside it): its own id, name, state, times, nodes
// and tasks; the job's user, partition and the like are blank, as in Slurm's step rows.
std::string step_field_value(const std::string& f, const v1::JobInfo& job, const v1::StepInfo& step,
                             Seconds now) {
  const std::string id = "." + std::to_string(step.step());
  const Seconds ran =
      step.start_time() > 0
          ? std::max<Seconds>(0, (step.end_time() > 0 ? step.end_time() : now) - step.start_time())
          : 0;
  int nodes = 0;
  if (Result<std::vector<std::string>> names = expand_hostlist_names(step.nodelist(), 1 << 20))
    nodes = static_cast<int>(names->size());
  if (f == "JobID") return display_id(job) + id;
  if (f == "JobIDRaw") return std::to_string(job.id()) + id;
  if (f == "JobName") {
    if (step.argv().empty()) return "";
    const std::string& program = step.argv(0);
    return program.substr(program.rfind('/') + 1);
  }
  if (f == "Cluster") return "trellis";
  if (f == "State") return state_name(step.state());
  if (f == "ExitCode")
    return std::to_string(step.exit_code()) + ":" + std::to_string(step.signal());
  if (f == "Submit" || f == "Eligible" || f == "Start") return date(step.start_time());
  if (f == "End") return date(step.end_time());
  if (f == "Elapsed") return elapsed(ran);
  if (f == "ElapsedRaw") return std::to_string(static_cast<long>(ran));
  if (f == "CPUTime") return elapsed(ran * std::max(1, step.ntasks()));
  if (f == "CPUTimeRAW") return std::to_string(static_cast<long>(ran * std::max(1, step.ntasks())));
  if (f == "NNodes" || f == "AllocNodes" || f == "ReqNodes") return std::to_string(nodes);
  if (f == "NCPUS" || f == "AllocCPUS" || f == "ReqCPUS" || f == "NTasks")
    return std::to_string(step.ntasks());
  if (f == "NodeList") return step.nodelist();
  if (f == "Reserved" || f == "Suspended") return elapsed(0);
  return "";
}

}  // namespace

Result<std::vector<v1::JobInfo>> accounting_jobs(const AccountingQuery& query,
                                                 const std::string& conf,
                                                 const std::string& store_url) {
  std::vector<v1::JobInfo> out;
  if (!store_url.empty()) {
    Result<std::unique_ptr<StateStore>> store = open_store(store_url, {.read_only = true});
    if (!store) return store.error();
    Result<std::string> spec = (*store)->machine_spec();
    if (!spec) return spec.error();
    Result<Machine> machine = Machine::parse(*spec);
    if (!machine) return machine.error();
    JobQuery q;
    q.ids = query.ids;
    q.uid = query.uid;
    for (v1::JobState s : query.states) {
      Result<JobState> state = from_proto(s);
      if (!state) return state.error();
      q.states.push_back(*state);
    }
    q.names = query.names;
    q.partitions = query.partitions;
    if (query.window_end > 0) q.submitted_by = query.window_end;
    if (query.window_start > 0) q.not_ended_before = query.window_start;
    Result<std::vector<StoredJob>> jobs = (*store)->list_jobs(q);
    if (!jobs) return jobs.error();
    std::vector<JobId> ids;
    for (const StoredJob& job : *jobs) ids.push_back(job.id);
    Result<std::map<JobId, std::vector<StepUsage>>> usage = (*store)->step_usage(ids);
    if (!usage) return usage.error();
    Result<std::set<JobId>> with_steps = (*store)->jobs_with_steps(ids);
    if (!with_steps) return with_steps.error();
    for (const StoredJob& job : *jobs) {
      v1::JobInfo info = job_info(job, machine->node_count());
      if (auto used = usage->find(job.id); used != usage->end())
        for (const StepUsage& step : used->second)
          if (step.attempt == job.attempt) *info.add_usage() = step_usage_info(step);
      if (with_steps->contains(job.id)) {
        Result<std::vector<StoredStep>> steps = (*store)->list_steps(job.id);
        if (!steps) return steps.error();
        for (const StoredStep& step : *steps)
          *info.add_steps() = step_info(step, machine->node_count());
      }
      out.push_back(std::move(info));
    }
    return out;
  }
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return client.error();
  v1::ListJobsRequest request;
  for (int64_t id : query.ids) request.add_job_ids(id);
  if (query.uid) {
    request.set_uid(*query.uid);
    request.set_has_uid(true);
  }
  for (v1::JobState s : query.states) request.add_states(s);
  for (const std::string& n : query.names) request.add_names(n);
  for (const std::string& p : query.partitions) request.add_partitions(p);
  request.set_window_start(query.window_start);
  request.set_window_end(query.window_end);
  request.set_all_states(true);
  request.set_accounting(true);
  Result<v1::ListJobsReply> reply = list_jobs(*client, request);
  if (!reply) return reply.error();
  out.assign(reply->jobs().begin(), reply->jobs().end());
  return out;
}

std::vector<AccountingRow> accounting_rows(const std::vector<v1::JobInfo>& jobs, bool steps) {
  std::vector<AccountingRow> rows;
  for (const v1::JobInfo& job : jobs) {
    rows.push_back({&job, false, nullptr});
    if (!steps) continue;
    // A batch job's script is its "batch" step, on its first node, once it has started.
    if (job.batch() && job.start_time() > 0) rows.push_back({&job, true, nullptr});
    // Then the steps of its current attempt, by id.
    for (const v1::StepInfo& step : job.steps())
      if (step.attempt() == job.attempt()) rows.push_back({&job, false, &step});
  }
  return rows;
}

Result<std::vector<PrintField>> parse_fields(const std::string& format) {
  std::vector<PrintField> out;
  for (std::string item : split_list(format)) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.erase(item.begin());
    std::optional<int> width;
    if (size_t percent = item.find('%'); percent != std::string::npos) {
      width = std::atoi(item.c_str() + percent + 1);
      item.resize(percent);
    }
    if (item.empty()) continue;
    const FieldInfo* found = nullptr;
    for (const FieldInfo& f : kFields)
      if (prefix_of(item, f.name)) {
        found = &f;
        break;
      }
    if (!found) return fail("Invalid field requested: \"" + item + "\"");
    if (!found->supported)
      return fail("field \"" + std::string(found->name) +
                  "\" is not supported by Trellis (no value is kept for it)");
    out.push_back({found->name, width ? *width : found->width});
  }
  if (out.empty()) return fail("no fields in --format '" + format + "'");
  return out;
}

std::string field_value(const std::string& field, const AccountingRow& row, Seconds now) {
  if (std::optional<std::string> used = usage_field(field, row)) return *used;
  if (row.step) return step_field_value(field, *row.job, *row.step, now);
  const v1::JobInfo& job = *row.job;
  const bool step = row.batch_step;
  const int nodes = job.spec().nodes();
  const bool started = job.start_time() > 0;
  auto first_node = [&] {
    const std::string& list = job.nodelist();
    size_t open = list.find('[');
    if (open == std::string::npos) return list.substr(0, list.find(','));
    size_t end = list.find_first_of("-,]", open);
    return list.substr(0, open) + list.substr(open + 1, end - open - 1);
  };
  const std::string f = field;
  if (f == "JobID") return display_id(job) + (step ? ".batch" : "");
  if (f == "JobIDRaw") return std::to_string(job.id()) + (step ? ".batch" : "");
  if (f == "JobName") return step ? "batch" : job.spec().name();
  if (f == "User") return step ? "" : job.user();
  if (f == "UID") return step ? "" : std::to_string(job.uid());
  if (f == "Group") return step ? "" : group_name(job.gid());
  if (f == "GID") return step ? "" : std::to_string(job.gid());
  if (f == "Account") return job.spec().account();
  if (f == "AdminComment" || f == "Comment" || f == "Constraints" || f == "SystemComment" ||
      f == "WCKey" || f == "ReqMem")
    return "";
  if (f == "QOS") return step ? "" : "normal";
  if (f == "QOSRAW" || f == "WCKeyID") return step ? "" : "0";
  if (f == "Cluster") return "trellis";
  if (f == "Partition") return step ? "" : job.spec().partition();
  if (f == "State") return state_name(job.state());
  if (f == "ExitCode") return exit_code(job);
  if (f == "DerivedExitCode") return step ? "" : "0:0";
  if (f == "Reason") return step ? "" : reason(job);
  if (f == "Submit") return date(job.submit_time());
  if (f == "Eligible") return step ? date(job.start_time()) : date(job.submit_time());
  if (f == "Start") return date(job.start_time());
  if (f == "End") return date(job.end_time());
  if (f == "Elapsed") return elapsed(run_seconds(job, now));
  if (f == "ElapsedRaw") return std::to_string(static_cast<long>(run_seconds(job, now)));
  if (f == "Suspended") return elapsed(job.seconds_frozen());
  if (f == "Reserved") return elapsed(started ? job.start_time() - job.submit_time() : 0);
  if (f == "CPUTime") return elapsed(run_seconds(job, now) * (step ? 1 : nodes));
  if (f == "CPUTimeRAW")
    return std::to_string(static_cast<long>(run_seconds(job, now) * (step ? 1 : nodes)));
  if (f == "Timelimit") return step ? "" : time_limit(job.spec().time_limit(), elapsed);
  if (f == "TimelimitRaw")
    return step ? ""
           : job.spec().time_limit() > 0
               ? std::to_string(static_cast<long>(job.spec().time_limit() / 60))
               : "UNLIMITED";
  if (f == "NNodes" || f == "AllocNodes") {
    if (step) return "1";
    return f == "AllocNodes" && !started ? "0" : std::to_string(nodes);
  }
  if (f == "ReqNodes") return std::to_string(step ? 1 : nodes);
  // On shared nodes the job holds what its grants say (core/node_grant.h).
  const std::optional<GrantTotals> held = grant_totals(job);
  // The batch step holds what the job holds on its first node, where the script runs.
  const std::optional<NodeGrant> batch_held = step ? first_grant(job) : std::nullopt;
  if (f == "NCPUS" || f == "AllocCPUS") {
    if (batch_held) return std::to_string(batch_held->cores.size());
    if (step) return "1";
    if (started && held) return std::to_string(held->cores);
    return !started ? "0" : std::to_string(nodes);
  }
  if (f == "ReqCPUS") return std::to_string(step ? 1 : job_cpus(job));
  if (f == "NTasks") return step ? "1" : "";
  if (f == "NodeList") {
    if (!started && job.nodelist().empty()) return "None assigned";
    return step ? first_node() : job.nodelist();
  }
  if (f == "AllocTRES") {
    if (!started) return "";
    if (held && !step) return by_name(job_tres(job, /*allocated=*/true));
    if (batch_held) {  // as Slurm's batch step: no billing ("cpu=2,gres/gpu=2,mem=1G,node=1")
      std::string tres = "cpu=" + std::to_string(batch_held->cores.size());
      if (batch_held->memory_mb > 0) tres += ",mem=" + format_memory_mb(batch_held->memory_mb);
      tres += ",node=1";
      if (!batch_held->gpus.empty()) tres += ",gres/gpu=" + std::to_string(batch_held->gpus.size());
      return by_name(tres);
    }
    int n = step ? 1 : nodes;
    return by_name("cpu=" + std::to_string(n) + ",node=" + std::to_string(n) +
                   (step ? "" : ",billing=" + std::to_string(n)));
  }
  if (f == "ReqTRES") {
    if (step) return "";
    if (std::string asked = job_tres(job, /*allocated=*/false); !asked.empty())
      return by_name(asked);
    return by_name("cpu=" + std::to_string(nodes) + ",node=" + std::to_string(nodes) +
                   ",billing=" + std::to_string(nodes));
  }
  if (f == "Priority") return step ? "" : "1";
  if (f == "Flags") return step ? "" : "SchedMain";
  if (f == "WorkDir") return step ? "" : job.spec().cwd();
  if (f == "SubmitLine") return step ? "" : command_of(job);
  return "";
}

}  // namespace trellis::cli::slurm
