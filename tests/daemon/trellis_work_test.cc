// trellis-work (src/runtime/trellis_work.c), the job process of bench gang-live's DQT experiment:
// it must run for its running time and not count time it spends frozen. The assertions are
// lower bounds on wall time, which a slow machine only makes easier to meet.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "../build_paths.h"

namespace trellis {
namespace {

using Clock = std::chrono::steady_clock;

pid_t start_work(const std::vector<std::string>& args, int stderr_fd = -1) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (stderr_fd >= 0) ::dup2(stderr_fd, 2);
    std::vector<char*> argv;
    std::string program = TRELLIS_WORK_BINARY;
    argv.push_back(program.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(TrellisWorkTest, TimeStoppedDoesNotCountAsWork) {
  // 0.4 s of work; stopped for 0.8 s after 0.1 s. Counting the stopped time would end it as
  // soon as it is continued, about 0.9 s after its start; it must run 0.3 s more.
  auto start = Clock::now();
  pid_t pid = start_work({"0.4", "5"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  double stopped_until = seconds_since(start);
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  EXPECT_EQ(exit_status(pid), 0);
  double took = seconds_since(start);
  // Work before the stop (at most the 0.1 s until it) plus at most half a tick of credit for
  // the stopped tick: at least 0.4 - 0.1 - 0.0025 s of work remain after the continue.
  EXPECT_GE(took - stopped_until, 0.29)
      << "took " << took << " s, stopped until " << stopped_until << " s";
}

TEST(TrellisWorkTest, RunsForItsRunningTime) {
  auto start = Clock::now();
  pid_t pid = start_work({"0.3"});
  ASSERT_GT(pid, 0);
  EXPECT_EQ(exit_status(pid), 0);
  EXPECT_GE(seconds_since(start), 0.3);
}

TEST(TrellisWorkTest, BadArgumentsAreNamed) {
  for (const auto& [args, named] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{{{"ten"}, "SECONDS"},
                                                                     {{"-1"}, "SECONDS"},
                                                                     {{"1", "0"}, "TICK_MS"},
                                                                     {{"1", "5000"}, "TICK_MS"},
                                                                     {{}, "usage"}}) {
    std::FILE* captured = std::tmpfile();
    ASSERT_NE(captured, nullptr);
    pid_t pid = start_work(args, ::fileno(captured));
    EXPECT_EQ(exit_status(pid), 2);
    std::rewind(captured);
    char text[512] = {};
    size_t n = std::fread(text, 1, sizeof text - 1, captured);
    std::fclose(captured);
    EXPECT_NE(std::string(text, n).find(named), std::string::npos) << std::string(text, n);
  }
}

}  // namespace
}  // namespace trellis
