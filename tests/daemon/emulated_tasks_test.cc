// Emulated tasks (daemon/emulated_tasks.h): what each command does, and signals and gang switches
// acting on their clocks as on processes; the repeated-launch rules TaskRunner keeps.
#include "daemon/emulated_tasks.h"

#include <csignal>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::eventually;

TaskSpec spec(int64_t job, int attempt, const std::string& node, std::vector<std::string> argv) {
  TaskSpec s;
  s.key = {job, attempt, node};
  s.argv = std::move(argv);
  return s;
}

std::optional<TaskInfo> find(const Tasks& tasks, const TaskKey& key) {
  for (const TaskInfo& t : tasks.tasks())
    if (t.key == key) return t;
  return std::nullopt;
}

bool ended(const Tasks& tasks, const TaskKey& key) {
  std::optional<TaskInfo> t = find(tasks, key);
  return t && !t->running;
}

TEST(EmulatedTasksTest, CommandsEndAsTheirRuleSaysAndExitsAreAnnounced) {
  std::atomic<int> announced{0};
  EmulatedTasks tasks({.on_exit = [&] { ++announced; }});
  ASSERT_TRUE(*tasks.launch(spec(1, 1, "n0", {"/bin/true"})));
  ASSERT_TRUE(*tasks.launch(spec(2, 1, "n0", {"false"})));
  ASSERT_TRUE(*tasks.launch(spec(3, 1, "n0", {"sleep", "3600"})));
  ASSERT_TRUE(*tasks.launch(spec(4, 1, "n0", {"/usr/bin/sleep", "0.05"})));
  EXPECT_FALSE(tasks.launch(spec(5, 1, "n0", {})));  // no command
  ASSERT_TRUE(eventually([&] { return ended(tasks, {1, 1, "n0"}) && ended(tasks, {2, 1, "n0"}); }));
  ASSERT_TRUE(eventually([&] { return ended(tasks, {4, 1, "n0"}); }));
  EXPECT_EQ(find(tasks, {1, 1, "n0"})->exit_code, 0);
  EXPECT_EQ(find(tasks, {2, 1, "n0"})->exit_code, 1);
  EXPECT_EQ(find(tasks, {4, 1, "n0"})->exit_code, 0);
  EXPECT_EQ(find(tasks, {4, 1, "n0"})->signal, 0);
  EXPECT_TRUE(find(tasks, {3, 1, "n0"})->running);
  EXPECT_GE(announced.load(), 1);
  EXPECT_EQ(tasks.unacknowledged_exits().size(), 3u);
  // No process: nothing for a freezer or a kill(-pg) to act on.
  EXPECT_EQ(find(tasks, {3, 1, "n0"})->process_group, 0);
}

TEST(EmulatedTasksTest, SignalsEndOrStopThemAsUnhandledSignalsWould) {
  EmulatedTasks tasks({});
  for (const char* node : {"n0", "n1"})
    ASSERT_TRUE(*tasks.launch(spec(7, 1, node, {"sleep", "600"})));
  ASSERT_TRUE(*tasks.launch(spec(8, 1, "n0", {"sleep", "600"})));
  EXPECT_EQ(tasks.signal(7, 1, SIGWINCH, {}), 2);  // ignored
  EXPECT_TRUE(find(tasks, {7, 1, "n0"})->running);
  EXPECT_EQ(tasks.signal(7, 0, SIGUSR1, {}), 2);  // kills, as it does an unhandled process
  EXPECT_EQ(find(tasks, {7, 1, "n1"})->signal, SIGUSR1);
  EXPECT_EQ(find(tasks, {7, 1, "n1"})->exit_code, 0);
  EXPECT_TRUE(find(tasks, {8, 1, "n0"})->running);               // another job
  EXPECT_EQ(tasks.signal(7, 0, SIGTERM, {}), 0);                 // nothing runs any more
  EXPECT_EQ(tasks.signal(8, 1, 0, std::chrono::seconds(5)), 1);  // terminate: SIGTERM at once
  EXPECT_EQ(find(tasks, {8, 1, "n0"})->signal, SIGTERM);
}

// A stopped or frozen clock does not run: a task of 1 s stopped at once is still running well
// after its second, and ends once it runs again.
TEST(EmulatedTasksTest, StoppedAndFrozenClocksStandStill) {
  EmulatedTasks tasks({});
  ASSERT_TRUE(*tasks.launch(spec(1, 1, "n0", {"sleep", "1"})));
  ASSERT_TRUE(*tasks.launch(spec(2, 1, "n0", {"sleep", "1"})));
  EXPECT_EQ(tasks.signal(1, 1, SIGSTOP, {}), 1);
  tasks.set_frozen(2, 1, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(find(tasks, {1, 1, "n0"})->running);
  EXPECT_TRUE(find(tasks, {2, 1, "n0"})->running);
  // Both held: SIGCONT does not thaw a frozen job.
  tasks.signal(2, 1, SIGSTOP, {});
  tasks.signal(2, 1, SIGCONT, {});
  tasks.signal(1, 1, SIGCONT, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(find(tasks, {2, 1, "n0"})->running);
  EXPECT_TRUE(ended(tasks, {1, 1, "n0"}));
  EXPECT_EQ(find(tasks, {1, 1, "n0"})->signal, 0);
  tasks.set_frozen(2, 1, false);
  EXPECT_TRUE(eventually([&] { return ended(tasks, {2, 1, "n0"}); }));
  EXPECT_EQ(find(tasks, {2, 1, "n0"})->exit_code, 0);
}

TEST(EmulatedTasksTest, ARepeatedLaunchNeverRunsATaskTwiceAndALaterAttemptEndsTheOlder) {
  EmulatedTasks tasks({});
  ASSERT_TRUE(*tasks.launch(spec(3, 1, "n0", {"sleep", "600"})));
  EXPECT_FALSE(*tasks.launch(spec(3, 1, "n0", {"sleep", "600"})));  // known
  ASSERT_TRUE(*tasks.launch(spec(3, 2, "n0", {"true"})));
  EXPECT_EQ(find(tasks, {3, 1, "n0"})->signal, SIGKILL);
  EXPECT_FALSE(*tasks.launch(spec(3, 1, "n0", {"true"})));  // superseded
  ASSERT_TRUE(eventually([&] { return ended(tasks, {3, 2, "n0"}); }));
  tasks.acknowledge({{3, 1, "n0"}, {3, 2, "n0"}});
  EXPECT_TRUE(tasks.tasks().empty());
  // Acknowledged, then launched again: not run, its exit heard again.
  EXPECT_FALSE(*tasks.launch(spec(3, 2, "n0", {"sleep", "600"})));
  ASSERT_EQ(tasks.unacknowledged_exits().size(), 1u);
  EXPECT_EQ(tasks.unacknowledged_exits()[0].key, (TaskKey{3, 2, "n0"}));
  EXPECT_FALSE(tasks.record_ended({3, 2, "n0"}, 0, SIGTERM));
  EXPECT_TRUE(tasks.record_ended({4, 1, "n0"}, 0, SIGTERM));
}

// A batch script stands for its one command: sbatch --wrap 'sleep 60' lasts 60 s when emulated.
TEST(EmulatedTasksTest, ABatchScriptOfOneCommandIsThatCommand) {
  using V = std::vector<std::string>;
  EXPECT_EQ(EmulatedTasks::command_of_script("#!/bin/sh\n# wrap\nsleep 300\n"),
            (V{"sleep", "300"}));
  EXPECT_EQ(EmulatedTasks::command_of_script("#!/bin/bash\n#SBATCH -N 2\n\n  exec sleep 5 \n"),
            (V{"sleep", "5"}));
  EXPECT_EQ(EmulatedTasks::command_of_script("#!/bin/sh\nfalse"), (V{"false"}));
  EXPECT_EQ(EmulatedTasks::command_of_script("#!/bin/sh\nsleep 300\nsleep 300\n"), (V{"sh"}));
  EXPECT_EQ(EmulatedTasks::command_of_script("#!/bin/sh\n# nothing\n"), (V{"sh"}));
  EXPECT_EQ(EmulatedTasks::command_of_script(""), (V{"sh"}));
}

}  // namespace
}  // namespace trellis
