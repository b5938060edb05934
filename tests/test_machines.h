// Test helpers: a Machine from a spec that the test knows to be valid (a failure otherwise), and
// random node sets on it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "topology/machine.h"

namespace trellis {

inline Machine machine(const std::string& spec) {
  auto m = Machine::parse(spec);
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

// `count` distinct nodes of a machine of `size` nodes, drawn uniformly with `rng`.
inline NodeSet random_nodes(int size, int count, std::mt19937& rng) {
  std::vector<NodeId> ids(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) ids[i] = i;
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(static_cast<size_t>(count));
  return NodeSet::of(size, ids);
}

}  // namespace trellis
