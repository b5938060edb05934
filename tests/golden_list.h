// The list files of the golden tests (tests/golden/*.txt): one run per line, "NAME | arguments",
// with '#' comment lines. Shared by the golden schedule and gang-sim tests.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace trellis::test {

struct GoldenRun {
  std::string name, arguments;
};

inline std::vector<GoldenRun> read_golden_list(const std::string& path) {
  auto trim = [](const std::string& s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  std::ifstream in(path);
  std::vector<GoldenRun> runs;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t bar = line.find('|');
    runs.push_back({trim(line.substr(0, bar)), trim(line.substr(bar + 1))});
  }
  return runs;
}

}  // namespace trellis::test
