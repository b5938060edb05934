// The shepherd (daemon/shepherd.h, daemon/shepherd_client.h): plans cross the socket intact, a
// malformed plan is refused, a job's status reaches its exit file and the notice pipe, a
// shepherd that dies is replaced, and one whose agent is gone still records its jobs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "daemon/process.h"
#include "daemon/shepherd_client.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

ShepherdPlan plan_in(const fs::path& dir, const std::string& name, std::vector<std::string> argv) {
  ShepherdPlan plan;
  plan.label = "test " + name + ": ";
  plan.argv = argv;
  plan.candidates = {argv[0]};
  plan.env = {"PATH=/usr/bin:/bin", "TRELLIS_TEST=" + name};
  plan.cwd = dir.string();
  plan.output = (dir / (name + ".out")).string();
  plan.error = plan.output;
  plan.pid_file = (dir / (name + ".pid")).string();
  plan.exit_file = (dir / (name + ".exit")).string();
  plan.notice = name + "\n";
  return plan;
}

// Waits (without a time assertion) until the shepherd has written the exit file.
std::string wait_for_file(const fs::path& path) {
  for (int i = 0; i < 3000 && !fs::exists(path); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return text;
}

// The status part ("EXIT SIGNAL") of an exit file, without the usage after it.
std::string wait_for_status(const fs::path& path) {
  std::istringstream line(wait_for_file(path));
  std::string exit_code, signal;
  line >> exit_code >> signal;
  return exit_code + " " + signal;
}

TEST(ShepherdPlan, RoundTripsAndRefusesEveryTruncation) {
  ShepherdPlan plan = plan_in("/tmp", "x", {"/bin/echo", "a b", ""});
  plan.switch_user = true;
  plan.uid = 1234;
  plan.gid = 99;
  plan.groups = {1, 2, 3};
  std::string bytes = encode_plan(plan);
  Result<ShepherdPlan> back = decode_plan(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->argv, plan.argv);
  EXPECT_EQ(back->env, plan.env);
  EXPECT_EQ(back->groups, plan.groups);
  EXPECT_EQ(back->uid, 1234u);
  EXPECT_TRUE(back->switch_user);
  EXPECT_EQ(back->notice, plan.notice);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_FALSE(decode_plan(bytes.substr(0, cut))) << "cut at " << cut;
  EXPECT_FALSE(decode_plan(bytes + "z"));
  // Random bytes are refused or decoded, never a crash or a huge allocation.
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string noise = bytes;
    for (int flips = 0; flips < 4; ++flips)
      noise[random() % noise.size()] = static_cast<char>(random());
    (void)decode_plan(noise);
  }
}

class ShepherdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / "trellis-shepherd-test";
    dir_ += std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(::pipe2(notice_, O_CLOEXEC), 0);
    auto shepherd = ShepherdClient::start(ShepherdClient::default_binary(), notice_[1], dir_);
    ASSERT_TRUE(shepherd) << shepherd.error().message;
    shepherd_ = std::move(*shepherd);
  }
  void TearDown() override {
    shepherd_.reset();
    ::close(notice_[0]);
    ::close(notice_[1]);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  int notice_[2] = {-1, -1};
  std::unique_ptr<ShepherdClient> shepherd_;
};

TEST_F(ShepherdTest, RunsTheJobAndRecordsItsStatusThenAnnouncesIt) {
  auto started =
      shepherd_->spawn(plan_in(dir_, "one", {"/bin/sh", "-c", "echo $TRELLIS_TEST; exit 3"}));
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_GT(started->shepherd, 0);
  EXPECT_GT(started->job, 0);
  EXPECT_EQ(wait_for_status(dir_ / "one.exit"), "3 0");
  std::ifstream pids(dir_ / "one.pid");
  pid_t shepherd = 0, job = 0;
  ASSERT_TRUE(pids >> shepherd >> job);
  EXPECT_EQ(shepherd, started->shepherd);
  EXPECT_EQ(job, started->job);
  EXPECT_EQ(wait_for_file(dir_ / "one.out"), "one");
  char notice[16] = {};
  ASSERT_EQ(::read(notice_[0], notice, sizeof notice), 4);
  EXPECT_EQ(std::string(notice), "one\n");
}

TEST_F(ShepherdTest, TheExitFileHasTheUsageOfTheJobAndWhatItWaitedFor) {
  // A child that the job waits for holds about 48 MB (a shell's command substitution) and the job
  // itself burns CPU in a loop; neither counts for the shepherd's other jobs.
  auto started = shepherd_->spawn(
      plan_in(dir_, "used",
              {"/bin/sh", "-c",
               "sh -c 'x=$(head -c 48000000 /dev/zero | tr \"\\000\" a); echo ${#x}'; i=0; "
               "while [ $i -lt 100000 ]; do i=$((i+1)); done"}));
  ASSERT_TRUE(started) << started.error().message;
  std::istringstream line(wait_for_file(dir_ / "used.exit"));
  long long exit_code = -1, signal = -1, user_usec = -1, system_usec = -1, max_rss_kb = -1;
  ASSERT_TRUE(line >> exit_code >> signal >> user_usec >> system_usec >> max_rss_kb);
  EXPECT_EQ(exit_code, 0);
  EXPECT_EQ(signal, 0);
  EXPECT_GT(user_usec, 10000);  // the loop (and tr) ran for more than 10 ms in user mode
  EXPECT_GE(system_usec, 0);
  EXPECT_GE(max_rss_kb, 46000);    // the child's string, counted in the job's peak
  EXPECT_LT(max_rss_kb, 4000000);  // and not the shepherd's or anything else's
  EXPECT_EQ(wait_for_file(dir_ / "used.out"), "48000000");
}

TEST_F(ShepherdTest, AJobThatCannotRunExits127WithTheReason) {
  ShepherdPlan plan = plan_in(dir_, "missing", {"/no/such/command"});
  auto started = shepherd_->spawn(plan);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(wait_for_status(dir_ / "missing.exit"), "127 0");
  std::ifstream out(dir_ / "missing.out");
  std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("cannot run '/no/such/command'"), std::string::npos) << text;
}

TEST_F(ShepherdTest, ADeadShepherdIsReplacedAtTheNextSpawn) {
  pid_t first = shepherd_->shepherd_pid();
  ASSERT_GT(first, 0);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  for (int i = 0; i < 500 && process_running(first); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto started = shepherd_->spawn(plan_in(dir_, "after", {"/bin/true"}));
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_NE(shepherd_->shepherd_pid(), first);
  EXPECT_EQ(wait_for_status(dir_ / "after.exit"), "0 0");
}

TEST_F(ShepherdTest, OneWhoseAgentIsGoneStillRecordsItsJobsThenExits) {
  auto started = shepherd_->spawn(plan_in(dir_, "late", {"/bin/sh", "-c", "sleep 0.3; exit 5"}));
  ASSERT_TRUE(started) << started.error().message;
  pid_t shepherd = shepherd_->shepherd_pid();
  shepherd_.reset();  // the agent lets go
  EXPECT_EQ(wait_for_status(dir_ / "late.exit"), "5 0");
  for (int i = 0; i < 500 && process_running(shepherd); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(process_running(shepherd));
}

TEST_F(ShepherdTest, ItsCommandLineNamesItsAgent) {
  // Right after posix_spawn returns, exec may not have set up the new command line yet.
  std::string command;
  for (int i = 0; i < 500 && command.empty(); ++i) {
    command = process_command_line(shepherd_->shepherd_pid());
    if (command.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(command.find("--for=" + dir_.string()), std::string::npos) << command;
}

TEST_F(ShepherdTest, CancelReachesTheWholeProcessGroup) {
  auto started =
      shepherd_->spawn(plan_in(dir_, "group", {"/bin/sh", "-c", "sleep 300 & sleep 300"}));
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_EQ(::kill(-started->job, SIGTERM), 0);
  EXPECT_EQ(wait_for_status(dir_ / "group.exit"), "0 15");
}

}  // namespace
}  // namespace trellis
