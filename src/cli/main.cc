// trellis: the command-line front end. See `trellis --help`.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Trellis: a topology-aware resource manager and job scheduler.\n"
      "Places parallel jobs on mesh/torus and fat-tree machines, and simulates schedules on "
      "workload traces."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
  int status = 0;
  trellis::cli::add_list_command(app, status);
  trellis::cli::add_alloc_command(app, status);
  trellis::cli::add_demo_command(app, status);
  trellis::cli::add_bench_command(app, status);
  trellis::cli::add_topo_command(app, status);
  trellis::cli::add_compare_alloc_command(app, status);
  trellis::cli::add_bench_mc_command(app, status);
  trellis::cli::add_sim_command(app, status);
  trellis::cli::add_sim_compare_command(app, status);
  trellis::cli::add_gang_sim_command(app, status);
  trellis::cli::add_bench_gang_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return 2;
  }
  return status;
}
