// srun inside a job, for one task: runs the command on this node (the job's first, where a batch
// script runs), with the job's environment, and returns its exit status, as srun -n1 does. This
// is what workflow managers run in their jobs (snakemake: srun -n1 --cpu-bind=q CMD...). Steps
// of several tasks, or srun outside a job, are `trellis run` (issue 31, job steps): refused here
// with that said.
#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/slurm/slurm_command.h"

namespace trellis::cli::slurm {
namespace {

enum { kIgnored = 256, kIgnoredFlag };

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
    {"mpi", required_argument, kIgnored},
    {"label", no_argument, 'l'},
};

bool one(const std::string& value) {
  std::string first = value.substr(0, value.find('-'));
  return first == "1";
}

}  // namespace

int srun_main(const std::vector<std::string>& args) {
  Result<ParsedArgs> parsed = parse_options(args, "+n:N:c:J:QvK::l", kOptions);
  if (!parsed) return report_error("srun", parsed.error());
  for (const Parsed& o : parsed->options) {
    if ((o.id == 'n' || o.id == 'N') && !one(o.value))
      return report_error("srun", fail("steps of several tasks or nodes (" + o.word + " " +
                                       o.value + ") are `trellis run` (job steps)"));
  }
  if (parsed->rest.empty()) return report_error("srun", fail("no command to run"));
  if (!std::getenv("SLURM_JOB_ID") && !std::getenv("TRELLIS_JOB_ID"))
    return report_error("srun", fail("not inside a job: use `trellis run` to allocate and run, "
                                     "or sbatch"));
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
