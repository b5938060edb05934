// The p-quantile of a sample (nearest rank), as the benchmarks print p50 and p99.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace trellis::cli {

// The value at rank round(p * (n - 1)) of the sorted sample; 0 for an empty one.
inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t at = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

}  // namespace trellis::cli
