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

namespace trellis::cli::slurm {
namespace {

// kStep: an option only a step has (it sends srun to `trellis run`).
enum { kIgnored = 256, kIgnoredFlag, kStep };

const std::vector<LongOption> kOptions = {
    {"ntasks", required_argument, 'n'},
    {"nodes", required_argument, 'N'},
    {"cpu-bind", required_argument, kIgnored},
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
  Result<ParsedArgs> parsed = parse_options(args, "+n:N:c:J:QvK::l", kOptions);
  bool here = parsed.ok() && !parsed->rest.empty() &&
              (std::getenv("SLURM_JOB_ID") || std::getenv("TRELLIS_JOB_ID"));
  if (here) {
    bool sized = false;  // -n or -N given
    for (const Parsed& o : parsed->options) {
      if (o.id == 'n' || o.id == 'N') sized = true;
      if (((o.id == 'n' || o.id == 'N') && !one(o.value)) || o.id == 'l' || o.id == kStep)
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
