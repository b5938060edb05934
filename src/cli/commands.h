// The `trellis` command's subcommands. Each lives in its own file and adds itself to the app;
// main.cc only wires them together. A subcommand's callback stores its exit status in `status`:
// 0 success, 1 a failure while running, 2 bad usage or bad input (as Slurm's tools do).
#pragma once

#include <CLI/CLI.hpp>

namespace trellis::cli {

void add_list_command(CLI::App& app, int& status);
void add_alloc_command(CLI::App& app, int& status);
void add_demo_command(CLI::App& app, int& status);
void add_bench_command(CLI::App& app, int& status);
void add_topo_command(CLI::App& app, int& status);
void add_compare_alloc_command(CLI::App& app, int& status);
// The `trellis bench` family that the bench subcommands join, created on first use.
CLI::App& bench_family(CLI::App& app);
// Adds `bench mc` to the bench family.
void add_bench_mc_command(CLI::App& app, int& status);
void add_bench_sharing_command(CLI::App& app, int& status);
// trellis bench priority (bench/priority_bench.h).
void add_bench_priority_command(CLI::App& app, int& status);
void add_sim_command(CLI::App& app, int& status);
void add_sim_compare_command(CLI::App& app, int& status);
void add_gang_sim_command(CLI::App& app, int& status);
// Adds `bench gang` to the bench family.
void add_bench_gang_command(CLI::App& app, int& status);
// The live cluster's client commands: queue, cancel, nodes, show, drain, suspend and resume (jobs,
// or drained nodes); submit and history apart.
void add_job_commands(CLI::App& app, int& status);
// trellis submit: a command, a batch script, --wrap, arrays, dependencies (as sbatch).
void add_submit_command(CLI::App& app, int& status);
// trellis history: finished and running jobs from the store (as sacct).
void add_history_command(CLI::App& app, int& status);
// trellis account: accounts, users, shares and limits, with sacctmgr's words.
void add_account_command(CLI::App& app, int& status);
// trellis slurm-env: the PATH line that puts Slurm's command names (links to trellis) first.
void add_slurm_env_command(CLI::App& app, int& status);
// trellis run: a step of the job it runs in (as srun), or a job of its own.
void add_run_command(CLI::App& app, int& status);
void add_showmesh_command(CLI::App& app, int& status);
// trellis web: the dashboard, served from the store.
void add_web_command(CLI::App& app, int& status);
// trellis cluster up|down|status: a local cluster on this host.
void add_cluster_command(CLI::App& app, int& status);
// `trellis cluster demo`, under the cluster command.
void add_live_demo_command(CLI::App& cluster, int& status);
// Adds `bench live` to the bench family.
void add_bench_live_command(CLI::App& app, int& status);
// Adds `bench controllers` to the bench family.
void add_bench_controllers_command(CLI::App& app, int& status);
// Adds `bench chaos` to the bench family.
void add_bench_chaos_command(CLI::App& app, int& status);
// Adds `bench history` to the bench family.
void add_bench_history_command(CLI::App& app, int& status);
// Adds `bench mpi` to the bench family.
void add_bench_mpi_command(CLI::App& app, int& status);
// Adds `bench gang-live` to the bench family.
void add_bench_gang_live_command(CLI::App& app, int& status);
// bench gang-live's part (a), the switch latency and CPU per switch through the tree, on `nodes`
// agents for each fan-out (also `bench scale --parts d`); returns the exit status.
int run_gang_switch_latency(int nodes, int switches, const std::vector<int>& fanouts);
// Adds `bench scale` to the bench family.
void add_bench_scale_command(CLI::App& app, int& status);
// The path of another program installed beside the running one (trellis-agent, trellisd).
std::string sibling_binary(const std::string& name);

}  // namespace trellis::cli
