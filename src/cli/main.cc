// trellis: the command-line front end. See `trellis --help`.
#include <iostream>
#include <string>
#include <vector>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/slurm/slurm_command.h"

namespace {

// `trellis help [SUBCOMMAND...]`: the help of the program or of one (nested) subcommand.
void add_help_command(CLI::App& app, int& status) {
  auto names = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "help", "Print this help, or a subcommand's: trellis help sim, trellis help bench mc");
  cmd->add_option("subcommand", *names, "The subcommand (and its subcommands) to describe");
  cmd->callback([&app, names, &status] {
    const CLI::App* shown = &app;
    std::string path = "trellis";
    for (const auto& name : *names) {
      const CLI::App* next = nullptr;
      for (const CLI::App* sub : shown->get_subcommands({}))
        if (sub->get_name() == name && sub->get_name() != "help") next = sub;
      if (!next) {
        std::string known;
        for (const CLI::App* sub : shown->get_subcommands({}))
          known += (known.empty() ? "" : ", ") + sub->get_name();
        std::cerr << "trellis: '" << path << "' has no subcommand '" << name
                  << "' (it has: " << known << ")\n";
        status = trellis::cli::kExitUsage;
        return;
      }
      shown = next;
      path += " " + name;
    }
    // The formatter directly: App::help() would describe the parsed `help` subcommand instead.
    std::cout << shown->get_formatter()->make_help(shown, path, CLI::AppFormatMode::Normal);
    status = trellis::cli::kExitOk;
  });
}

}  // namespace

int main(int argc, char** argv) {
  // Called as sbatch, squeue, ... (a link to this binary): Slurm's command, with Slurm's options.
  std::string called = argc > 0 ? argv[0] : "trellis";
  called = called.substr(called.rfind('/') + 1);
  if (trellis::cli::slurm::SlurmMain slurm = trellis::cli::slurm::slurm_command(called))
    return slurm(std::vector<std::string>(argv + 1, argv + argc));
  CLI::App app{
      "Trellis: a topology-aware resource manager and job scheduler.\n"
      "Places parallel jobs on mesh/torus and fat-tree machines, and simulates schedules on "
      "workload traces."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
  app.set_version_flag("--version", std::string("trellis ") + TRELLIS_VERSION);
  app.footer(
      "Exit status: 0 success; 1 a failure while running; 2 bad usage or bad input;\n"
      "3 (trellis alloc) the job fits the machine but cannot be placed now.");
  int status = 0;
  add_help_command(app, status);
  trellis::cli::add_list_command(app, status);
  trellis::cli::add_alloc_command(app, status);
  trellis::cli::add_demo_command(app, status);
  trellis::cli::add_bench_command(app, status);
  trellis::cli::add_topo_command(app, status);
  trellis::cli::add_compare_alloc_command(app, status);
  trellis::cli::add_bench_mc_command(app, status);
  trellis::cli::add_bench_sharing_command(app, status);
  trellis::cli::add_bench_priority_command(app, status);
  trellis::cli::add_sim_command(app, status);
  trellis::cli::add_sim_compare_command(app, status);
  trellis::cli::add_gang_sim_command(app, status);
  trellis::cli::add_bench_gang_command(app, status);
  trellis::cli::add_submit_command(app, status);
  trellis::cli::add_job_commands(app, status);
  trellis::cli::add_history_command(app, status);
  trellis::cli::add_account_command(app, status);
  trellis::cli::add_slurm_env_command(app, status);
  trellis::cli::add_run_command(app, status);
  trellis::cli::add_showmesh_command(app, status);
  trellis::cli::add_web_command(app, status);
  trellis::cli::add_cluster_command(app, status);
  trellis::cli::add_bench_live_command(app, status);
  trellis::cli::add_bench_gang_live_command(app, status);
  trellis::cli::add_bench_scale_command(app, status);
  trellis::cli::add_bench_mpi_command(app, status);
  trellis::cli::add_bench_controllers_command(app, status);
  trellis::cli::add_bench_chaos_command(app, status);
  trellis::cli::add_bench_history_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return trellis::cli::kExitUsage;
  }
  return status;
}
