// The one shared helper header of the end-to-end tests: run the built `trellis` binary (or any
// shell command), read a file whole, and a scratch directory that removes itself.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "build_paths.h"

namespace trellis::test {

struct CommandRun {
  int status = -1;     // exit status; -1 if it did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell, capturing its stdout and stderr together.
inline CommandRun run_command(const std::string& command) {
  CommandRun r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// Runs `trellis ARGS` through the shell (ARGS may hold quotes and redirections).
inline CommandRun run_trellis(const std::string& args) {
  return run_command(std::string(TRELLIS_BINARY) + " " + args);
}

inline bool contains(const CommandRun& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

// The whole content of the file at `path` ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "trellis-test-XXXXXX").string();
    if (mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace trellis::test
