// trellis submit: a job from a command (run on every node), a batch script (stored, run on the
// first node; its #SBATCH/#TRELLIS directives applied under the command line's options) or
// --wrap, as sbatch takes them (cli/submission.h).
#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/resource_options.h"
#include "cli/submission.h"
#include "core/task_layout.h"

namespace trellis::cli {
namespace {

int run_submit(const std::string& conf, const SubmitOptions& options) {
  SubmitOptions effective;
  Result<v1::JobSpec> spec = build_job_spec(options, ExportDefault::kNone, &effective);
  Result<v1::SubmitReply> reply =
      spec ? send_submission(conf, *spec) : Result<v1::SubmitReply>(spec.error());
  if (!reply) {
    std::cerr << "trellis submit: " << reply.error().message << "\n";
    Error::Code code = reply.error().code;
    bool usage = code == Error::Code::kInvalidArgument || code == Error::Code::kNeverFits ||
                 code == Error::Code::kNotFound;
    return usage ? kExitUsage : kExitFailure;
  }
  if (effective.parsable.value_or(false))
    std::cout << reply->job_id() << std::endl;
  else
    std::cout << "Submitted job " << reply->job_id() << std::endl;
  if (!effective.wait.value_or(false)) return kExitOk;
  // --wait: as sbatch --wait, return when the job (every task of an array) ends, with its status.
  return wait_for_job(conf, reply->job_id(), "trellis submit");
}

}  // namespace

void add_submit_command(CLI::App& app, int& status) {
  auto conf = std::make_shared<std::string>();
  auto o = std::make_shared<SubmitOptions>();
  CLI::App* s = app.add_subcommand(
      "submit",
      "Submit a job to a live cluster (as sbatch): trellis submit -N 4 --time 10 -- ./app args, "
      "trellis submit job.sh, trellis submit --wrap 'hostname'");
  s->footer(
      "A file whose first line starts with #! is a batch script: it is stored with the job (later "
      "edits do not change it) and runs on the job's first node, with the job's environment and "
      "working directory; its exit status is the job's. Its #SBATCH and #TRELLIS lines (sbatch's "
      "option names) are read up to its first command; the command line overrides them. Any "
      "other command runs on every node of the job.");
  add_conf_option(*s, *conf);
  auto text = [&](const char* names, std::optional<std::string> SubmitOptions::*field,
                  const char* help) {
    s->add_option_function<std::string>(
        names, [o, field](const std::string& v) { (*o).*field = v; }, help);
  };
  auto flag = [&](const char* names, std::optional<bool> SubmitOptions::*field, const char* help) {
    s->add_flag_function(
        names, [o, field](int64_t) { (*o).*field = true; }, help);
  };
  s->add_option_function<int>(
       "-N,--nodes", [o](const int& n) { o->nodes = n; }, "Number of nodes (default 1)")
      ->check(CLI::Range(1, 1 << 30));
  text("--shape", &SubmitOptions::shape, "A box of nodes on a mesh/torus, e.g. 4x2x2");
  text("--mode", &SubmitOptions::mode, "Placement: torus, mesh or any (default: the cluster's)");
  flag("--no-rotate", &SubmitOptions::no_rotate, "The shape may not be permuted across axes");
  text(
      "-t,--time", &SubmitOptions::time,
      "Time limit: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS (default: the partition's or cluster's)");
  text("-J,--job-name", &SubmitOptions::name, "The job's name (default: the command or script)");
  text("-o,--output", &SubmitOptions::output,
       "stdout file: %j job id, %A array id, %a task id, %x name, %u user (default "
       "trellis-%j.out; slurm-%j.out for scripts)");
  text("-e,--error", &SubmitOptions::error, "stderr file (default: the output file)");
  text("-D,--chdir", &SubmitOptions::chdir, "Working directory (default: the current one)");
  text("-p,--partition", &SubmitOptions::partition, "Partition (default: the cluster's default)");
  text("-a,--array", &SubmitOptions::array,
       "Job array: task ids 1-100, 0,3,7 or 1-99:2, with %N for at most N at once");
  text("-d,--dependency", &SubmitOptions::dependency,
       "Start after other jobs: afterok:ID[:ID...], afternotok:ID, afterany:ID, after:ID, "
       "singleton; ',' all, '?' any");
  s->add_option_function<std::string>(
       "--kill-on-invalid-dep", [o](const std::string& v) { o->kill_on_invalid_dep = v == "yes"; },
       "yes: cancel the job when its dependency can never be satisfied")
      ->check(CLI::IsMember({"yes", "no"}));
  text("--wrap", &SubmitOptions::wrap, "Run this shell command as the job's batch script");
  text("--export", &SubmitOptions::export_env,
       "Environment to pass: ALL, NONE (the default here) or NAME[=VALUE],... after ALL or NONE");
  s->add_option_function<std::vector<std::string>>(
       "--env",
       [o](const std::vector<std::string>& v) { o->env.insert(o->env.end(), v.begin(), v.end()); },
       "NAME=VALUE for the job's environment (repeatable)")
      ->allow_extra_args(false);  // one value per --env: `--env A=1 -- sh -c x` ends at "--"
  s->add_option_function<int>(
       "-n,--ntasks", [o](const int& n) { o->ntasks = n; },
       "Tasks (ranks) in all (default: one per node); without -N, one node per task")
      ->check(CLI::Range(1, kMaxTasks));
  s->add_option_function<int>(
       "--ntasks-per-node", [o](const int& n) { o->ntasks_per_node = n; },
       "At most this many tasks per node")
      ->check(CLI::Range(1, kMaxTasksPerNode));
  text("-m,--distribution", &SubmitOptions::distribution,
       "Where ranks go: block (consecutive ranks fill a node, default) or cyclic");
  text("--mpi", &SubmitOptions::mpi,
       "How ranks wire up: auto (from the program: Open MPI gets PMIx, MPICH PMI-1), pmi1, pmix "
       "(and PMI-1), none (default: the cluster's, auto)");
  flag("--label", &SubmitOptions::label, "Prefix each line of output with the rank that wrote it");
  text("--cpu-bind", &SubmitOptions::cpu_bind,
       "Each task's CPUs: none, cores, threads or map_cpu:LIST (default: cores where the tasks "
       "fit the cores given on shared nodes; none on whole nodes)");
  text("--gpu-bind", &SubmitOptions::gpu_bind,
       "Each task's GPUs: none, closest or per_task:N (default: per_task:GPUS_PER_TASK with "
       "--gpus-per-task, else none)");
  flag("--share", &SubmitOptions::share, "The job may be time-shared (gang policies)");
  // Cores, memory and GPUs, by sbatch's names; core/resource_request.h reads the values.
  add_resource_options(*s, o->resources, "");
  flag("--parsable", &SubmitOptions::parsable, "Print only the job id");
  flag("--wait", &SubmitOptions::wait, "Return when the job ends, with its exit status");
  s->add_option("command", o->command, "The command and its arguments (after --), or a script");
  s->callback([conf, o, &status] { status = run_submit(*conf, *o); });
}

}  // namespace trellis::cli
