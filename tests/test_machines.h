// Test helper: a Machine from a spec that the test knows to be valid (a failure otherwise).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "topology/machine.h"

namespace trellis {

inline Machine machine(const std::string& spec) {
  auto m = Machine::parse(spec);
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

}  // namespace trellis
