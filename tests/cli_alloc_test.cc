// End-to-end: run the built `trellis` binary and check its exit status and messages (issue 2:
// bad specs, bad shapes, shapes larger than the machine and unsatisfiable requests exit 2 with a
// clear message; a good request prints the placement and the largest free box left; a request
// that fits the machine but not the free nodes now exits 3).
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"

namespace trellis {
namespace {

using test::CommandRun;
using test::run_trellis;

void expect_contains(const CommandRun& r, const std::string& text) {
  EXPECT_NE(r.output.find(text), std::string::npos) << "missing '" << text << "' in:\n" << r.output;
}

TEST(CliAlloc, PrintsThePlacementAndTheLargestFreeBoxLeft) {
  CommandRun r = run_trellis("alloc --machine torus:8x8x8 --busy 'n[0-40]' --request 4x2x2");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_contains(r, "placed:     box ");
  expect_contains(r, "(16)");
  expect_contains(r, "avg hops:   ");
  expect_contains(r, "free after: 455 nodes");
  expect_contains(r, "left:       largest free box ");
}

TEST(CliAlloc, EverySearchGivesTheSameDecision) {
  std::string base = "alloc -m mesh:12x9:wrap=x -b 'n[0-13,40-47,90]' -r 3x4 ";
  CommandRun production = run_trellis(base);
  ASSERT_EQ(production.status, 0) << production.output;
  for (std::string search : {"brute", "embodiment1"}) {
    CommandRun other = run_trellis(base + "-o search=" + search);
    EXPECT_EQ(other.status, 0);
    EXPECT_EQ(other.output, production.output) << search;
  }
}

TEST(CliAlloc, BadMachineSpecExitsTwo) {
  CommandRun r = run_trellis("alloc --machine torus:8xq --request 4");
  EXPECT_EQ(r.status, 2);
  expect_contains(r, "machine spec 'torus:8xq'");
}

TEST(CliAlloc, BadShapeExitsTwo) {
  CommandRun r = run_trellis("alloc --machine torus:8x8 --request 4x0");
  EXPECT_EQ(r.status, 2);
  expect_contains(r, "--request: shape '4x0'");
}

TEST(CliAlloc, ShapeLargerThanTheMachineExitsTwo) {
  CommandRun r = run_trellis("alloc --machine torus:8x8 --request 9x2");
  EXPECT_EQ(r.status, 2);
  expect_contains(r, "shape 9x2 does not fit in 8x8 torus in any orientation");
  CommandRun count = run_trellis("alloc --machine torus:8x8 --request 65");
  EXPECT_EQ(count.status, 2);
  expect_contains(count, "65 nodes");
}

TEST(CliAlloc, RequestThatCannotBePlacedNowExitsThree) {
  CommandRun r =
      run_trellis("alloc --machine torus:4x4 --busy 'n[5,10]' --request 3x3 --mode mesh");
  EXPECT_EQ(r.status, 3);
  expect_contains(r, "cannot place the job now: no free box 3x3 now");
}

TEST(CliAlloc, BadBusyListAndOptionExitTwo) {
  CommandRun busy = run_trellis("alloc --machine torus:8x8 --busy 'n[0-99]' --request 2");
  EXPECT_EQ(busy.status, 2);
  expect_contains(busy, "--busy");
  CommandRun option = run_trellis("alloc --machine torus:8x8 --request 2 -o search=fast");
  EXPECT_EQ(option.status, 2);
  expect_contains(option, "search 'fast'");
}

TEST(CliBench, QuickRunAgreesAndPrintsRatios) {
  CommandRun r = run_trellis("bench contiguous --quick --repeat 1");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_contains(r, "emb1/prod");
  expect_contains(r, "All searches chose the same box in every cell.");
}

// Shared-node placement against whole nodes: runs, checks that no core was given twice, and
// prints both medians and their ratio.
TEST(CliBench, SharingQuickRunPrintsBothPlacementsAndTheRatio) {
  CommandRun r = run_trellis("bench sharing --quick --decisions 300");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_contains(r, "shared (cores, memory, GPUs)");
  expect_contains(r, "whole nodes (today's)");
  expect_contains(r, "shared / whole median: ");
}

}  // namespace
}  // namespace trellis
