#include "sim/gang/experiment.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace trellis::gangsim {

Result<std::vector<GangRun>> run_experiment(const GangExperiment& e,
                                            const std::function<void(const GangRun&)>& on_run) {
  for (const auto& name : e.policies)
    if (!gang::GangPolicyRegistry::builtin().has(name))
      return gang::GangPolicyRegistry::builtin().create(name, e.model.processors).error();
  std::vector<GangRun> runs;
  for (double load : e.loads) {
    for (uint64_t seed : e.seeds) {
      workload::ThesisModel model = e.model;
      model.load = load;
      model.seed = seed;
      auto jobs = workload::generate_thesis_workload(model);
      if (!jobs) return jobs.error();
      std::vector<SimJob> sim_jobs = batch_jobs(*jobs);
      GangSimConfig config = e.sim;
      if (config.end_time < 0) config.end_time = static_cast<long>(model.arrival_end);
      for (const auto& name : e.policies) {
        auto scheduler =
            gang::GangPolicyRegistry::builtin().create(name, model.processors, e.options);
        if (!scheduler) return scheduler.error();
        auto start = std::chrono::steady_clock::now();
        auto result = simulate_gang(sim_jobs, **scheduler, config);
        if (!result) return result.error();
        GangRun run;
        run.policy = name;
        run.load = load;
        run.seed = seed;
        run.result = std::move(*result);
        run.wall_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (on_run) on_run(run);
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

std::vector<GangSummary> summarize(const std::vector<GangRun>& runs) {
  std::vector<GangSummary> out;
  for (const GangRun& r : runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](const GangSummary& s) {
      return s.policy == r.policy && s.load == r.load;
    });
    const GangSimResult& x = r.result;
    if (it == out.end()) {
      GangSummary s;
      s.policy = r.policy;
      s.load = r.load;
      s.utilization_min = s.utilization_max = x.utilization;
      s.max_tqlb_min = s.max_tqlb_max = x.max_tqlb;
      out.push_back(s);
      it = out.end() - 1;
    }
    GangSummary& s = *it;
    ++s.runs;
    s.offered_load += x.offered_load;
    s.utilization += x.utilization;
    s.utilization_min = std::min(s.utilization_min, x.utilization);
    s.utilization_max = std::max(s.utilization_max, x.utilization);
    s.mean_retr += x.mean_retr;
    s.correlation += x.retr_size_correlation;
    s.max_tqlb += x.max_tqlb;
    s.max_tqlb_min = std::min(s.max_tqlb_min, x.max_tqlb);
    s.max_tqlb_max = std::max(s.max_tqlb_max, x.max_tqlb);
    s.mean_max_tqlb += x.mean_max_tqlb;
    s.wall_seconds += r.wall_seconds;
  }
  for (GangSummary& s : out) {
    double n = s.runs;
    s.offered_load /= n;
    s.utilization /= n;
    s.mean_retr /= n;
    s.correlation /= n;
    s.max_tqlb /= n;
    s.mean_max_tqlb /= n;
    s.wall_seconds /= n;
  }
  return out;
}

}  // namespace trellis::gangsim
