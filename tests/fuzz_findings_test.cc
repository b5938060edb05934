// Inputs the fuzzers of fuzz/ found, each kept as a test of the fix (the agent's and the store's
// findings are in tests/daemon/). Each input is the one the fuzzer saved, or its essence.
#include <gtest/gtest.h>

#include "core/request.h"
#include "daemon/config.h"
#include "daemon/job_spec.h"
#include "topology/machine.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

bool says(const Error& error, const std::string& words) {
  return error.message.find(words) != std::string::npos;
}

// fuzz_request: the volume of a shape of large extents overflowed a long (undefined behaviour)
// before it was compared with the limit.
TEST(FuzzFindingsTest, AShapeWhoseVolumeOverflowsIsTooLarge) {
  Result<Shape> huge = parse_shape("3339998x8x33339998x8999949");
  ASSERT_FALSE(huge);
  EXPECT_TRUE(says(huge.error(), "too large")) << huge.error().message;
  EXPECT_FALSE(
      parse_request("1000000000x1000000000x1000000000x1000000000", true, PlacementMode::kTorus));
  EXPECT_EQ(parse_shape("1000x1000x1000")->size(), 3u);  // exactly the limit
  EXPECT_FALSE(parse_shape("1000x1000x1001"));
}

// fuzz_cluster_config: an administrator's uid beyond INT_MAX was accepted and wrapped to another
// number (the config written back no longer read the same); settings in seconds took infinity
// and 1e300, which overflow when turned into milliseconds.
TEST(FuzzFindingsTest, ConfigUidsAndSecondsStayInRange) {
  const std::string head = "[cluster]\nmachine = \"flat:4\"\nstore = \"sqlite:/tmp/x.db\"\n";
  Result<ClusterConfig> huge_uid =
      parse_cluster_config(head + "[controller]\nadmins = [0, 6011004444400]\n", "t.toml");
  ASSERT_FALSE(huge_uid);
  EXPECT_TRUE(says(huge_uid.error(), "admins")) << huge_uid.error().message;
  EXPECT_TRUE(parse_cluster_config(head + "[controller]\nadmins = [0, 2147483647]\n", "t.toml"));
  for (const char* seconds : {"inf", "nan", "1e300"}) {
    Result<ClusterConfig> bad = parse_cluster_config(
        head + "[controller]\nheartbeat_interval = " + seconds + "\n", "t.toml");
    ASSERT_FALSE(bad) << seconds;
    EXPECT_TRUE(says(bad.error(), "heartbeat_interval")) << bad.error().message;
  }
  Result<ClusterConfig> fine =
      parse_cluster_config(head + "[controller]\nkill_grace = 2.5\n", "t.toml");
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->controller.kill_grace, 2.5);
}

// fuzz_controller: a submission whose shape had huge extents overflowed a long while its volume
// was compared with `nodes`, before the extents were checked against the machine.
TEST(FuzzFindingsTest, ASubmittedShapeWithHugeExtentsIsRefusedWithoutOverflow) {
  Machine machine = *Machine::parse("torus:4x4x4");
  ControllerSettings settings;
  v1::JobSpec spec;
  spec.add_argv("true");
  spec.set_cwd("/tmp");
  for (int extent : {2000000000, 2000000000, 2000000000}) spec.add_shape(extent);
  spec.set_nodes(5);
  Result<StoredJob> huge = job_from_spec(spec, machine, settings);
  ASSERT_FALSE(huge);
  EXPECT_TRUE(says(huge.error(), "larger than the machine")) << huge.error().message;

  spec.clear_shape();
  for (int extent : {4, 4, 8}) spec.add_shape(extent);  // each fits, together they do not
  Result<StoredJob> too_big = job_from_spec(spec, machine, settings);
  ASSERT_FALSE(too_big);
  EXPECT_TRUE(says(too_big.error(), "4x4x8 is larger than torus:4x4x4 (64 nodes)"))
      << too_big.error().message;

  spec.clear_shape();
  for (int extent : {2, 2}) spec.add_shape(extent);
  Result<StoredJob> mismatch = job_from_spec(spec, machine, settings);
  ASSERT_FALSE(mismatch);
  EXPECT_TRUE(says(mismatch.error(), "5 does not match the shape's 4 nodes"))
      << mismatch.error().message;
  spec.set_nodes(4);
  Result<StoredJob> fine = job_from_spec(spec, machine, settings);
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->request.nodes, 4);
}

}  // namespace
}  // namespace trellis
