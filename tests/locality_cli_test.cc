// End-to-end checks of the commands issue 3 adds: they run the built `trellis` binary.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"

namespace trellis {
namespace {

using test::CommandRun;
using test::run_trellis;

TEST(LocalityCli, CheckRoutingExitStatusSaysTheVerdict) {
  CommandRun ok = run_trellis("topo check-routing --machine mesh:4x4x6:wrap=z");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("acyclic"), std::string::npos);
  CommandRun cyc = run_trellis("topo check-routing --machine mesh:3x3x4:wrap=z --rules literal");
  EXPECT_EQ(cyc.status, 1) << cyc.output;
  EXPECT_NE(cyc.output.find("CYCLE of"), std::string::npos);
  CommandRun bad =
      run_trellis("topo check-routing --machine mesh:3x3x4 --rules 'literal,phase=soon'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("phase='soon'"), std::string::npos);
}

TEST(LocalityCli, CompareAllocRunsOnRedStormAndTheBigFatTree) {
  CommandRun rs = run_trellis("compare-alloc --machine mesh:27x16x24:wrap=z --jobs 40 --seed 3");
  EXPECT_EQ(rs.status, 0) << rs.output;
  for (const char* name : {"linear-bestfit-snake", "mc1x1", "buddy", "sorted-free-list-hilbert"})
    EXPECT_NE(rs.output.find(name), std::string::npos) << name;
  EXPECT_EQ(rs.output.find("fattree-units"), std::string::npos);
  CommandRun ft = run_trellis("compare-alloc --machine fattree:16,16,8 --jobs 40");
  EXPECT_EQ(ft.status, 0) << ft.output;
  EXPECT_NE(ft.output.find("fattree-units"), std::string::npos);
  EXPECT_EQ(ft.output.find("mc1x1"), std::string::npos);
  CommandRun bad = run_trellis("compare-alloc --machine fattree:16,16,8 --alloc mc1x1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("mc1x1"), std::string::npos);
}

TEST(LocalityCli, BenchMcAgreesWithTheNaiveReference) {
  CommandRun quick = run_trellis("bench mc --quick --repeat 1");
  EXPECT_EQ(quick.status, 0) << quick.output;
  EXPECT_NE(quick.output.find("speed-up"), std::string::npos);
  EXPECT_EQ(quick.output.find(" NO"), std::string::npos) << quick.output;
}

TEST(LocalityCli, AllocAndListCoverTheNewAllocators) {
  CommandRun list = run_trellis("list");
  EXPECT_EQ(list.status, 0);
  for (const char* name : {"linear-sumsq-rowmajor", "mc1x1", "fattree-units", "buddy"})
    EXPECT_NE(list.output.find(name), std::string::npos) << name;
  CommandRun alloc = run_trellis(
      "alloc --machine fattree:4,4,4 --alloc fattree-units --request 8 --busy 'n[0-2]'");
  EXPECT_EQ(alloc.status, 0) << alloc.output;
  EXPECT_NE(alloc.output.find("n[4-11]"), std::string::npos) << alloc.output;
}

}  // namespace
}  // namespace trellis
