// The Lublin-Feitelson workload model for rigid parallel jobs (U. Lublin and D. G. Feitelson, "The
// workload on parallel supercomputers: modeling the characteristics of rigid jobs", JPDC 63(11),
// 2003), for generating workloads of any size on any machine.
//
//   size     serial with probability 0.24; otherwise log2(size) is drawn from a two-stage uniform
//            distribution (with probability 0.86 on [0.8, m-2.5], else on [m-2.5, m], m = log2 of
//            the machine's nodes) and rounded to a power of two with probability 0.75
//   run time ln(run time) is hyper-gamma: Gamma(4.2, 0.94) with probability p = 0.78 - 0.0054 *
//            size (clamped to [0, 1]), else Gamma(312, 0.03): larger jobs run longer
//   arrivals ln(inter-arrival time) is Gamma(10.23, 0.4871)
//
// The model's daily arrival cycle and its interactive/batch split are left out: this keeps the
// arrival process stationary, which is what load scaling (--load) assumes. Time limits equal run
// times (the model has no user estimates). The generator is deterministic for a given seed.
#pragma once

#include <cstdint>
#include <vector>

#include "core/job.h"

namespace trellis {

struct LublinParams {
  int jobs = 10000;
  int machine_nodes = 256;
  uint64_t seed = 1;
};

std::vector<Job> generate_lublin(const LublinParams& params);

}  // namespace trellis
