// Golden outputs of `trellis gang-sim` (tests/golden/gang_sim.txt): the gang simulation's
// figures must not change by accident, in particular when it becomes a mode of the one simulator
// loop. The wall-time column is left out of the comparison. TRELLIS_RECORD_GOLDEN=1 records them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "build_paths.h"
#include "cli_run.h"
#include "golden_list.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

using GangSimRun = test::GoldenRun;

std::vector<GangSimRun> gang_sim_runs() {
  return test::read_golden_list(TRELLIS_SOURCE_DIR + "/tests/golden/gang_sim.txt");
}

// The output without the last column of tables whose header ends in "wall s".
std::string without_wall_times(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.size() >= 6 && line.compare(line.size() - 6, 6, "wall s") == 0) {
      in_table = true;
      line.erase(line.size() - 6);
    } else if (in_table && !line.empty() && line[0] != ' ') {
      line.erase(line.find_last_not_of(' ', line.find_last_of(' ')) + 1);
    } else {
      in_table = false;
    }
    out += line + "\n";
  }
  return out;
}

class GoldenGangSim : public ::testing::TestWithParam<GangSimRun> {};

TEST_P(GoldenGangSim, MatchesTheRecordedOutput) {
  const GangSimRun& run = GetParam();
  test::CommandRun out = test::run_trellis("gang-sim " + run.arguments);
  ASSERT_EQ(out.status, 0) << run.arguments << "\n" << out.output;
  std::string got = without_wall_times(out.output);
  fs::path golden =
      fs::path(TRELLIS_SOURCE_DIR) / "tests/golden" / ("gang-sim-" + run.name + ".txt");
  if (std::getenv("TRELLIS_RECORD_GOLDEN")) {
    std::ofstream(golden) << got;
    GTEST_SKIP() << "recorded " << golden;
  }
  std::ifstream want_in(golden);
  ASSERT_TRUE(want_in) << golden;
  std::stringstream want;
  want << want_in.rdbuf();
  ASSERT_GT(want.str().size(), 100u);
  EXPECT_EQ(got, want.str()) << run.name;
}

INSTANTIATE_TEST_SUITE_P(Recorded, GoldenGangSim, ::testing::ValuesIn(gang_sim_runs()),
                         [](const ::testing::TestParamInfo<GangSimRun>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace trellis
