// The thesis's published DQT experiments as ready-made GangExperiments, with the numbers the
// thesis printed, so a run can be set beside them.
//
//   Table 7.1  128 processors, constant workload factor 0.368 and 0.793, 10^6 time units, the
//              five task allocation policies. The thesis says the other parameters are those of
//              its gradient runs: inverse size distribution, service time uniform 500-19,999.
//   Fig. 7.20  1,024 processors, uniform sizes, exponential service (mean 1,000): DQT,
//              Fair-DQT, ScanUp and FCFS-BB utilization against load (curves only; the thesis
//              states DQT ~ ScanUp >> FCFS-BB).
#pragma once

#include <string>
#include <vector>

#include "sim/gang/experiment.h"

namespace trellis::gangsim {

struct ThesisTableRow {
  std::string policy;
  double load;
  double utilization;
  int max_tqlb;
};

// Thesis Table 7.1, in our policy names.
const std::vector<ThesisTableRow>& thesis_table_7_1();

GangExperiment table_7_1_experiment(int seeds);
GangExperiment figure_7_20_experiment(int seeds, double duration);

}  // namespace trellis::gangsim
