#include "sim/gang/sim_job.h"

#include <algorithm>
#include <cmath>

namespace trellis::gangsim {

std::vector<SimJob> batch_jobs(const std::vector<Job>& jobs) {
  std::vector<SimJob> out;
  out.reserve(jobs.size());
  for (const Job& j : jobs) {
    SimJob s;
    s.id = j.id;
    s.submit = static_cast<long>(std::floor(j.submit));
    s.size = j.request.nodes;
    s.work = std::max(1L, static_cast<long>(std::llround(j.run_time)));
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });
  return out;
}

}  // namespace trellis::gangsim
