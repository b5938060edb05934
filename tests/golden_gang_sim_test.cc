// Golden outputs of `trellis gang-sim` (tests/golden/gang_sim.txt): the gang simulation's
// figures must not change by accident, in particular when it becomes a mode of the one simulator
// loop. The wall-time column is left out of the comparison. TRELLIS_RECORD_GOLDEN=1 records them.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trellis {
namespace {

namespace fs = std::filesystem;

struct GangSimRun {
  std::string name, arguments;
};

std::vector<GangSimRun> gang_sim_runs() {
  std::ifstream in(TRELLIS_SOURCE_DIR "/tests/golden/gang_sim.txt");
  std::vector<GangSimRun> runs;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t bar = line.find('|');
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    runs.push_back({trim(line.substr(0, bar)), trim(line.substr(bar + 1))});
  }
  return runs;
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
  std::string pattern = (fs::temp_directory_path() / "trellis-gangsim-XXXXXX").string();
  fs::path dir = mkdtemp(pattern.data());
  std::string command = std::string(TRELLIS_BINARY) + " gang-sim " + run.arguments + " > " +
                        (dir / "out.txt").string() + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream out_in(dir / "out.txt");
  std::stringstream out;
  out << out_in.rdbuf();
  fs::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << out.str();
  std::string got = without_wall_times(out.str());
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
