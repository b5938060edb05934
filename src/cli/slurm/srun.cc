// srun, as Slurm's: one task inside a job runs the command right here (the job's first node,
// where a batch script runs), exec'ed as given with the job's environment, as srun -n1 does; this
// is what workflow managers run in their jobs (snakemake: srun -n1 --cpu-bind=q CMD...).
// Everything else is `trellis run`, a job step wired with PMI (issue 31): several tasks or nodes
// (without -n or -N, as many as the job has, as Slurm's srun inside an allocation), a node list,
// options only steps have, or srun outside a job (which allocates and runs). srun execs this
// program as `trellis run` with its arguments unchanged.
#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"

namespace trellis::cli::slurm {
namespace {

// kStep: an option only a step has (it sends srun to `trellis run`).
enum { kIgnored = 256, kIgnoredFlag, kStep, kCpuBind };

const std::vector<LongOption> kOptions = {
    {"ntasks", required_argument, 'n'},
    {"nodes", required_argument, 'N'},
    {"cpu-bind", required_argument, kCpuBind},
    {"cpus-per-task", required_argument, 'c'},
    {"mem", required_argument, kIgnored},
    {"mem-per-cpu", required_argument, kIgnored},
    {"job-name", required_argument, 'J'},
    {"export", required_argument, kIgnored},
    {"exclusive", optional_argument, kIgnored},
    {"quiet", no_argument, 'Q'},
    {"verbose", no_argument, 'v'},
    {"kill-on-bad-exit", optional_argument, 'K'},
    {"mpi", required_argument, kStep},
    {"label", no_argument, 'l'},
};

// What srun takes, for its --help: its own options above and those `trellis run` takes for it
// (cli/run_command.cc), by the names srun gives them.
const std::vector<LongOption> kHelpOptions = {
    {"ntasks", required_argument, 'n', "ntasks", "number of tasks to run"},
    {"nodes", required_argument, 'N', "N", "number of nodes on which to run (default: the job's)"},
    {"ntasks-per-node", required_argument, kStep, "ntasks",
     "number of tasks to invoke on each node"},
    {"nodelist", required_argument, 'w', "hosts...", "request a specific list of the job's hosts"},
    {"distribution", required_argument, 'm', "type",
     "distribution method for processes (block, cyclic)"},
    {"mpi", required_argument, kStep, "type",
     "how ranks wire up: auto (from the program), pmi1, pmix, none"},
    {"output", required_argument, 'o', "out", "location of stdout redirection"},
    {"error", required_argument, 'e', "err", "location of stderr redirection"},
    {"label", no_argument, 'l', nullptr, "prepend task number to lines of stdout/err"},
    {"chdir", required_argument, 'D', "path", "change remote current working directory"},
    {"time", required_argument, 't', "minutes", "outside a job: the job's time limit"},
    {"job-name", required_argument, 'J', "jobname", "outside a job: the job's name"},
    {"kill-on-bad-exit", optional_argument, 'K', "0|1", "accepted: a failed task ends its step"},
    {"cpu-bind", required_argument, kIgnored, "type",
     "each task's CPUs: none, cores, threads, map_cpu:LIST"},
    {"gpu-bind", required_argument, kStep, "type", "each task's GPUs: none, closest, per_task:N"},
    {"cpus-per-task", required_argument, 'c', "ncpus", "outside a job: CPUs per task"},
    {"mem", required_argument, kIgnored, "MB", "outside a job: memory per node"},
    {"gpus-per-task", required_argument, kStep, "[type:]n", "outside a job: GPUs per task"},
    {"gres", required_argument, kStep, "list", "outside a job: generic resources per node"},
    {"export", required_argument, kIgnored, "names", "accepted; the job's environment is exported"},
    {"exclusive", optional_argument, kIgnored, nullptr, "outside a job: whole nodes"},
    {"overlap", no_argument, kIgnoredFlag, nullptr, "accepted, no effect"},
    {"quiet", no_argument, 'Q', nullptr, "quiet mode (suppress informational messages)"},
};

bool one(const std::string& value) {
  std::string first = value.substr(0, value.find('-'));
  return first == "1";
}

// Replaces this process with `trellis run ARGS...` (this same binary, called as trellis).
int exec_trellis_run(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"trellis", "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (std::string& a : argv) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  execv("/proc/self/exe", pointers.data());
  std::cerr << "srun: error: cannot run trellis run: " << strerror(errno) << "\n";
  return 1;
}

// The job's own task count, from its environment: a step without -n or -N runs that many, as
// Slurm's srun does inside an allocation (sbatch -n 4 script: its plain `srun cmd` runs 4 tasks).
bool job_has_one_task() {
  for (const char* name : {"SLURM_NTASKS", "TRELLIS_NTASKS", "SLURM_JOB_NUM_NODES"})
    if (const char* value = std::getenv(name); value && *value) return one(value);
  return true;
}

}  // namespace

int srun_main(const std::vector<std::string>& args) {
  static const CommandHelp help{
      "srun",
      "[OPTIONS...] executable [args...]",
      kHelpOptions,
      {.h_is_help = true, .options_end_at_command = true},
      "Inside a job, one task runs here as the command itself; several tasks or nodes are a "
      "job step (trellis run) wired with PMI. Outside a job, srun asks for a job and runs in it."};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "+n:N:c:J:QvK::l", kOptions);
  bool here = parsed.ok() && !parsed->rest.empty() &&
              (std::getenv("SLURM_JOB_ID") || std::getenv("TRELLIS_JOB_ID"));
  if (here) {
    bool sized = false;  // -n or -N given
    for (const Parsed& o : parsed->options) {
      if (o.id == 'n' || o.id == 'N') sized = true;
      if (((o.id == 'n' || o.id == 'N') && !one(o.value)) || o.id == 'l' || o.id == kStep)
        here = false;
      // A binding in words is the job shell's to set (snakemake's --cpu-bind=q asks none).
      if (o.id == kCpuBind && o.value != "q" && o.value != "quiet" && o.value != "none" &&
          o.value != "no" && o.value != "verbose" && o.value != "v")
        here = false;
    }
    if (!sized && !job_has_one_task()) here = false;
  }
  if (!here) return exec_trellis_run(args);
  std::vector<std::string> argv = parsed->rest;
  std::vector<char*> pointers;
  for (std::string& a : argv) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  // The command replaces srun, with its arguments exactly as given (never re-joined by a shell).
  execvp(pointers[0], pointers.data());
  std::cerr << "srun: error: cannot run '" << argv[0] << "': " << strerror(errno) << "\n";
  return errno == ENOENT ? 127 : 126;
}

}  // namespace trellis::cli::slurm
