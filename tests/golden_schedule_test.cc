// Golden schedules: the simulator's schedules for a set of traces, policies and allocators
// (tests/golden/schedules.txt) must not change by accident. Each run's jobs.csv is reduced to
// every job's id, start, end and hostlist and compared with the recorded file; a refactoring of the
// scheduling core must reproduce them exactly. TRELLIS_RECORD_GOLDEN=1 records them instead.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "build_paths.h"
#include "cli_run.h"
#include "golden_list.h"
#include "sim/outputs.h"
#include "sim/swf.h"
#include "sim_test_support.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

using test::GoldenRun;

std::string expand(std::string text) {
  const std::string key = "${DATA}", value = testing::workloads_dir();
  for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), value);
  return text;
}

std::vector<GoldenRun> golden_runs() {
  auto runs = test::read_golden_list(TRELLIS_SOURCE_DIR + "/tests/golden/schedules.txt");
  for (GoldenRun& run : runs) run.arguments = expand(run.arguments);
  return runs;
}

// "id,start,end,hostlist" per job that ran, in the order of the CSV.
std::string schedule_of(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  auto header = parse_csv_line(line);
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  size_t id = column("id"), start = column("start"), end = column("end"),
         hostlist = column("hostlist"), state = column("state");
  std::string out = "id,start,end,hostlist\n";
  while (std::getline(in, line)) {
    auto f = parse_csv_line(line);
    if (f.size() != header.size() || f[state] == "RJ") continue;
    out += f[id] + "," + f[start] + "," + f[end] + "," + f[hostlist] + "\n";
  }
  return out;
}

class GoldenSchedules : public ::testing::TestWithParam<GoldenRun> {};

TEST_P(GoldenSchedules, MatchTheRecordedSchedule) {
  const GoldenRun& run = GetParam();
  test::TempDir out;
  test::CommandRun sim = test::run_trellis("sim " + run.arguments + " --quiet --out " + out.str());
  ASSERT_EQ(sim.status, 0) << run.arguments << "\n" << sim.output;
  std::string schedule = schedule_of(test::read_text(out.path() / "jobs.csv"));
  fs::path golden = fs::path(TRELLIS_SOURCE_DIR) / "tests/golden" / (run.name + ".csv.gz");
  if (std::getenv("TRELLIS_RECORD_GOLDEN")) {
    gzFile file = gzopen(golden.c_str(), "wb9");
    ASSERT_NE(file, nullptr) << golden;
    gzwrite(file, schedule.data(), static_cast<unsigned>(schedule.size()));
    gzclose(file);
    GTEST_SKIP() << "recorded " << golden;
  }
  auto recorded = read_text_file(golden.string());
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_GT(std::count(recorded->begin(), recorded->end(), '\n'), 100);
  // Compare line by line so that a failure names the first job that differs.
  std::istringstream want(*recorded), got(schedule);
  std::string a, b;
  for (int line = 1; std::getline(want, a); ++line) {
    ASSERT_TRUE(std::getline(got, b)) << run.name << ": the run has fewer jobs than recorded";
    ASSERT_EQ(b, a) << run.name << ": first difference on line " << line;
  }
  EXPECT_FALSE(std::getline(got, b)) << run.name << ": the run has more jobs than recorded";
}

INSTANTIATE_TEST_SUITE_P(Recorded, GoldenSchedules, ::testing::ValuesIn(golden_runs()),
                         [](const ::testing::TestParamInfo<GoldenRun>& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace trellis
