// trellis run (also `srun`, by its name): runs a parallel command, as srun does.
//   Inside a job (TRELLIS_JOB_ID or SLURM_JOB_ID in the environment): a step of that job on its
//   nodes or some of them, wired up as the job is; returns when every task has ended, with the
//   step's status.
//   Outside a job: a job of its own for the command (allocate and run in one go), with its output
//   on the terminal.
// Output goes where this command's own goes: to the same file when stdout is one (a batch job's
// output file), else through files in the working directory that this command copies to its
// stdout and stderr as they grow, then removes. SIGINT or SIGTERM cancels the step (or job); a
// second one leaves at once.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/resource_options.h"
#include "core/resource_request.h"
#include "core/slurm_time.h"
#include "core/task_layout.h"
#include "daemon/grpc_status.h"
#include "daemon/job_spec.h"

extern char** environ;

namespace trellis::cli {
namespace {

struct RunArgs {
  std::string conf;
  int ntasks = 0;
  int nodes = 0;
  int ntasks_per_node = 0;
  std::string nodelist;
  std::string distribution;
  std::string mpi;
  std::string output, error;
  bool label = false;
  std::string chdir;
  std::string time;
  std::string name;
  std::string cpu_bind, gpu_bind;  // core/task_binding.h's words; "" = the default
  // Outside a job: cores, memory, GPUs, sharing and features, (long option, value) in the order
  // given, as core/resource_request.h's apply_resource_option reads them. Inside a job the step
  // runs in what the job holds.
  ResourceOptions resources;
  // srun options MPI launchers and workflow tools pass that change nothing here (a failed task
  // always ends its step; stdin is always /dev/null; the whole environment is always passed on;
  // a step may always overlap the job's others).
  std::string kill_on_bad_exit, input, exported;
  bool quiet = false, overlap = false;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_interrupts = 0;

int fail_with(const Error& error) {
  std::cerr << "trellis run: error: " << error.message << "\n";
  return error.code == Error::Code::kInvalidArgument || error.code == Error::Code::kNotFound ||
                 error.code == Error::Code::kNeverFits
             ? kExitUsage
             : kExitFailure;
}

// The path `fd` is open on, when it is a regular file opened for appending, so that the tasks may
// append to the file themselves; "" otherwise (a terminal, a pipe, or a file written at this
// process's own offset: `{ trellis run echo a; echo b; } > f` writes b at the offset where the
// shell stands, over what the tasks appended, so their output is copied through our descriptor).
std::string regular_file_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_APPEND) == 0) return "";
  char path[4096];
  ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), path, sizeof path - 1);
  if (n <= 0 || path[0] != '/') return "";
  return std::string(path, static_cast<size_t>(n));
}

std::string working_directory(const std::string& chdir) {
  if (!chdir.empty()) return chdir;
  char buffer[4096];
  return ::getcwd(buffer, sizeof buffer) ? std::string(buffer) : std::string("/");
}

// Copies what tasks append to a file to one of our descriptors, as it grows.
class Follower {
 public:
  Follower(std::string path, int to) : path_(std::move(path)), to_(to) {}
  ~Follower() {
    if (fd_ >= 0) ::close(fd_);
  }
  void copy_new() {
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd_, buffer, sizeof buffer)) > 0;) {
      for (ssize_t done = 0; done < n;) {
        ssize_t w = ::write(to_, buffer + done, static_cast<size_t>(n - done));
        if (w <= 0) break;
        done += w;
      }
    }
  }
  void remove() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int to_;
  int fd_ = -1;
};

// Where the tasks write: the user's -o/-e, our own output file, or followed files.
struct OutputPlan {
  std::string output, error;
  std::vector<std::unique_ptr<Follower>> followers;
};

OutputPlan plan_output(const RunArgs& args, const std::string& cwd, const std::string& tag) {
  OutputPlan plan;
  auto absolute = [&](const std::string& p) {
    return p.empty() || p[0] == '/' ? p : cwd + "/" + p;
  };
  if (!args.output.empty()) {
    plan.output = absolute(args.output);
    plan.error = absolute(args.error);
    return plan;
  }
  std::string out = regular_file_of(1), err = regular_file_of(2);
  if (!out.empty()) {
    plan.output = out;
    plan.error = err.empty() ? out : err;
    return plan;
  }
  // A terminal or a pipe: files the tasks can append to on any node that sees this directory.
  plan.output = cwd + "/.trellis-run-" + tag + ".out";
  plan.error = cwd + "/.trellis-run-" + tag + ".err";
  plan.followers.push_back(std::make_unique<Follower>(plan.output, 1));
  plan.followers.push_back(std::make_unique<Follower>(plan.error, 2));
  return plan;
}

// Our environment for the tasks, less what their shells and agents set afresh.
std::map<std::string, std::string> passed_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = entry.substr(0, eq);
    if (name.starts_with("TRELLIS_") || name.starts_with("SLURM") || name.starts_with("PMI_") ||
        name.starts_with("PMIX_"))
      continue;
    env[name] = entry.substr(eq + 1);
  }
  return env;
}

void on_interrupt(int) {
  g_interrupts = g_interrupts + 1;
  if (g_interrupts >= 2) ::_exit(128 + SIGINT);
}

int exit_status(v1::JobState state, int exit_code, int signal) {
  if (state == v1::COMPLETED) return 0;
  if (exit_code != 0) return exit_code;
  if (signal != 0) return 128 + signal;
  return kExitFailure;
}

// The job this command runs in, from its environment; 0 outside a job.
int64_t enclosing_job() {
  for (const char* name : {"TRELLIS_JOB_ID", "SLURM_JOB_ID", "SLURM_JOBID"}) {
    const char* value = std::getenv(name);
    if (value && *value) {
      char* end = nullptr;
      long long id = std::strtoll(value, &end, 10);
      if (end && *end == '\0' && id > 0) return id;
    }
  }
  return 0;
}

bool is_final(v1::JobState s) {
  return s == v1::COMPLETED || s == v1::FAILED || s == v1::CANCELLED || s == v1::TIMEOUT ||
         s == v1::NODE_FAIL || s == v1::OUT_OF_MEMORY;
}

int run_step(const RunArgs& args, int64_t job) {
  Result<LiveClient> client = connect_to_cluster(args.conf);
  if (!client) return fail_with(client.error());
  std::string cwd = working_directory(args.chdir);
  OutputPlan output =
      plan_output(args, cwd, std::to_string(job) + "." + std::to_string(::getpid()));
  v1::RunStepRequest request;
  request.set_job_id(job);
  for (const std::string& a : args.command) request.add_argv(a);
  request.set_cwd(cwd);
  for (const auto& [k, v] : passed_environment()) (*request.mutable_env())[k] = v;
  request.set_nodes(args.nodes);
  request.set_nodelist(args.nodelist);
  request.set_ntasks(args.ntasks);
  request.set_ntasks_per_node(args.ntasks_per_node);
  request.set_distribution(args.distribution);
  request.set_mpi(args.mpi);
  request.set_label(args.label);
  request.set_cpu_bind(args.cpu_bind);
  request.set_gpu_bind(args.gpu_bind);
  request.set_output(output.output);
  request.set_error(output.error);
  v1::RunStepReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.RunStep(&context, request, &reply);
      });
  if (!status.ok())
    return fail_with(from_grpc(status, "running a step of job " + std::to_string(job)));
  const int step = reply.step().step();
  ::signal(SIGINT, on_interrupt);
  ::signal(SIGTERM, on_interrupt);
  bool cancelled = false;
  v1::StepInfo last;
  for (int delay_ms = 5;; delay_ms = std::min(delay_ms * 2, 200)) {
    for (auto& f : output.followers) f->copy_new();
    if (g_interrupts > 0 && !cancelled) {
      v1::CancelStepRequest cancel;
      cancel.set_job_id(job);
      cancel.set_step(step);
      v1::CancelStepReply none;
      (void)client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
        return stub.CancelStep(&c, cancel, &none);
      });
      cancelled = true;
    }
    v1::ListStepsRequest list;
    list.set_job_id(job);
    list.set_step(step);
    v1::ListStepsReply steps;
    grpc::Status listed =
        client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.ListSteps(&context, list, &steps);
        });
    if (listed.ok()) {
      for (const v1::StepInfo& s : steps.steps())
        if (s.attempt() == reply.step().attempt()) last = s;
      if (is_final(last.state())) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  for (auto& f : output.followers) {
    f->copy_new();
    f->remove();
  }
  if (last.state() != v1::COMPLETED)
    std::cerr << "trellis run: error: step " << job << "." << step << " ended "
              << (last.state() == v1::CANCELLED ? "CANCELLED" : "FAILED")
              << (last.reason().empty() ? "" : ": " + last.reason()) << "\n";
  return exit_status(last.state(), last.exit_code(), last.signal());
}

// Outside a job: a job of its own, waited for, with its output copied here.
int run_job(const RunArgs& args) {
  Result<LiveClient> client = connect_to_cluster(args.conf);
  if (!client) return fail_with(client.error());
  std::string cwd = working_directory(args.chdir);
  v1::JobSpec spec;
  if (args.nodes > 0) spec.set_nodes(args.nodes);
  if (args.nodes == 0 && args.ntasks == 0) spec.set_nodes(1);
  spec.set_ntasks(args.ntasks);
  spec.set_ntasks_per_node(args.ntasks_per_node);
  spec.set_distribution(args.distribution);
  spec.set_mpi(args.mpi);
  spec.set_label(args.label);
  spec.set_cpu_bind(args.cpu_bind);
  spec.set_gpu_bind(args.gpu_bind);
  ResourceRequest resources;
  for (const auto& [option, value] : args.resources)
    if (Status ok = apply_resource_option(option, value, resources); !ok)
      return fail_with(ok.error());
  spec.set_resources(encode_resource_request(resources));
  spec.set_name(args.name);
  if (!args.time.empty()) {
    Result<Seconds> limit = parse_slurm_time(args.time);
    if (!limit) return fail_with(fail("--time: " + limit.error().message));
    spec.set_time_limit(*limit);
  }
  for (const std::string& a : args.command) spec.add_argv(a);
  spec.set_cwd(cwd);
  OutputPlan output = plan_output(args, cwd, std::to_string(::getpid()));
  spec.set_output(output.output);
  spec.set_error(output.error);
  size_t passed = 0;
  for (const auto& [k, v] : passed_environment())
    if (passed++ < kMaxEnvEntries) (*spec.mutable_env())[k] = v;
  v1::SubmitRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitReply reply;
  grpc::Status status =
      client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Submit(&context, request, &reply);
      });
  if (!status.ok()) return fail_with(from_grpc(status, "submitting"));
  ::signal(SIGINT, on_interrupt);
  ::signal(SIGTERM, on_interrupt);
  bool cancelled = false;
  v1::JobInfo job;
  for (int delay_ms = 5;; delay_ms = std::min(delay_ms * 2, 200)) {
    for (auto& f : output.followers) f->copy_new();
    if (g_interrupts > 0 && !cancelled) {
      v1::CancelRequest cancel;
      cancel.add_job_ids(reply.job_id());
      v1::CancelReply none;
      (void)client->controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
        return stub.Cancel(&c, cancel, &none);
      });
      cancelled = true;
    }
    v1::ListJobsRequest query;
    query.add_job_ids(reply.job_id());
    Result<v1::ListJobsReply> jobs = list_jobs(*client, query);
    if (jobs && jobs->jobs_size() == 1) {
      job = jobs->jobs(0);
      if (is_final(job.state())) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  for (auto& f : output.followers) {
    f->copy_new();
    f->remove();
  }
  if (job.state() != v1::COMPLETED)
    std::cerr << "trellis run: error: job " << job.id() << " ended "
              << (from_proto(job.state()) ? state_name(*from_proto(job.state())) : "?")
              << (job.reason().empty() ? "" : ": " + job.reason()) << "\n";
  return exit_status(job.state(), job.exit_code(), job.signal());
}

}  // namespace

void add_run_command(CLI::App& app, int& status) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* r = app.add_subcommand(
      "run", "Run a parallel command (as srun): a step of the job it runs in, or a job of its own");
  r->footer(
      "Inside a job (TRELLIS_JOB_ID / SLURM_JOB_ID set) the command runs as a step on the job's "
      "nodes (all of them, -N of them, or --nodelist) and this returns with the step's status "
      "when every task has ended. Outside a job it allocates nodes and runs in one go. Called "
      "as `srun` with several tasks, or outside a job, it is this command. Accepted and without "
      "effect: --kill-on-bad-exit (a failed "
      "task always ends its step), --input (stdin is /dev/null), --export, --overlap, --quiet. "
      "Inside a job the step runs in what the job holds: its resource options are the job's.");
  r->prefix_command();  // options end at the command: `srun -n1 python3 -m x` keeps its -m
  // The command, for the usage line. It takes no word itself (its check refuses every one, and
  // refused positionals go to remaining() with the rest): it is here because without a
  // positional, CLI11 hands a "--" and what follows it to `trellis`, which refuses them.
  r->add_option("command", args->command, "The command and its arguments (after the options or --)")
      ->check(CLI::Validator([](std::string&) { return std::string("kept for remaining()"); }, "",
                             "command"));
  r->validate_positionals();
  add_conf_option(*r, args->conf);
  r->add_option("-n,--ntasks", args->ntasks,
                "Tasks (ranks) in all (default: inside a job without -N, the job's tasks; else one "
                "per node)")
      ->check(CLI::Range(1, kMaxTasks));
  r->add_option("-N,--nodes", args->nodes, "Nodes (default: all the job's, or one per task)")
      ->check(CLI::Range(1, 1 << 30));
  r->add_option("--ntasks-per-node", args->ntasks_per_node, "At most this many tasks per node")
      ->check(CLI::Range(1, kMaxTasksPerNode));
  r->add_option("-w,--nodelist", args->nodelist, "These of the job's nodes (a hostlist)");
  r->add_option("-m,--distribution", args->distribution, "block (default) or cyclic")
      ->transform([](const std::string& d) { return d.substr(0, d.find(':')); })
      ->check(CLI::IsMember({"block", "cyclic"}));
  r->add_option("--mpi", args->mpi, "auto, pmi1, pmix or none (default: the job's)")
      ->check(CLI::IsMember({"auto", "pmi1", "pmi2", "pmix", "pmix_v3", "pmix_v4", "none"}));
  r->add_option("-o,--output", args->output, "stdout file (default: this command's)");
  r->add_option("-e,--error", args->error, "stderr file (default: the output file)");
  r->add_flag("-l,--label", args->label, "Prefix each line of output with its rank");
  r->add_option("-D,--chdir", args->chdir, "Working directory (default: the current one)");
  r->add_option("-t,--time", args->time, "Outside a job: the time limit");
  r->add_option("-J,--job-name", args->name, "Outside a job: the job's name");
  r->add_option("-K,--kill-on-bad-exit", args->kill_on_bad_exit)->expected(0, 1);
  r->add_option("-i,--input", args->input);
  r->add_option("--cpu-bind,--cpu_bind", args->cpu_bind,
                "Each task's CPUs: none, cores, threads, map_cpu:LIST (default: cores where the "
                "tasks fit the cores given on shared nodes; none on whole nodes)");
  r->add_option("--gpu-bind", args->gpu_bind,
                "Each task's GPUs: none, closest, per_task:N (default: per_task:N with "
                "--gpus-per-task=N, else none)");
  // Outside a job, what each node gives the job (as sbatch and `trellis submit` take them).
  add_resource_options(*r, args->resources, "Outside a job: ");
  r->add_option("--export", args->exported);
  r->add_flag("-Q,--quiet", args->quiet);
  r->add_flag("--overlap", args->overlap);
  r->callback([args, r, &status] {
    args->command = r->remaining();
    if (!args->command.empty() && args->command.front() == "--")
      args->command.erase(args->command.begin());
    if (args->command.empty()) {
      status = fail_with(fail("no command: trellis run -n 4 -- ./app"));
      return;
    }
    int64_t job = enclosing_job();
    status = job > 0 ? run_step(*args, job) : run_job(*args);
  });
}

}  // namespace trellis::cli
