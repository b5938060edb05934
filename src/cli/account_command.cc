// trellis account: the site's accounts and users, with sacctmgr's words (cli/slurm/sacctmgr.cc):
//   trellis account add account physics Parent=science Fairshare=40
//   trellis account add user alice Account=physics
//   trellis account show assoc -P
#include "cli/commands.h"
#include "cli/slurm/slurm_command.h"

namespace trellis::cli {

void add_account_command(CLI::App& app, int& status) {
  CLI::App* a = app.add_subcommand(
      "account",
      "Accounts, users and their shares and limits, with sacctmgr's words: trellis account add "
      "account physics Fairshare=40; trellis account show assoc (trellis account --help)");
  a->prefix_command();
  a->set_help_flag();  // --help goes to sacctmgr's own help
  a->callback(
      [a, &status] { status = slurm::account_command_main(a->remaining(), "trellis account"); });
}

}  // namespace trellis::cli
