// A submission as the commands that submit build it (`trellis submit`, `sbatch`): the options
// given, read from the command line and from the script's directives (core/batch_directives.h),
// and the JobSpec they make.
//
// Directives use sbatch's option names (`#SBATCH -N 3`, `#TRELLIS --shape 2x2x2`) and are read
// with sbatch's syntax (parse_sbatch_args); the command line overrides them option by option
// (overlay()). A script is a file whose first line starts with "#!" (as sbatch requires); it is
// sent whole and stored with the job, so later edits do not change it. `--wrap CMD` makes a
// script of one command, as sbatch does.
//
//   Result<SubmitOptions> cli = parse_sbatch_args(args, /*command_allowed=*/true);
//   Result<v1::JobSpec> spec = build_job_spec(*cli, std::cerr);   // reads the directives
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis::cli {

struct SubmitOptions {
  std::optional<int> nodes;
  // Tasks (core/task_layout.h): -n, --ntasks-per-node, -m block|cyclic, --mpi, --label.
  std::optional<int> ntasks, ntasks_per_node;
  std::optional<std::string> distribution, mpi;
  std::optional<bool> label;
  std::optional<std::string> cpu_bind, gpu_bind;  // core/task_binding.h's words
  std::optional<std::string> shape, mode, time, name, output, error, chdir, partition, account, qos,
      array, dependency, wrap, export_env;
  std::optional<bool> no_rotate, share, kill_on_invalid_dep, wait, parsable;
  // Cores, memory, GPUs, sharing and features: (long option name, value) in the order given,
  // read by core/resource_request.h's apply_resource_option (resource_text()).
  std::vector<std::pair<std::string, std::string>> resources;
  std::vector<std::string> env;      // NAME=VALUE, added to what --export gives
  std::vector<std::string> command;  // the script (or command) and its arguments
};

// `over`'s options replace `base`'s where given; env entries add up.
void overlay(SubmitOptions& base, const SubmitOptions& over);

// Parses sbatch's options (getopt_long, as sbatch: bundled short options, --opt=value, unique
// prefixes of long options), with Trellis's own (--shape, --mode, --no-rotate, --share, --env).
// With `command_allowed`, the first word that is not an option and everything after it are the
// command; otherwise (directives) such a word is an error. An option sbatch has that Trellis does
// not support is an error naming it; options with no meaning here yet (--mail-*, --hint, ...:
// README "Coming from Slurm") are accepted and have no effect.
Result<SubmitOptions> parse_sbatch_args(const std::vector<std::string>& args, bool command_allowed);

// The job's ResourceRequest (core/resource_request.h) in its stored text, from the resource
// options given; errors name the option.
Result<std::string> resource_text(const SubmitOptions& options);

// sbatch's options as parse_sbatch_args() takes them, with their help (cli/slurm/slurm_help.h).
namespace slurm {
struct LongOption;
}
const std::vector<slurm::LongOption>& sbatch_options();

// How the job's environment is built from the submitting one: sbatch exports it all (--export
// ALL, its default); `trellis submit` exports nothing unless asked.
enum class ExportDefault { kAll, kNone };

// The JobSpec of a submission: the script read (its directives under the options given, which
// win), --wrap made a script, the working directory, the environment (--export, --env,
// SLURM_SUBMIT_DIR, SLURM_SUBMIT_HOST). A command that is not a "#!" script runs on every node as
// before. Errors name what is wrong ("job.sh: line 3: unterminated quote").
Result<v1::JobSpec> build_job_spec(SubmitOptions options, ExportDefault export_default,
                                   SubmitOptions* effective = nullptr);

// Submits `spec` to the cluster of config `conf` ("" = $TRELLIS_CONF).
Result<v1::SubmitReply> send_submission(const std::string& conf, const v1::JobSpec& spec);

// sbatch --wait: waits for the job (every task of an array) to end; its exit status, as sbatch's.
int wait_for_job(const std::string& conf, int64_t job_id, std::string_view command);

}  // namespace trellis::cli
