// Gang simulations of ordinary workloads, reported like the batch simulator's runs: a workload of
// trellis::Job (seconds) is cut into quanta for the gang simulator, and the outcome is turned
// back into a SimResult, so `trellis sim --sched dqt-ffapa` writes the same summary.json,
// jobs.csv and report.html as `--sched easy`, and `trellis sim-compare` can set them side by side.
//
// Gang processors are the machine's nodes taken in `order` (the buddy allocator's curve, so a
// partition is an aligned block along it); a job's node ranges are those of its partition.
#pragma once

#include <vector>

#include "sim/gang/gang_simulator.h"
#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "topology/curve.h"

namespace trellis::gangsim {

struct QuantizedWorkload {
  std::vector<SimJob> jobs;  // submit at the next slot boundary, work = ceil(run / quantum)
  std::vector<RejectedJob> rejected;  // more nodes than the machine, or no run time
};

// `quantum` seconds per slot (> 0). A job runs min(run time, time limit) seconds of work, as the
// batch simulator's jobs do (the limit stays a kill limit).
QuantizedWorkload quantize(const std::vector<Job>& jobs, int processors, double quantum);

// The SimResult of a gang run of `jobs` (the workload quantize() was given). Each job's
// running_intervals are the slots it was switched in (from the gang run's active spans, recorded
// with GangSimConfig::record_activity), so no two jobs hold a node at the same time; a job whose
// spans passed the simulator's cap runs without a break from its last recorded span to its end.
SimResult to_sim_result(const Machine& machine, const Curve& order, const GangSimResult& gang,
                        const std::vector<Job>& jobs, const QuantizedWorkload& quantized,
                        double quantum, bool record_placements);

// The batch summary's utilization counts nodes * (end - start) per job, which for a time-shared
// job also counts the slots it was switched out (it can exceed 1). For gang runs it is replaced by
// the thesis's definition: processors in active partitions, over the same window.
void set_time_shared_utilization(RunSummary& summary, const GangSimResult& gang, double quantum,
                                 int processors);

}  // namespace trellis::gangsim
