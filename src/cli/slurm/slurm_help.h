// --help, --usage and --version of the Slurm-named commands, the first things a Slurm user
// types. Each command's help comes from the same option table its parser uses (LongOption's help
// text), so it lists exactly what the command takes; Slurm's options that it refuses are named in
// one closing line, which points to the README's "Coming from Slurm".
//
//   static const CommandHelp help{"squeue", "[OPTIONS]", kOptions, {.h_is_help = false}};
//   if (std::optional<int> status = answer_help(args, help)) return *status;
//
// Where Slurm gives -h to something else (squeue and sinfo: --noheader) it keeps that meaning;
// -V is --version everywhere, as in Slurm.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm/slurm_command.h"

namespace trellis::cli::slurm {

struct CommandHelp {
  std::string_view command;  // "sbatch"
  std::string_view
      synopsis;  // what follows the name on the Usage line: "[OPTIONS] script [args...]"
  const std::vector<LongOption>& options;
  struct Flags {
    bool h_is_help = true;  // -h means --help (sbatch, srun, sacct, scontrol)
    // Options end at the first word that is not one (sbatch's script, srun's command, scontrol's
    // command): a --help after it is the command's own.
    bool options_end_at_command = false;
  } flags;
  // Printed after the options (scontrol's commands, what a command does differently here).
  std::string_view notes = {};
};

// The Slurm release whose options and output formats the commands follow, and their version line
// ("slurm 22.05.8 (trellis 0.1.0)": the first word and number as Slurm prints them, for clients
// that parse it).
std::string version_text();
std::string help_text(const CommandHelp& help);
std::string usage_text(const CommandHelp& help);

// When `args` ask for help, usage or the version (before the command, when options end there),
// prints it to `out` and returns the exit status (0); otherwise nullopt.
std::optional<int> answer_help(const std::vector<std::string>& args, const CommandHelp& help,
                               std::ostream& out);
std::optional<int> answer_help(const std::vector<std::string>& args, const CommandHelp& help);

}  // namespace trellis::cli::slurm
