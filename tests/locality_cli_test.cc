// End-to-end checks of the commands issue 3 adds: they run the built `trellis` binary.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

namespace trellis {
namespace {

struct CommandRun {
  int status = -1;
  std::string out;
};

CommandRun run(const std::string& args) {
  std::string cmd = std::string(TRELLIS_BINARY) + " " + args + " 2>&1";
  CommandRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

TEST(LocalityCli, CheckRoutingExitStatusSaysTheVerdict) {
  CommandRun ok = run("topo check-routing --machine mesh:4x4x6:wrap=z");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("acyclic"), std::string::npos);
  CommandRun cyc = run("topo check-routing --machine mesh:3x3x4:wrap=z --rules literal");
  EXPECT_EQ(cyc.status, 1) << cyc.out;
  EXPECT_NE(cyc.out.find("CYCLE of"), std::string::npos);
  CommandRun bad = run("topo check-routing --machine mesh:3x3x4 --rules 'literal,phase=soon'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("phase='soon'"), std::string::npos);
}

TEST(LocalityCli, CompareAllocRunsOnRedStormAndTheBigFatTree) {
  CommandRun rs = run("compare-alloc --machine mesh:27x16x24:wrap=z --jobs 40 --seed 3");
  EXPECT_EQ(rs.status, 0) << rs.out;
  for (const char* name : {"linear-bestfit-snake", "mc1x1", "buddy", "sorted-free-list-hilbert"})
    EXPECT_NE(rs.out.find(name), std::string::npos) << name;
  EXPECT_EQ(rs.out.find("fattree-units"), std::string::npos);
  CommandRun ft = run("compare-alloc --machine fattree:16,16,8 --jobs 40");
  EXPECT_EQ(ft.status, 0) << ft.out;
  EXPECT_NE(ft.out.find("fattree-units"), std::string::npos);
  EXPECT_EQ(ft.out.find("mc1x1"), std::string::npos);
  CommandRun bad = run("compare-alloc --machine fattree:16,16,8 --alloc mc1x1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("mc1x1"), std::string::npos);
}

TEST(LocalityCli, BenchMcAgreesWithTheNaiveReference) {
  CommandRun quick = run("bench mc --quick --repeat 1");
  EXPECT_EQ(quick.status, 0) << quick.out;
  EXPECT_NE(quick.out.find("speed-up"), std::string::npos);
  EXPECT_EQ(quick.out.find(" NO"), std::string::npos) << quick.out;
}

TEST(LocalityCli, AllocAndListCoverTheNewAllocators) {
  CommandRun list = run("list");
  EXPECT_EQ(list.status, 0);
  for (const char* name : {"linear-sumsq-rowmajor", "mc1x1", "fattree-units", "buddy"})
    EXPECT_NE(list.out.find(name), std::string::npos) << name;
  CommandRun alloc =
      run("alloc --machine fattree:4,4,4 --alloc fattree-units --request 8 --busy 'n[0-2]'");
  EXPECT_EQ(alloc.status, 0) << alloc.out;
  EXPECT_NE(alloc.out.find("n[4-11]"), std::string::npos) << alloc.out;
}

}  // namespace
}  // namespace trellis
