// trellis slurm-env: where the links named after Slurm's commands are (sbatch, squeue, scancel,
// sacct, sinfo, scontrol: each a link to this binary), as the PATH line to use them:
//
//   eval "$(trellis slurm-env)"     # then sbatch, squeue, ... are Trellis's
//
// The build tree keeps them in BUILD/slurm-bin; `make install` in PREFIX/libexec/trellis/slurm.
#include <filesystem>
#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/slurm/slurm_command.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;

int run_slurm_env(bool directory_only) {
  fs::path self = fs::path(sibling_binary("trellis")).parent_path();
  for (const fs::path& dir : {self / "slurm-bin", self / ".." / "libexec" / "trellis" / "slurm"}) {
    std::error_code error;
    if (!fs::exists(dir / slurm::slurm_command_names().front(), error)) continue;
    std::string path = fs::weakly_canonical(dir, error).string();
    if (directory_only)
      std::cout << path << "\n";
    else
      std::cout << "export PATH=" << path << ":$PATH\n";
    return kExitOk;
  }
  std::cerr << "trellis slurm-env: no directory of Slurm command links beside " << self.string()
            << " (build the trellis target, or run make install)\n";
  return kExitFailure;
}

}  // namespace

void add_slurm_env_command(CLI::App& app, int& status) {
  auto directory_only = std::make_shared<bool>(false);
  CLI::App* e = app.add_subcommand(
      "slurm-env",
      "Print the PATH line that makes sbatch, squeue, scancel, sacct, sinfo and scontrol "
      "Trellis's: eval \"$(trellis slurm-env)\"");
  e->add_flag("--dir", *directory_only, "Print only the directory of the links");
  e->callback([directory_only, &status] { status = run_slurm_env(*directory_only); });
}

}  // namespace trellis::cli
