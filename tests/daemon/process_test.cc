// /proc readers of daemon/process.h must answer "not running" / -1 for processes that exit while
// they are read, not throw: reading /proc/PID/stat of a process being reaped fails with ESRCH,
// which std::ifstream turned into an exception that killed agent launches under load.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "daemon/process.h"

namespace trellis {
namespace {

TEST(Process, ReadersSurviveProcessesExitingWhileTheyRead) {
  std::atomic<bool> done{false};
  std::atomic<int> reaped{0};
  // Reaps every child as soon as it exits, racing the readers below.
  std::thread reaper([&] {
    while (!done) {
      if (::waitpid(-1, nullptr, WNOHANG) > 0) {
        ++reaped;
      } else {
        std::this_thread::yield();
      }
    }
  });
  constexpr int kChildren = 1500;
  for (int i = 0; i < kChildren; ++i) {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ASSERT_GT(child, 0);
    EXPECT_NO_THROW({
      (void)process_running(child);
      (void)process_start_time(child);
      (void)process_command_line(child);
    });
  }
  while (reaped < kChildren) std::this_thread::yield();
  done = true;
  reaper.join();
}

TEST(Process, TellsALiveProcessFromAGoneOne) {
  EXPECT_TRUE(process_running(::getpid()));
  EXPECT_GT(process_start_time(::getpid()), 0);
  EXPECT_NE(process_command_line(::getpid()).find("trellis"), std::string::npos);
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(process_running(child));
  EXPECT_EQ(process_start_time(child), -1);
  EXPECT_EQ(process_command_line(child), "");
  EXPECT_TRUE(process_arguments(child).empty());
}

// A restarted daemon must get back exactly the arguments it had, spaces and empty ones included.
TEST(Process, ArgumentsAreReadBackAsGiven) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);  // so that the kill below takes its sleep too
    ::execl("/bin/sh", "sh", "-c", "sleep 30; true", "", "with space", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(child, 0);
  std::vector<std::string> expected{"sh", "-c", "sleep 30; true", "", "with space"};
  std::vector<std::string> seen;
  for (int i = 0; i < 500 && seen != expected; ++i) {  // until the exec has happened
    seen = process_arguments(child);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(process_command_line(child), "sh -c sleep 30; true  with space");
  ::kill(-child, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace trellis
