#include "cli/submission.h"

#include <getopt.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "core/batch_directives.h"
#include "core/resource_request.h"
#include "core/slurm_time.h"
#include "core/task_layout.h"
#include "daemon/grpc_status.h"
#include "daemon/job_spec.h"
#include "store/state_store.h"

extern char** environ;

namespace trellis::cli {
namespace {

// Long-only options' ids (above any character).
enum LongOnly {
  kWrap = 256,
  kParsable,
  kExport,
  kKillOnInvalidDep,
  kShape,
  kMode,
  kNoRotate,
  kEnv,
  kNtasksPerNode,
  kMpi,
  kLabel,
  kIgnoredWithArgument,
  kIgnoredOptionalArgument,
  kIgnoredFlag,
  kUnsupported,
  kUnsupportedOptionalArgument,
  kResource,  // an option of the job's resources: core/resource_request.h reads its value
};

// sbatch's options, with what Trellis does with each and what `sbatch --help` says of it (an
// option with no help text is one Trellis refuses). getopt_long matches unique prefixes.
const std::vector<slurm::LongOption> kOptions = {
    {"job-name", required_argument, 'J', "jobname", "name of job"},
    {"output", required_argument, 'o', "out",
     "file for batch script's standard output (%j: job id)"},
    {"error", required_argument, 'e', "err", "file for batch script's standard error"},
    {"chdir", required_argument, 'D', "directory", "set working directory for batch script"},
    {"workdir", required_argument, 'D'},
    {"partition", required_argument, 'p', "partition", "partition requested"},
    {"time", required_argument, 't', "minutes", "time limit ([D-]HH:MM:SS, MM, MM:SS, ...)"},
    {"nodes", required_argument, 'N', "N", "number of nodes on which to run (N = min[-max])"},
    {"array", required_argument, 'a', "indexes", "job array index values (1-10, 1,3,5, 0-9:2%2)"},
    {"dependency", required_argument, 'd', "type:jobid",
     "defer job until condition on jobid is satisfied (after, afterok, afternotok, afterany, "
     "singleton; ',' all, '?' any)"},
    {"kill-on-invalid-dep", required_argument, kKillOnInvalidDep, "yes|no",
     "cancel the job if its dependency can never be satisfied"},
    {"wrap", required_argument, kWrap, "command string",
     "wrap command string in a sh script and submit"},
    {"parsable", no_argument, kParsable, nullptr, "outputs only the jobid"},
    {"wait", no_argument, 'W', nullptr, "wait for completion of submitted job"},
    {"export", required_argument, kExport, "names",
     "environment variables to export: ALL (default), NONE, or NAME[=VALUE],..."},
    {"oversubscribe", no_argument, 's', nullptr,
     "the job may share nodes (their cores, or gang time-sharing)"},
    // Trellis's own.
    {"shape", required_argument, kShape, "AxBxC", "a box of nodes on a mesh or torus (Trellis)"},
    {"mode", required_argument, kMode, "torus|mesh|any",
     "how the box may lie: across the wrap-around, not, or any nodes (Trellis)"},
    {"no-rotate", no_argument, kNoRotate, nullptr,
     "the shape's axes may not be permuted (Trellis)"},
    {"share", no_argument, 's', nullptr, "the same as --oversubscribe (Trellis)"},
    {"env", required_argument, kEnv, "NAME=VALUE", "one more variable for the job (Trellis)"},
    {"mpi", required_argument, kMpi, "type",
     "how ranks wire up: auto (from the program), pmi1, pmix, none"},
    {"label", no_argument, kLabel, nullptr, "prepend the rank to each line of the tasks' output"},
    // The job's tasks (ranks, core/task_layout.h), laid out as srun would.
    {"ntasks", required_argument, 'n', "ntasks", "number of tasks to run"},
    {"ntasks-per-node", required_argument, kNtasksPerNode, "n",
     "number of tasks to invoke on each node"},
    {"distribution", required_argument, 'm', "type",
     "distribution method for processes to nodes (block, cyclic)"},
    // Cores, memory and GPUs (core/resource_request.h's apply_resource_option reads them).
    {"cpus-per-task", required_argument, 'c', "ncpus", "number of cpus required per task"},
    {"mem", required_argument, kResource, "MB",
     "minimum amount of real memory per node (K, M, G, T; 0 = all of it)"},
    {"mem-per-cpu", required_argument, kResource, "MB",
     "maximum amount of real memory per allocated cpu required by the job"},
    {"mem-per-gpu", required_argument, kResource, "MB", "real memory required per allocated GPU"},
    {"gres", required_argument, kResource, "list",
     "required generic resources per node (gpu[:type]:count,name:count)"},
    {"gpus", required_argument, 'G', "n", "count of GPUs required for the job ([type:]n)"},
    {"gpus-per-node", required_argument, kResource, "n",
     "number of GPUs required per allocated node ([type:]n)"},
    {"gpus-per-task", required_argument, kResource, "n",
     "number of GPUs required per spawned task ([type:]n)"},
    {"cpus-per-gpu", required_argument, kResource, "n",
     "number of CPUs required per allocated GPU"},
    {"exclusive", optional_argument, kResource, "user",
     "allocate nodes in exclusive mode (=user: shared only with the same user's jobs)"},
    {"constraint", required_argument, 'C', "list", "specify a list of constraints (a&b, a|b)"},
    {"account", required_argument, 'A', "name",
     "charge job to specified account (default: the user's default account)"},
    // Accepted, with no meaning here: there is no mail.
    {"threads-per-core", required_argument, kIgnoredWithArgument, "threads", "accepted, no effect"},
    {"hint", required_argument, kIgnoredWithArgument, "hint", "accepted, no effect"},
    {"tmp", required_argument, kIgnoredWithArgument, "MB", "accepted, no effect"},
    {"mail-type", required_argument, kIgnoredWithArgument, "type", "accepted, no effect (no mail)"},
    {"mail-user", required_argument, kIgnoredWithArgument, "user", "accepted, no effect (no mail)"},
    {"comment", required_argument, kIgnoredWithArgument, "name", "accepted, no effect"},
    {"qos", required_argument, 'q', "qos", "quality of service (recorded; no effect yet)"},
    {"get-user-env", optional_argument, kIgnoredOptionalArgument, nullptr, "accepted, no effect"},
    {"propagate", optional_argument, kIgnoredOptionalArgument, nullptr, "accepted, no effect"},
    {"requeue", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"no-requeue", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"quiet", no_argument, 'Q', nullptr, "quiet mode (suppress informational messages)"},
    {"verbose", no_argument, 'v', nullptr, "verbose mode (multiple -v's increase verbosity)"},
    // sbatch's, not supported: an error names them.
    {"hold", no_argument, 'H'},
    {"begin", required_argument, kUnsupported},
    {"nodelist", required_argument, 'w'},
    {"exclude", required_argument, 'x'},
    {"input", required_argument, 'i'},
    {"signal", required_argument, kUnsupported},
    {"test-only", no_argument, kUnsupported},
    {"uid", required_argument, kUnsupported},
    {"gid", required_argument, kUnsupported},
    {"clusters", required_argument, 'M'},
    {"deadline", required_argument, kUnsupported},
    {"nice", optional_argument, kUnsupportedOptionalArgument},
    {"priority", required_argument, kUnsupported},
    {"no-kill", optional_argument, kUnsupportedOptionalArgument},
    {"reservation", required_argument, kUnsupported},
    {"licenses", required_argument, 'L'},
    {"open-mode", required_argument, kUnsupported},
    {"switches", required_argument, kUnsupported},
    {"contiguous", no_argument, kUnsupported},
    {"export-file", required_argument, kUnsupported},
    {"time-min", required_argument, kUnsupported},
};
// Short options, in POSIX order (stop at the first word that is not an option: the script); ':'
// first so that a missing argument is told from an unknown option.
constexpr const char* kShort = "+:J:o:e:D:p:t:N:a:d:Wsc:n:A:q:QvHC:G:w:x:i:M:L:m:";

std::string option_name(int id, const char* long_name) {
  if (long_name) return "--" + std::string(long_name);
  std::string name = "-";
  name += static_cast<char>(id);
  return name;
}

bool yes_no(const std::string& text, bool& out) {
  if (text == "yes") return out = true, true;
  if (text == "no") return out = false, true;
  return false;
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string working_directory() {
  char buffer[4096];
  return getcwd(buffer, sizeof buffer) ? std::string(buffer) : std::string();
}

// --export: ALL (the submitting environment), NONE, or a list of NAME or NAME=VALUE, with ALL or
// NONE first, as sbatch takes it.
Status apply_export(const std::string& text, v1::JobSpec& spec) {
  bool all = false;
  std::vector<std::string> items;
  std::stringstream parts(text);
  for (std::string item; std::getline(parts, item, ',');) items.push_back(item);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item == "ALL" || item == "NIL") {
      all = item == "ALL";
      continue;
    }
    if (item == "NONE") continue;
    size_t eq = item.find('=');
    if (item.empty() || eq == 0) return fail("--export: '" + item + "' is not NAME or NAME=VALUE");
    if (eq == std::string::npos) {
      if (const char* value = std::getenv(item.c_str())) (*spec.mutable_env())[item] = value;
    } else {
      (*spec.mutable_env())[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  if (all) {
    for (char** entry = environ; entry && *entry; ++entry) {
      std::string kv = *entry;
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      spec.mutable_env()->try_emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return Ok{};
}

}  // namespace

void overlay(SubmitOptions& base, const SubmitOptions& over) {
  auto take = [](auto& to, const auto& from) {
    if (from) to = from;
  };
  take(base.nodes, over.nodes);
  take(base.ntasks, over.ntasks);
  take(base.ntasks_per_node, over.ntasks_per_node);
  take(base.distribution, over.distribution);
  take(base.mpi, over.mpi);
  take(base.label, over.label);
  take(base.cpu_bind, over.cpu_bind);
  take(base.gpu_bind, over.gpu_bind);
  take(base.shape, over.shape);
  take(base.mode, over.mode);
  take(base.time, over.time);
  take(base.name, over.name);
  take(base.output, over.output);
  take(base.error, over.error);
  take(base.chdir, over.chdir);
  take(base.partition, over.partition);
  take(base.account, over.account);
  take(base.qos, over.qos);
  take(base.array, over.array);
  take(base.dependency, over.dependency);
  take(base.wrap, over.wrap);
  take(base.export_env, over.export_env);
  take(base.no_rotate, over.no_rotate);
  take(base.share, over.share);
  take(base.kill_on_invalid_dep, over.kill_on_invalid_dep);
  take(base.wait, over.wait);
  take(base.parsable, over.parsable);
  base.env.insert(base.env.end(), over.env.begin(), over.env.end());
  // Applied in order, so the later (the command line's) win.
  base.resources.insert(base.resources.end(), over.resources.begin(), over.resources.end());
  if (!over.command.empty()) base.command = over.command;
}

Result<std::string> resource_text(const SubmitOptions& options) {
  ResourceRequest request;
  for (const auto& [option, value] : options.resources)
    if (Status ok = apply_resource_option(option, value, request); !ok) return ok.error();
  return encode_resource_request(request);
}

const std::vector<slurm::LongOption>& sbatch_options() {
  return kOptions;
}

Result<SubmitOptions> parse_sbatch_args(const std::vector<std::string>& args,
                                        bool command_allowed) {
  SubmitOptions out;
  std::vector<std::string> words = {"sbatch"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(words.size());
  static const std::vector<option> table = slurm::getopt_table(kOptions);
  optind = 0;  // GNU getopt: start over (every call parses a new list)
  opterr = 0;
  for (;;) {
    int index = -1;
    int id = getopt_long(argc, argv.data(), kShort, table.data(), &index);
    if (id == -1) break;
    const char* long_name = index >= 0 ? table[static_cast<size_t>(index)].name : nullptr;
    const std::string value = optarg ? optarg : "";
    if (id == '?') {
      std::string word = optind > 0 && optind <= argc ? words[optind - 1] : "?";
      if (optopt != 0 && !word.starts_with("--")) {
        word.clear();  // built by pushes: GCC 12's -Wrestrict misreads assignments here
        word.push_back('-');
        word.push_back(static_cast<char>(optopt));
      }
      return fail("unrecognized option '" + word + "'");
    }
    if (id == ':') {
      std::string word = optind > 0 && optind <= argc ? words[optind - 1] : "?";
      return fail("option '" + word + "' requires an argument");
    }
    switch (id) {
      case 'J':
        out.name = value;
        break;
      case 'o':
        out.output = value;
        break;
      case 'e':
        out.error = value;
        break;
      case 'D':
        out.chdir = value;
        break;
      case 'p':
        out.partition = value;
        break;
      case 't':
        out.time = value;
        break;
      case 'N': {
        // N or MIN-MAX: whole nodes are given, the least asked.
        std::string first = value.substr(0, value.find('-'));
        char* end = nullptr;
        long n = std::strtol(first.c_str(), &end, 10);
        if (first.empty() || *end != '\0' || n < 1 || n > (1 << 30))
          return fail("--nodes: '" + value + "' is not a node count");
        out.nodes = static_cast<int>(n);
        break;
      }
      case 'a':
        out.array = value;
        break;
      case 'd':
        out.dependency = value;
        break;
      case kKillOnInvalidDep: {
        bool yes = false;
        if (!yes_no(value, yes)) return fail("--kill-on-invalid-dep: expected yes or no");
        out.kill_on_invalid_dep = yes;
        break;
      }
      case kWrap:
        out.wrap = value;
        break;
      case kParsable:
        out.parsable = true;
        break;
      case 'W':
        out.wait = true;
        break;
      case kExport:
        out.export_env = value;
        break;
      case 's':  // gang time-sharing, and sharing a node's cores with other jobs
        out.share = true;
        out.resources.emplace_back("oversubscribe", "");
        break;
      case kShape:
        out.shape = value;
        break;
      case kMode:
        out.mode = value;
        break;
      case kNoRotate:
        out.no_rotate = true;
        break;
      case kEnv:
        out.env.push_back(value);
        break;
      case 'n':
      case kNtasksPerNode: {
        const char* what = id == 'n' ? "--ntasks" : "--ntasks-per-node";
        char* end = nullptr;
        long n = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || n < 1 ||
            n > (id == 'n' ? kMaxTasks : kMaxTasksPerNode))
          return fail(std::string(what) + ": '" + value + "' is not a task count");
        (id == 'n' ? out.ntasks : out.ntasks_per_node) = static_cast<int>(n);
        break;
      }
      case 'm':
        out.distribution = value;
        break;
      case kMpi:
        out.mpi = value;
        break;
      case kLabel:
        out.label = true;
        break;
      case 'c':
        out.resources.emplace_back("cpus-per-task", value);
        break;
      case 'C':
        out.resources.emplace_back("constraint", value);
        break;
      case 'G':
        out.resources.emplace_back("gpus", value);
        break;
      case kResource:
        out.resources.emplace_back(long_name, value);
        break;
      case 'A':
        out.account = value;
        break;
      case 'q':
        out.qos = value;
        break;
      case 'Q':
      case 'v':
      case kIgnoredWithArgument:
      case kIgnoredOptionalArgument:
      case kIgnoredFlag:
        break;  // no meaning here (README: "Coming from Slurm")
      default:
        return fail("option '" + option_name(id, long_name) +
                    "' is not supported by Trellis (README: \"Coming from Slurm\")");
    }
  }
  for (int i = optind; i < argc; ++i) out.command.push_back(words[i]);
  if (!command_allowed && !out.command.empty())
    return fail("'" + out.command.front() + "' is not an option");
  return out;
}

Result<v1::JobSpec> build_job_spec(SubmitOptions options, ExportDefault export_default,
                                   SubmitOptions* effective) {
  v1::JobSpec spec;
  // The script: --wrap's, or a "#!" file named first; its directives come under the options.
  std::string script;
  std::string script_name;
  if (options.wrap) {
    if (!options.command.empty())
      return fail("--wrap and a script cannot both be given (found '" + options.command.front() +
                  "')");
    script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + *options.wrap + "\n";
    script_name = "(wrap)";
    if (!options.name) options.name = "wrap";
  } else if (!options.command.empty() && access(options.command.front().c_str(), R_OK) == 0) {
    bool ok = false;
    std::string text = read_file(options.command.front(), ok);
    if (ok && text.starts_with("#!")) {
      script = std::move(text);
      script_name = options.command.front();
      Result<std::vector<std::string>> words = read_directives(script);
      if (!words) return fail(script_name + ": " + words.error().message);
      Result<SubmitOptions> directives = parse_sbatch_args(*words, /*command_allowed=*/false);
      if (!directives) return fail(script_name + ": directive " + directives.error().message);
      overlay(*directives, options);
      options = std::move(*directives);
    }
  }
  if (options.command.empty() && script.empty())
    return fail("no command or script (e.g. trellis submit job.sh, or -- hostname, or --wrap)");
  if (effective) *effective = options;

  if (options.shape) {
    Result<Shape> shape = parse_shape(*options.shape);
    if (!shape) return fail("--shape: " + shape.error().message);
    for (int e : *shape) spec.add_shape(e);
  }
  if (options.nodes) spec.set_nodes(*options.nodes);
  // Without -N or a shape, the tasks give the node count (one per node), or one node.
  if (!options.shape && !options.nodes && !options.ntasks) spec.set_nodes(1);
  spec.set_ntasks(options.ntasks.value_or(0));
  spec.set_ntasks_per_node(options.ntasks_per_node.value_or(0));
  if (options.distribution) spec.set_distribution(*options.distribution);
  if (options.mpi) spec.set_mpi(*options.mpi);
  spec.set_label(options.label.value_or(false));
  if (options.cpu_bind) spec.set_cpu_bind(*options.cpu_bind);
  if (options.gpu_bind) spec.set_gpu_bind(*options.gpu_bind);
  if (options.mode) spec.set_mode(*options.mode);
  if (options.no_rotate.value_or(false)) {
    spec.set_rotate(false);
    spec.set_rotate_set(true);
  }
  if (options.time) {
    Result<Seconds> limit = parse_slurm_time(*options.time);
    if (!limit) return fail("--time: " + limit.error().message);
    spec.set_time_limit(*limit);
  }
  if (options.name) spec.set_name(*options.name);
  if (!script.empty()) {
    spec.set_script(script);
    if (!options.name) {  // as sbatch: the script's file name
      std::string base = script_name.substr(script_name.rfind('/') + 1);
      spec.set_name(base);
    }
    std::string path = script_name;
    if (script_name != "(wrap)" && !path.starts_with("/")) path = working_directory() + "/" + path;
    spec.add_argv(path);
    for (size_t i = 1; i < options.command.size(); ++i) spec.add_argv(options.command[i]);
  } else {
    std::vector<std::string> argv = options.command;
    // A file that is not executable (and not a "#!" script) runs under /bin/sh on every node.
    if (access(argv[0].c_str(), F_OK) == 0 && access(argv[0].c_str(), X_OK) != 0)
      argv.insert(argv.begin(), "/bin/sh");
    for (const std::string& a : argv) spec.add_argv(a);
  }
  std::string submit_dir = working_directory();
  if (submit_dir.empty()) return fail("cannot read the working directory");
  std::string cwd = options.chdir.value_or(submit_dir);
  if (!cwd.starts_with("/")) cwd = submit_dir + "/" + cwd;
  spec.set_cwd(cwd);
  // sbatch's default output is slurm-%j.out (slurm-%A_%a.out for arrays); Trellis's own
  // trellis-%j.out when the job runs a command.
  if (options.output) {
    spec.set_output(*options.output);
  } else if (!script.empty()) {
    spec.set_output(options.array ? "slurm-%A_%a.out" : "slurm-%j.out");
  }
  if (options.error) spec.set_error(*options.error);
  if (options.partition) spec.set_partition(*options.partition);
  // As sbatch, the environment's account and QOS when the options and directives give none.
  if (!options.account)
    if (const char* env = std::getenv("SBATCH_ACCOUNT"); env && *env) options.account = env;
  if (!options.qos)
    if (const char* env = std::getenv("SBATCH_QOS"); env && *env) options.qos = env;
  if (options.account) spec.set_account(*options.account);
  if (options.qos) spec.set_qos(*options.qos);
  if (options.array) spec.set_array(*options.array);
  if (options.dependency) spec.set_dependency(*options.dependency);
  spec.set_kill_on_invalid_dep(options.kill_on_invalid_dep.value_or(false));
  spec.set_share(options.share.value_or(false));
  if (Result<std::string> resources = resource_text(options); !resources)
    return resources.error();
  else
    spec.set_resources(*resources);
  std::string exported =
      options.export_env.value_or(export_default == ExportDefault::kAll ? "ALL" : "NONE");
  if (Status ok = apply_export(exported, spec); !ok) return ok.error();
  for (const std::string& kv : options.env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return fail("--env '" + kv + "': expected NAME=VALUE");
    (*spec.mutable_env())[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  (*spec.mutable_env())["SLURM_SUBMIT_DIR"] = submit_dir;
  (*spec.mutable_env())["SLURM_SUBMIT_HOST"] = host;
  return spec;
}

Result<v1::SubmitReply> send_submission(const std::string& conf, const v1::JobSpec& spec) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) return client.error();
  v1::SubmitRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Submit(&context, request, &reply);
      });
  if (!status.ok()) return from_grpc(status, "submitting");
  return reply;
}

int wait_for_job(const std::string& conf, int64_t job_id, std::string_view command) {
  Result<LiveClient> client = connect_to_cluster(conf);
  if (!client) {
    std::cerr << command << ": " << client.error().message << "\n";
    return 1;
  }
  v1::ListJobsRequest query;
  query.add_job_ids(job_id);  // an array's id brings every task
  for (int delay_ms = 20;; delay_ms = std::min(delay_ms * 2, 500)) {
    Result<v1::ListJobsReply> jobs = list_jobs(*client, query);
    if (jobs && jobs->jobs_size() > 0) {
      bool all_final = true;
      int status = 0;
      for (const v1::JobInfo& job : jobs->jobs()) {
        Result<JobState> state = from_proto(job.state());
        if (!state || !is_final(*state)) {
          all_final = false;
          break;
        }
        if (*state == JobState::kCompleted) continue;
        std::cerr << command << ": job " << job.id() << " ended " << state_name(*state)
                  << (job.reason().empty() ? "" : " (" + job.reason() + ")") << "\n";
        int code = job.exit_code() != 0 ? job.exit_code()
                   : job.signal() != 0  ? 128 + job.signal()
                                        : 1;
        status = std::max(status, code);
      }
      if (all_final) return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
}

}  // namespace trellis::cli
