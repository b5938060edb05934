#include "sim/gang/thesis_experiments.h"

namespace trellis::gangsim {

const std::vector<ThesisTableRow>& thesis_table_7_1() {
  static const std::vector<ThesisTableRow> rows = {
      {"dqt-maxtqlb", 0.368, 0.366, 4}, {"dqt-mintqlb", 0.368, 0.366, 5},
      {"dqt-apa", 0.368, 0.366, 3},     {"dqt-ff", 0.368, 0.363, 7},
      {"dqt-ffapa", 0.368, 0.366, 3},   {"dqt-maxtqlb", 0.793, 0.768, 10},
      {"dqt-mintqlb", 0.793, 0.775, 8}, {"dqt-apa", 0.793, 0.777, 8},
      {"dqt-ff", 0.793, 0.768, 8},      {"dqt-ffapa", 0.793, 0.776, 7},
  };
  return rows;
}

namespace {

std::vector<uint64_t> seed_list(int seeds) {
  std::vector<uint64_t> out;
  for (int s = 1; s <= seeds; ++s) out.push_back(static_cast<uint64_t>(s));
  return out;
}

}  // namespace

GangExperiment table_7_1_experiment(int seeds) {
  GangExperiment e;
  e.policies = {"dqt-maxtqlb", "dqt-mintqlb", "dqt-apa", "dqt-ff", "dqt-ffapa"};
  e.model.processors = 128;
  e.model.sizes = workload::SizeDistribution::kInverse;
  e.model.service = workload::ServiceDistribution::kUniform;
  e.model.service_min = 500;
  e.model.service_max = 19999;
  e.model.arrival_end = 1e6;
  e.loads = {0.368, 0.793};
  e.seeds = seed_list(seeds);
  return e;
}

GangExperiment figure_7_20_experiment(int seeds, double duration) {
  GangExperiment e;
  e.policies = {"dqt-ffapa", "fair-dqt-ffapa", "scan-up-bb", "fcfs-bb"};
  e.model.processors = 1024;
  e.model.sizes = workload::SizeDistribution::kUniform;
  e.model.service = workload::ServiceDistribution::kExponential;
  e.model.mean_service = 1000;
  e.model.arrival_end = duration;
  e.loads = {0.4, 0.6, 0.8, 0.9, 0.95};
  e.seeds = seed_list(seeds);
  return e;
}

}  // namespace trellis::gangsim
