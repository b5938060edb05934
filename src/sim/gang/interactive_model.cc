#include "sim/gang/interactive_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace trellis::gangsim {

namespace {

double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

long exponential_units(std::mt19937_64& rng, double mean) {
  return std::max(1L, std::lround(-std::log(1.0 - unit(rng)) * mean));
}

}  // namespace

Status validate(const InteractiveModel& m) {
  if (m.jobs < 1)
    return fail("interactive model: jobs must be at least 1, got " + std::to_string(m.jobs));
  if (m.size < 1)
    return fail("interactive model: size must be at least 1, got " + std::to_string(m.size));
  if (!(m.mean_compute > 0) || !(m.mean_think > 0))
    return fail("interactive model: mean compute and think times must be positive");
  if (m.interactions < 1)
    return fail("interactive model: interactions must be at least 1, got " +
                std::to_string(m.interactions));
  if (!(m.deadlock_fraction >= 0 && m.deadlock_fraction <= 1))
    return fail("interactive model: deadlock fraction must be in [0, 1]");
  return Ok{};
}

Result<std::vector<SimJob>> generate_interactive_jobs(const InteractiveModel& m) {
  if (auto ok = validate(m); !ok) return ok.error();
  std::mt19937_64 rng(m.seed);
  std::vector<SimJob> jobs;
  for (int i = 0; i < m.jobs; ++i) {
    SimJob job;
    job.id = i + 1;
    job.size = m.size;
    job.work = 0;
    for (int k = 0; k <= m.interactions; ++k) {
      Interaction step;
      step.compute = exponential_units(rng, m.mean_compute);
      step.think = k < m.interactions ? exponential_units(rng, m.mean_think) : 0;
      job.work += step.compute;
      job.interactions.push_back(step);
    }
    if (unit(rng) < m.deadlock_fraction) job.deadlock_after = job.work / 2;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace trellis::gangsim
