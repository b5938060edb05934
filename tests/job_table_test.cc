// JobTable against std::map on random ids (dense, growing, huge and negative) and operations.
#include "core/job_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace trellis {
namespace {

TEST(JobTable, BehavesLikeAMapOnRandomOperations) {
  std::mt19937_64 rng(3);
  JobTable<long> table;
  std::map<JobId, long> oracle;
  JobId next_dense = 1;
  auto random_id = [&]() -> JobId {
    switch (rng() % 6) {
      case 0:
        return static_cast<JobId>(rng() % (1ULL << 53));  // a huge SWF id: the map
      case 1:
        return -static_cast<JobId>(rng() % 100) - 1;
      case 2:
        return next_dense++;  // the usual counter
      default:
        return static_cast<JobId>(rng() % static_cast<uint64_t>(next_dense + 10));
    }
  };
  for (int step = 0; step < 200000; ++step) {
    JobId id = random_id();
    long value = static_cast<long>(rng() % 1000);
    switch (rng() % 3) {
      case 0: {
        auto [at, added] = table.emplace(id, value);
        auto [it, expected] = oracle.emplace(id, value);
        ASSERT_EQ(added, expected) << id;
        ASSERT_EQ(*at, it->second) << id;
        break;
      }
      case 1:
        ASSERT_EQ(table.erase(id), oracle.erase(id) > 0) << id;
        break;
      default: {
        long* found = table.find(id);
        auto it = oracle.find(id);
        ASSERT_EQ(found != nullptr, it != oracle.end()) << id;
        if (found) ++*found, ++it->second;
      }
    }
    ASSERT_EQ(table.size(), oracle.size());
  }
  std::map<JobId, long> seen;
  table.for_each([&](JobId id, long value) { EXPECT_TRUE(seen.emplace(id, value).second) << id; });
  EXPECT_EQ(seen, oracle);
}

}  // namespace
}  // namespace trellis
