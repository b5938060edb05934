#include "sim/lublin.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace trellis {

namespace {

constexpr double kSerialProbability = 0.24;
constexpr double kPowerOfTwoProbability = 0.75;
constexpr double kUniformLow = 0.8;
constexpr double kUniformMedFromHigh = 2.5;
constexpr double kUniformLowStageProbability = 0.86;
constexpr double kShortShape = 4.2, kShortScale = 0.94;
constexpr double kLongShape = 312, kLongScale = 0.03;
constexpr double kShortWeightSlope = -0.0054, kShortWeightIntercept = 0.78;
constexpr double kArrivalShape = 10.23, kArrivalScale = 0.4871;

}  // namespace

std::vector<Job> generate_lublin(const LublinParams& params) {
  std::mt19937_64 rng(params.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::gamma_distribution<double> short_run(kShortShape, kShortScale);
  std::gamma_distribution<double> long_run(kLongShape, kLongScale);
  std::gamma_distribution<double> arrival(kArrivalShape, kArrivalScale);

  const double high = std::log2(std::max(2, params.machine_nodes));
  const double med = std::max(kUniformLow, high - kUniformMedFromHigh);
  std::vector<Job> jobs;
  jobs.reserve(static_cast<size_t>(std::max(0, params.jobs)));
  double clock = 0;
  for (int i = 0; i < params.jobs; ++i) {
    int size = 1;
    if (unit(rng) >= kSerialProbability) {
      double lo = kUniformLow, hi = med;
      if (unit(rng) >= kUniformLowStageProbability) lo = med, hi = high;
      double log_size = lo + (hi - lo) * unit(rng);
      size = unit(rng) < kPowerOfTwoProbability
                 ? 1 << static_cast<int>(std::lround(log_size))
                 : static_cast<int>(std::lround(std::exp2(log_size)));
      size = std::clamp(size, 1, params.machine_nodes);
    }
    double short_weight = std::clamp(kShortWeightSlope * size + kShortWeightIntercept, 0.0, 1.0);
    double log_run = unit(rng) < short_weight ? short_run(rng) : long_run(rng);
    double run = std::round(std::exp(log_run));

    Job job;
    job.id = i + 1;
    job.submit = clock;
    job.run_time = run;
    job.time_limit = run;
    job.request = Request::count(size);
    jobs.push_back(std::move(job));
    clock += std::round(std::exp(arrival(rng)));
  }
  return jobs;
}

}  // namespace trellis
