// A count that no box holds, on a live cluster whose allocator places only boxes: trellisd rounds
// it up to the smallest box that holds it, as `trellis sim` does (sched/request_shaping.h), and
// places it on the very box the simulator chooses for the same request on the same free machine.
// `--mode any` cannot be honoured by such an allocator and is refused with the reason.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../cli_run.h"
#include "daemon_test_support.h"
#include "live_cluster.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::eventually;
using testing::LiveCluster;
using testing::TempDir;

// The cells of jobs.csv's first data row, by column name.
std::map<std::string, std::string> first_row(const std::string& csv) {
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
    return cells;
  };
  std::vector<std::string> names = split(header), cells = split(row);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < names.size() && i < cells.size(); ++i) out[names[i]] = cells[i];
  return out;
}

// "a,b,c": the numbers of a box's shape or origin, however it was written ("3x13x1", [3,13,1]).
std::string as_list(std::vector<int> values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

std::vector<int> numbers_in(const std::string& text) {
  std::vector<int> out;
  std::string digits;
  for (char c : text + " ") {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (!digits.empty()) {
      out.push_back(std::stoi(digits));
      digits.clear();
    }
  }
  return out;
}

TEST(BoxPaddingLiveTest, ACountNoBoxHoldsRunsOnTheBoxTheSimulatorChooses) {
  const std::string machine = "torus:16x16x16";
  LiveCluster cluster("--machine " + machine + " --agents 4");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;

  // No box of 37 nodes fits a 16x16x16 torus (37 is prime and above 16): the smallest box that
  // holds it has 39 nodes (3x13).
  TempDir work;
  int64_t id = cluster.submit("-N 37 -o " + (work / "out-%j") + " -- true");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "CD"; }, std::chrono::seconds(120)))
      << cluster.trellis("show job " + std::to_string(id)).output;
  nlohmann::json live = cluster.job(id);
  ASSERT_TRUE(live.contains("box")) << live.dump();
  EXPECT_EQ(live["nodes"], 37) << "the store keeps the count asked";

  // The simulator, given the same request on the same (empty) machine.
  {
    std::ofstream jobs(work / "jobs.json");
    jobs << R"({"jobs": [{"run": 1, "nodes": 37}]})";
  }
  CommandRun sim =
      test::run_trellis("sim --machine " + machine + " --workload " + (work / "jobs.json") +
                        " --sched easy --out " + (work / "sim"));
  ASSERT_EQ(sim.status, 0) << sim.output;
  std::map<std::string, std::string> row = first_row(test::read_text(work / "sim/jobs.csv"));
  ASSERT_EQ(row["requested_nodes"], "37");
  ASSERT_EQ(row["nodes"], "39");

  EXPECT_EQ(as_list(numbers_in(row["box_shape"])),
            as_list(live["box"]["shape"].get<std::vector<int>>()));
  EXPECT_EQ(as_list(numbers_in(row["box_origin"])),
            as_list(live["box"]["origin"].get<std::vector<int>>()));
  EXPECT_EQ(row["hostlist"], live["nodelist"].get<std::string>());

  // An allocator that places only boxes cannot give a job scattered nodes: refused, with why.
  CommandRun any = cluster.trellis("submit -N 37 --mode any -- true");
  EXPECT_NE(any.status, 0) << any.output;
  EXPECT_TRUE(test::contains(any, "places every job as one box")) << any.output;
}

}  // namespace
}  // namespace trellis
