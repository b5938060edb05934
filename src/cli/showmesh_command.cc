// trellis showmesh: seed 003's read path. The occupancy map is read straight from the store, so
// it works while no controller runs (and never loads one).
#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "cli/occupancy_map.h"
#include "store/state_store.h"

namespace trellis::cli {
namespace {

int run_showmesh(const std::string& conf, const std::string& store_flag) {
  Result<std::string> store_url = store_to_read(conf, store_flag);
  if (!store_url) return usage_error(store_url.error());
  Result<std::unique_ptr<StateStore>> store = open_store(*store_url, {.read_only = true});
  if (!store) return usage_error(store.error());
  Result<std::string> spec = (*store)->machine_spec();
  if (!spec) return usage_error(spec.error());
  Result<Machine> machine = Machine::parse(*spec);
  if (!machine) return usage_error(machine.error());
  Result<std::vector<StoredNode>> nodes = (*store)->list_nodes();
  if (!nodes) return usage_error(nodes.error());
  JobQuery running;
  running.states = {JobState::kRunning, JobState::kSuspended, JobState::kCompleting};
  Result<std::vector<StoredJob>> jobs = (*store)->list_jobs(running);
  if (!jobs) return usage_error(jobs.error());
  std::cout << occupancy_map(*machine, *nodes, *jobs);
  return kExitOk;
}

}  // namespace

void add_showmesh_command(CLI::App& app, int& status) {
  auto conf = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "showmesh",
      "Draw the machine's occupancy (each node a job letter, . idle, # down, x drained), read\n"
      "straight from the store: it works while no controller runs");
  add_conf_option(*cmd, *conf);
  cmd->add_option("--store", *store, "The store to read (e.g. sqlite:DIR/state.db)");
  cmd->callback([=, &status] { status = run_showmesh(*conf, *store); });
}

}  // namespace trellis::cli
