// The synthetic workloads of the DQT thesis (seed 002, sections 7.2.1-7.2.2): Poisson arrivals,
// exponential or uniform service times independent of size, and power-of-two sizes drawn with
// equal, size-proportional or inversely size-proportional weights. The whole machine is never
// requested (it would reduce to plain time sharing), unless max_size says otherwise.
//
// The arrival rate follows the thesis's formula T_interval = mean_size * mean_length / (P * W):
// a constant target load W, or the "gradient" load that rises by `gradient_step` every
// `gradient_every` of the arrival window (the thesis: +5% per 5% of time, ~133% at the end; the
// starting load is not given, so it is a parameter).
//
// The same model and seed always give the same jobs. With `whole_units`, submit times are
// whole time units and lengths at least one unit, as the quantum simulator needs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace trellis::workload {

enum class SizeDistribution { kUniform, kProportional, kInverse };
enum class ServiceDistribution { kExponential, kUniform };

// "uniform", "proportional", "inverse" / "exponential", "uniform".
Result<SizeDistribution> parse_size_distribution(std::string_view text);
Result<ServiceDistribution> parse_service_distribution(std::string_view text);
std::string_view to_string(SizeDistribution d);
std::string_view to_string(ServiceDistribution d);

struct ThesisModel {
  int processors = 128;
  SizeDistribution sizes = SizeDistribution::kUniform;
  int min_size = 1;
  int max_size = 0;  // 0: half the machine (the whole machine is excluded)
  ServiceDistribution service = ServiceDistribution::kExponential;
  double mean_service = 1000;  // exponential
  double service_min = 500;    // uniform (the gradient experiments: 500-19,999)
  double service_max = 19999;
  double load = 0.5;         // target workload factor W (constant load)
  double arrival_end = 1e6;  // arrivals in [0, arrival_end)
  bool gradient = false;
  double gradient_start = 0.38;  // [inferred] reaches 1.33 in the last of 20 steps
  double gradient_step = 0.05;
  double gradient_every = 0.05;  // as a fraction of arrival_end
  bool whole_units = true;
  uint64_t seed = 1;
};

// Errors name the field that is out of range.
Status validate(const ThesisModel& model);

// Jobs in submit order, ids from 1. Each has request.nodes = size, run_time = time_limit =
// service length, and share = true.
Result<std::vector<Job>> generate_thesis_workload(const ThesisModel& model);

// A model from a generator spec, as `trellis sim --generate` takes it:
//   thesis:load=0.9,sizes=inverse,service=uniform,duration=1e6,seed=3
// Keys: load, sizes (uniform|proportional|inverse), service (exponential|uniform), mean (the
// exponential mean), min and max (the uniform range), duration (arrival window), seed,
// gradient (starting load: turns on the gradient load), min_size, max_size. Every key is
// optional; errors name the key and the value.
Result<ThesisModel> parse_thesis_spec(std::string_view spec, int processors);

// The mean job size of the model's size distribution.
double mean_size(const ThesisModel& model);

}  // namespace trellis::workload
