// `trellis sim` with a gang policy (`--sched dqt-ffapa`, see `trellis list`): the workload runs
// through the time-shared mode of the simulation loop (gangsim::simulate_time_shared) and the
// same files are written by the same function as for a queue policy (summary.json with an extra
// "gang" object, jobs.csv, report.html), plus slots.txt, the slot-by-slot schedule, for small
// runs.
//
// --sched-opt keys for gang policies:
//   quantum=SECONDS      time slice (default 30, Slurm's SchedulerTimeSlice default)
//   fanout=W             DQT fan-out (default 2)
//   max_jobs_per_node=K  slurm-gang's oversubscription limit (default 4)
//   trace_slots=N        slots to write to slots.txt (default 200 when the workload has at most
//                        500 jobs, else 0)
// Partitions are aligned blocks along the allocator's node order (Allocator::node_order): the
// buddy allocator's curve by default (options as for that allocator), a linear allocator's curve,
// or the node ids for an allocator without one.
#pragma once

#include "cli/sim_args.h"
#include "sim/workload.h"

namespace trellis::cli {

// Whether `policy` names a gang policy rather than a queue policy.
bool is_gang_policy(const std::string& policy);

// Whether the gang policy args.policy takes args.sched_options and runs on this machine's node
// count, as run_gang_policy_sim would find before simulating (for checks made up front). Also
// refuses --mode and --shape-requests, which gang policies (whole buddy partitions) ignore.
Status check_gang_policy(const SimArgs& args, const Machine& machine);

// Runs the simulation and writes the outputs; returns the exit status.
int run_gang_policy_sim(const SimArgs& args, const Machine& machine, const Workload& workload);

}  // namespace trellis::cli
