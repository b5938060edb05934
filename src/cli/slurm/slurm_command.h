// Slurm's commands as front ends of Trellis: one binary (`trellis`) called by the names sbatch,
// squeue, scancel, sacct, sinfo, scontrol, sacctmgr, sshare and sprio (argv[0] dispatch; `make
// install` and the build tree place links with those names, `trellis slurm-env` prints the PATH
// line). Each parses Slurm's options with getopt_long as Slurm does, talks to the cluster of
// $TRELLIS_CONF, and prints Slurm's formats byte for byte where clients parse them. An option
// Trellis does not support is an error that names it (exit 2); options with no meaning here are
// accepted (README: "Coming from Slurm").
#pragma once

#include <getopt.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis::cli::slurm {

// The Slurm command `name` runs (sbatch, squeue, ...), or nullptr when `name` is not one.
using SlurmMain = int (*)(const std::vector<std::string>& args);
SlurmMain slurm_command(std::string_view name);
// The names slurm_command() knows, in a fixed order.
const std::vector<std::string>& slurm_command_names();

int sbatch_main(const std::vector<std::string>& args);
int squeue_main(const std::vector<std::string>& args);
int scancel_main(const std::vector<std::string>& args);
int sacct_main(const std::vector<std::string>& args);
int sinfo_main(const std::vector<std::string>& args);
int scontrol_main(const std::vector<std::string>& args);
int sacctmgr_main(const std::vector<std::string>& args);
int sshare_main(const std::vector<std::string>& args);
int sprio_main(const std::vector<std::string>& args);
// sacctmgr's words under another name (`trellis account`), which its messages carry.
int account_command_main(const std::vector<std::string>& args, std::string_view program);
// One task inside a job runs here; anything else is `trellis run` (cli/slurm/srun.cc).
int srun_main(const std::vector<std::string>& args);

// Reports an error as Slurm's tools do ("squeue: error: ...") and returns the exit status: 2 for
// bad usage (an invalid argument), 1 otherwise.
int report_error(std::string_view command, const Error& error);

// One option as getopt_long found it.
struct Parsed {
  int id = 0;         // the short option's character, or a long-only option's id
  std::string value;  // its argument ("" when none)
  std::string word;   // how it was written, for messages
};
// getopt_long over `args` (not including the command name): the options found in order and the
// words that are not options; an unknown option or a missing argument is an error naming it.
struct ParsedArgs {
  std::vector<Parsed> options;
  std::vector<std::string> rest;
};
// One of a command's options: its long name, whether it takes a value, the id getopt_long
// returns (its short letter, or a long-only id above 255), and what `--help` says of it: the
// value's name and a line of text (an option with no text is one Trellis refuses, or another
// name of one listed).
struct LongOption {
  const char* name;
  int has_arg;  // no_argument, required_argument, optional_argument
  int id;
  const char* argument = nullptr;
  const char* help = nullptr;
};
Result<ParsedArgs> parse_options(const std::vector<std::string>& args, const char* short_options,
                                 const std::vector<LongOption>& long_options);
// getopt_long's table of `long_options`, ending with its zero entry.
std::vector<struct option> getopt_table(const std::vector<LongOption>& long_options);

// Splits a comma-separated list.
std::vector<std::string> split_list(std::string_view text);

}  // namespace trellis::cli::slurm
