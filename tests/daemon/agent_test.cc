// The real trellis-agent binary against a fake controller, with a private munged per test.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "../build_paths.h"
#include "daemon/agent.h"
#include "daemon/auth.h"
#include "daemon/munge_daemon.h"
#include "daemon/process.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_sender.h"
#include "daemon/tree_agent_link.h"
#include "daemon_test_support.h"

#ifdef TRELLIS_AGENT_BINARY

namespace trellis {
namespace {

using testing::eventually;
using testing::read_file;
using testing::read_lines;

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<MungeDaemon> started = MungeDaemon::start(dir_ / "munge");
    ASSERT_TRUE(started) << started.error().message;
    munge_ = std::make_unique<MungeDaemon>(std::move(*started));
    controller_ = std::make_unique<testing::ControllerServer>(munge_->socket());
    ASSERT_TRUE(controller_->ok());
    start_agent();
  }

  void TearDown() override {
    // No job of a test may outlive it, whatever the test's outcome.
    if (agent_ && stub_ && !launched_jobs_.empty()) {
      for (int64_t job : launched_jobs_) {
        v1::SignalRequest request;
        request.set_job_id(job);
        request.set_signal(SIGKILL);
        v1::SignalReply reply;
        call(
            [&](grpc::ClientContext& context) { return stub_->Signal(&context, request, &reply); });
      }
      EXPECT_TRUE(eventually([&] {
        v1::TasksReply tasks = list_tasks();
        return std::none_of(tasks.tasks().begin(), tasks.tasks().end(),
                            [](const v1::TaskStatus& t) { return t.running(); });
      }));
    }
    stop_agent();
  }

  // Starts trellis-agent serving n[0-3]; the first controller address is a dead one, so every
  // test also exercises fail-over.
  void start_agent(const std::vector<std::string>& extra = {}) {
    std::string port_file = dir_ / "agent.port";
    std::string tree_port_file = dir_ / "agent.tree-port";
    std::filesystem::remove(port_file);
    std::filesystem::remove(tree_port_file);
    std::vector<std::string> args = {TRELLIS_AGENT_BINARY,
                                     "--controller",
                                     "127.0.0.1:1," + controller_->address(),
                                     "--nodes",
                                     "n[0-3]",
                                     "--state-dir",
                                     dir_ / "state",
                                     "--munge-socket",
                                     munge_->socket(),
                                     "--port-file",
                                     port_file,
                                     "--tree-port-file",
                                     tree_port_file};
    args.insert(args.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<testing::ChildProcess>(args, dir_ / "agent.log");
    ASSERT_GT(agent_->pid(), 0);
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(port_file); }))
        << read_file(dir_ / "agent.log");
    port_ = std::stoi(read_file(port_file));
    tree_address_ = "127.0.0.1:" + std::to_string(std::stoi(read_file(tree_port_file)));
    stub_ = v1::Agent::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                                   grpc::InsecureChannelCredentials()));
  }

  // A liveness ping down the control tree (a tree of this one agent), as a controller sends it;
  // the agents that did not answer.
  std::vector<std::string> ping(const std::vector<std::string>& register_again = {}) {
    CredentialSource credentials(munge_->socket());
    TreeAgentLink link(credentials, {});
    return link.ping({tree_address_}, register_again, 5);
  }

  void stop_agent(int signal = SIGTERM) {
    if (agent_ && signal == SIGTERM) {
      // A clean stop exits 0 (under ASan, also: no leak, no error at exit).
      int status = agent_->stop(signal);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n"
                                                                 << read_file(dir_ / "agent.log");
    }
    if (agent_) agent_->stop(signal);
    agent_.reset();
    stub_.reset();
  }

  // Calls the agent with a fresh credential from our munged (as the controller would).
  grpc::Status call(const std::function<grpc::Status(grpc::ClientContext&)>& rpc,
                    const std::string& munge_socket = "") {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    Status attached =
        CredentialSource(munge_socket.empty() ? munge_->socket() : munge_socket).attach(context);
    if (!attached) return grpc::Status(grpc::StatusCode::INTERNAL, attached.error().message);
    return rpc(context);
  }

  v1::LaunchRequest launch_request(int64_t job, const std::vector<std::string>& nodes,
                                   const std::vector<std::string>& argv) {
    v1::LaunchRequest request;
    request.set_job_id(job);
    request.set_attempt(1);
    for (const std::string& node : nodes) request.add_nodes(node);  // node ids 0, 1, ...
    request.set_nodelist("n[0-3]");
    request.set_nnodes(static_cast<int>(nodes.size()));
    for (const std::string& arg : argv) request.add_argv(arg);
    request.set_cwd(dir_.path());
    request.set_output("job-%j.out");
    request.set_uid(static_cast<int>(::geteuid()));
    request.set_gid(static_cast<int>(::getegid()));
    return request;
  }

  grpc::Status launch(const v1::LaunchRequest& request) {
    launched_jobs_.insert(request.job_id());
    v1::LaunchReply reply;
    return call(
        [&](grpc::ClientContext& context) { return stub_->Launch(&context, request, &reply); });
  }

  grpc::Status signal(int64_t job, int signal, double grace_seconds, int* processes = nullptr) {
    v1::SignalRequest request;
    request.set_job_id(job);
    request.set_signal(signal);
    request.set_grace_seconds(grace_seconds);
    v1::SignalReply reply;
    grpc::Status status = call(
        [&](grpc::ClientContext& context) { return stub_->Signal(&context, request, &reply); });
    if (processes) *processes = reply.processes();
    return status;
  }

  v1::TasksReply list_tasks() {
    v1::TasksReply reply;
    v1::TasksRequest request;
    grpc::Status status =
        call([&](grpc::ClientContext& context) { return stub_->Tasks(&context, request, &reply); });
    EXPECT_TRUE(status.ok()) << status.error_message();
    return reply;
  }

  bool wait_exits(int64_t job, size_t count) {
    return eventually([&] { return controller_->service().exits_of(job).size() >= count; });
  }

  std::string output(int64_t job) { return dir_ / ("job-" + std::to_string(job) + ".out"); }

  // A pid written by a job into `file`, once it is there.
  pid_t pid_from(const std::string& file) {
    pid_t pid = -1;
    eventually([&] {
      std::string text = read_file(file);
      if (text.empty() || text.back() != '\n') return false;
      pid = std::stoi(text);
      return true;
    });
    return pid;
  }

  testing::TempDir dir_;
  std::unique_ptr<MungeDaemon> munge_;
  std::unique_ptr<testing::ControllerServer> controller_;
  std::unique_ptr<testing::ChildProcess> agent_;
  std::unique_ptr<v1::Agent::Stub> stub_;
  int port_ = 0;
  std::string tree_address_;  // its control-tree endpoint: its address in the cluster
  std::set<int64_t> launched_jobs_;
};

TEST_F(AgentTest, RegistersItsNodesAndTreeAddressThenAnswersPings) {
  ASSERT_TRUE(eventually([&] { return !controller_->service().registers().empty(); }))
      << read_file(dir_ / "agent.log");
  v1::RegisterRequest registered = controller_->service().registers().front();
  EXPECT_EQ(registered.address(), tree_address_);
  EXPECT_NE(tree_address_, "127.0.0.1:" + std::to_string(port_));
  std::vector<std::string> nodes(registered.nodes().begin(), registered.nodes().end());
  EXPECT_EQ(nodes, (std::vector<std::string>{"n0", "n1", "n2", "n3"}));
  EXPECT_EQ(registered.tasks_size(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(ping().empty()) << read_file(dir_ / "agent.log");
  EXPECT_EQ(controller_->service().unauthenticated_calls(), 0);
}

// A controller that lost track of the agent (it answers an exit report with NOT_FOUND, it asks in
// a ping, or it stops pinging for 10 intervals) gets a new registration.
TEST_F(AgentTest, RegistersAgainWhenAControllerDoesNotKnowIt) {
  ASSERT_TRUE(eventually([&] { return controller_->service().registers().size() >= 1; }));
  // Asked in a ping.
  size_t before = controller_->service().registers().size();
  EXPECT_TRUE(ping({tree_address_}).empty());
  EXPECT_TRUE(eventually([&] { return controller_->service().registers().size() > before; }));
  // Told so when it reports an exit: it registers again, then reports the exit.
  before = controller_->service().registers().size();
  controller_->service().forget_agent();
  ASSERT_TRUE(launch(launch_request(81, {"n0"}, {"true"})).ok());
  ASSERT_TRUE(wait_exits(81, 1)) << read_file(dir_ / "agent.log");
  EXPECT_GT(controller_->service().registers().size(), before);
  EXPECT_GE(controller_->service().exit_reports(), 2);
  // Not pinged (this fake controller never does, every 100 ms): again within 10 intervals.
  before = controller_->service().registers().size();
  EXPECT_TRUE(eventually([&] { return controller_->service().registers().size() > before; },
                         std::chrono::seconds(10)));
  EXPECT_NE(read_file(dir_ / "agent.log").find("no liveness ping for"), std::string::npos);
}

TEST_F(AgentTest, LaunchSetsTheEnvironmentOnEveryNode) {
  v1::LaunchRequest request =
      launch_request(7, {"n1", "n2", "n3"},
                     {"sh", "-c",
                      "echo \"$TRELLIS_JOB_ID $TRELLIS_NODEID $TRELLIS_NNODES $TRELLIS_NODENAME "
                      "$TRELLIS_NODELIST $TRELLIS_ATTEMPT $EXTRA\""});
  // Node ids need not follow the names; m0 and m1 are the job's nodes on other agents.
  request.clear_nodes();
  for (const char* node : {"n2", "m0", "n3", "m1", "n1"}) request.add_nodes(node);
  request.set_nnodes(5);
  request.set_nodelist("m[0-1],n[1-3]");
  (*request.mutable_env())["EXTRA"] = "extra value";
  grpc::Status status = launch(request);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(wait_exits(7, 3)) << read_file(dir_ / "agent.log");
  std::vector<std::string> lines = read_lines(output(7));
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"7 0 5 n2 m[0-1],n[1-3] 1 extra value",
                                             "7 2 5 n3 m[0-1],n[1-3] 1 extra value",
                                             "7 4 5 n1 m[0-1],n[1-3] 1 extra value"}));
  std::set<std::string> nodes;
  for (const v1::TaskStatus& exit : controller_->service().exits_of(7)) {
    EXPECT_EQ(exit.attempt(), 1);
    EXPECT_FALSE(exit.running());
    EXPECT_EQ(exit.exit_code(), 0);
    EXPECT_EQ(exit.signal(), 0);
    nodes.insert(exit.node());
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2", "n3"}));
  // Acknowledged exits are forgotten.
  EXPECT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));
}

TEST_F(AgentTest, ReportsExitCodesSignalsAndCommandsThatCannotStart) {
  ASSERT_TRUE(launch(launch_request(1, {"n0"}, {"sh", "-c", "exit 3"})).ok());
  ASSERT_TRUE(launch(launch_request(2, {"n1"}, {"sh", "-c", "kill -KILL $$"})).ok());
  ASSERT_TRUE(launch(launch_request(3, {"n2"}, {"/no/such/command", "arg"})).ok());
  ASSERT_TRUE(launch(launch_request(4, {"n3"}, {"no-such-command-in-path"})).ok());
  for (int64_t job : {1, 2, 3, 4}) ASSERT_TRUE(wait_exits(job, 1)) << job;
  v1::TaskStatus exited = controller_->service().exits_of(1)[0];
  EXPECT_EQ(exited.exit_code(), 3);
  EXPECT_EQ(exited.signal(), 0);
  v1::TaskStatus killed = controller_->service().exits_of(2)[0];
  EXPECT_EQ(killed.signal(), SIGKILL);
  for (int64_t job : {3, 4}) {
    EXPECT_EQ(controller_->service().exits_of(job)[0].exit_code(), 127);
    std::string command = job == 3 ? "/no/such/command" : "no-such-command-in-path";
    EXPECT_NE(read_file(output(job)).find("cannot run '" + command + "'"), std::string::npos)
        << read_file(output(job));
  }
}

TEST_F(AgentTest, JobRunsAsItsUserWhenTheAgentIsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  std::string home = dir_ / "nobody";
  std::filesystem::create_directory(home);
  ::chmod(home.c_str(), 0777);
  v1::LaunchRequest request = launch_request(71, {"n0"}, {"sh", "-c", "id -u; id -g; echo $USER"});
  request.set_uid(65534);
  request.set_gid(65534);
  request.set_cwd(home);
  ASSERT_TRUE(launch(request).ok());
  ASSERT_TRUE(wait_exits(71, 1)) << read_file(dir_ / "agent.log");
  std::string out = home + "/job-71.out";
  EXPECT_EQ(read_lines(out), (std::vector<std::string>{"65534", "65534", "nobody"}))
      << read_file(dir_ / "agent.log");
  struct stat info {};
  ASSERT_EQ(::stat(out.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 65534u);  // created as the user, not as root
}

// A build under a directory other users cannot enter (root's home, mode 0700 on Debian): the job
// shell of a job of user nobody comes from a copy the agent made where everyone may run it, and
// the agent says so in one line. Two tasks, so that the job needs its shell.
TEST_F(AgentTest, AnotherUsersJobRunsTheJobShellFromACopyWhenTheBuildIsOutOfItsReach) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const std::string hidden = dir_ / "hidden";
  std::filesystem::create_directories(hidden + "/build");
  std::filesystem::copy_file(TRELLIS_SHELL_BINARY, hidden + "/build/trellis-shell");
  ::chmod(hidden.c_str(), 0700);
  const std::string places = dir_ / "programs";
  stop_agent();
  start_agent({"--shell", hidden + "/build/trellis-shell", "--job-programs-dir", places});
  std::string home = dir_ / "nobody";
  std::filesystem::create_directory(home);
  ::chmod(home.c_str(), 0777);
  v1::LaunchRequest request = launch_request(72, {"n0"}, {"sh", "-c", "id -u"});
  request.add_tasks_per_node(2);
  request.set_uid(65534);
  request.set_gid(65534);
  request.set_cwd(home);
  ASSERT_TRUE(launch(request).ok());
  ASSERT_TRUE(wait_exits(72, 1)) << read_file(dir_ / "agent.log");
  EXPECT_EQ(read_lines(home + "/job-72.out"), (std::vector<std::string>{"65534", "65534"}))
      << read_file(dir_ / "agent.log");
  const std::string log = read_file(dir_ / "agent.log");
  EXPECT_NE(log.find(hidden + " is 0700"), std::string::npos) << log;
  EXPECT_NE(log.find("copied them to " + places + "/programs-"), std::string::npos) << log;
  // A second agent of the same build uses that copy.
  stop_agent();
  start_agent({"--shell", hidden + "/build/trellis-shell", "--job-programs-dir", places});
  EXPECT_NE(read_file(dir_ / "agent.log").find("using the copies in " + places + "/programs-"),
            std::string::npos);
}

TEST_F(AgentTest, RepeatedLaunchOfTheSameAttemptRunsItOnce) {
  // The job waits for `go`, so every repeat below arrives while it runs.
  v1::LaunchRequest request = launch_request(
      9, {"n0", "n1"}, {"sh", "-c", "echo run; while [ ! -e go ]; do sleep 0.05; done"});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(launch(request).ok());
  ASSERT_TRUE(eventually([&] { return read_lines(output(9)).size() >= 2; }));
  EXPECT_EQ(list_tasks().tasks_size(), 2);
  std::ofstream(dir_ / "go").put('\n');
  ASSERT_TRUE(wait_exits(9, 2));
  ASSERT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));
  // After its exit was acknowledged, the same attempt is still not run again: its exits are
  // reported once more instead (a restarted controller that lost them learns them again).
  ASSERT_TRUE(launch(request).ok());
  ASSERT_TRUE(wait_exits(9, 4));
  ASSERT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));
  EXPECT_EQ(read_lines(output(9)).size(), 2u);
}

// Several launches in one call: each is handled as Launch alone would handle it, in order, and
// answered in the same order; one bad launch fails alone.
TEST_F(AgentTest, ABatchOfLaunchesIsAnsweredLaunchByLaunch) {
  v1::LaunchBatchRequest batch;
  *batch.add_launches() = launch_request(21, {"n0"}, {"sh", "-c", "echo a"});
  *batch.add_launches() = launch_request(22, {"x9"}, {"true"});  // a node it does not serve
  *batch.add_launches() = launch_request(23, {"n1", "n2"}, {"sh", "-c", "echo c"});
  *batch.add_launches() = launch_request(21, {"n0"}, {"sh", "-c", "echo a"});  // a repeat
  launched_jobs_.insert({21, 22, 23});
  v1::LaunchBatchReply reply;
  ASSERT_TRUE(call([&](grpc::ClientContext& context) {
                return stub_->LaunchBatch(&context, batch, &reply);
              }).ok());
  ASSERT_EQ(reply.results_size(), 4);
  std::vector<int> codes;
  for (const v1::LaunchResult& r : reply.results()) codes.push_back(r.code());
  EXPECT_EQ(codes, (std::vector<int>{grpc::StatusCode::OK, grpc::StatusCode::INVALID_ARGUMENT,
                                     grpc::StatusCode::OK, grpc::StatusCode::OK}));
  EXPECT_NE(reply.results(1).message().find("x9"), std::string::npos) << reply.results(1).message();
  ASSERT_TRUE(wait_exits(21, 1));
  ASSERT_TRUE(wait_exits(23, 2));
  ASSERT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));
  EXPECT_EQ(read_lines(output(21)).size(), 1u);  // the repeat ran nothing
  EXPECT_EQ(read_lines(output(23)).size(), 2u);
  EXPECT_TRUE(controller_->service().exits_of(22).empty());

  // More than an agent takes in one call is refused whole, and starts nothing.
  v1::LaunchBatchRequest huge;
  for (int i = 0; i < 1025; ++i) *huge.add_launches() = launch_request(100 + i, {"n3"}, {"true"});
  v1::LaunchBatchReply refused;
  grpc::Status status = call(
      [&](grpc::ClientContext& context) { return stub_->LaunchBatch(&context, huge, &refused); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(list_tasks().tasks_size(), 0);
}

// trellisd's link to the agents sends a job's launch down the control tree, and the launches
// that wait together in one message: here the agent is stopped, so the link's first message waits
// and the rest queue up behind it. Every job runs exactly once, and only the refused launch (a
// relative working directory) is reported as failed.
TEST_F(AgentTest, TheControllersLinkBatchesWaitingLaunchesAndEachRunsOnce) {
  CredentialSource credentials(munge_->socket());
  std::mutex mutex;
  std::vector<int64_t> failed;
  {
    TreeAgentLink::Options options;
    options.deadline_seconds = 10;
    TreeAgentLink link(credentials, options);
    link.on_launch_failed([&](const v1::LaunchRequest& request, const Error&) {
      std::lock_guard lock(mutex);
      failed.push_back(request.job_id());
    });
    ASSERT_EQ(::kill(agent_->pid(), SIGSTOP), 0);
    for (int64_t job = 31; job <= 54; ++job) {
      launched_jobs_.insert(job);
      std::string node = "n";
      node += std::to_string(job % 4);
      v1::LaunchRequest request = launch_request(job, {node}, {"sh", "-c", "echo ran"});
      if (job == 50) request.set_cwd("relative/dir");
      link.launch({tree_address_}, request);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ASSERT_EQ(::kill(agent_->pid(), SIGCONT), 0);
    for (int64_t job = 31; job <= 54; ++job) {
      if (job == 50) continue;
      ASSERT_TRUE(wait_exits(job, 1)) << "job " << job << "\n" << read_file(dir_ / "agent.log");
      EXPECT_EQ(read_lines(output(job)).size(), 1u) << "job " << job;
    }
    ASSERT_TRUE(eventually([&] {
      std::lock_guard lock(mutex);
      return !failed.empty();
    }));
  }  // the link is gone: every message it had was answered
  EXPECT_EQ(failed, (std::vector<int64_t>{50}));
  EXPECT_TRUE(controller_->service().exits_of(50).empty());
  // Each launch was taken once (a repeat would be logged again): 23 accepted, one refused.
  std::string log = read_file(dir_ / "agent.log");
  size_t accepted = 0;
  for (size_t at = log.find(" task(s) here accepted"); at != std::string::npos;
       at = log.find(" task(s) here accepted", at + 1))
    ++accepted;
  EXPECT_EQ(accepted, 23u) << log;
}

// A launch held up until after its deadline (the agent was stopped, the network slow) starts
// nothing: the controller has given up on it and may have given the nodes to another job. Found
// by `trellis bench chaos`, where a SIGSTOPped agent resumed and started a requeued attempt next
// to the job that had its node by then.
TEST_F(AgentTest, ALaunchThatComesAfterItsDeadlineStartsNothing) {
  v1::LaunchRequest late = launch_request(12, {"n0", "n1"}, {"sh", "-c", "echo ran"});
  late.set_launch_by(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
      1);
  grpc::Status status = launch(late);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_EQ(list_tasks().tasks_size(), 0);
  // The same request in time runs.
  late.set_launch_by(late.launch_by() + 3600);
  ASSERT_TRUE(launch(late).ok());
  ASSERT_TRUE(wait_exits(12, 2));
  EXPECT_EQ(read_lines(output(12)).size(), 2u);
}

TEST_F(AgentTest, NewAttemptReplacesARunningOldOne) {
  v1::LaunchRequest first =
      launch_request(11, {"n0"}, {"sh", "-c", "echo $$ > old.pid; exec sleep 1000"});
  ASSERT_TRUE(launch(first).ok());
  pid_t old = pid_from(dir_ / "old.pid");
  ASSERT_GT(old, 0);
  v1::LaunchRequest second = launch_request(11, {"n0"}, {"sh", "-c", "echo second"});
  second.set_attempt(2);
  ASSERT_TRUE(launch(second).ok());
  EXPECT_FALSE(process_running(old));
  ASSERT_TRUE(eventually([&] {
    for (const v1::TaskStatus& t : controller_->service().exits_of(11)) {
      if (t.attempt() == 2) return true;
    }
    return false;
  }));
  // A late launch of the replaced attempt is ignored.
  ASSERT_TRUE(launch(first).ok());
  EXPECT_EQ(read_lines(output(11)), std::vector<std::string>{"second"});
}

// Nodes are whole outside gang time-sharing, so a launch there first kills what an ended attempt
// left on its nodes (its kill was lost: chaos runs saw two jobs' processes on one node at once),
// and only on its nodes; a launch that shares nodes (gang) leaves the others alone.
TEST_F(AgentTest, ALaunchOnWholeNodesKillsWhatAnotherAttemptLeftOnItsNodesFirst) {
  ASSERT_TRUE(
      launch(launch_request(40, {"n3"}, {"sh", "-c", "echo $$ > other.pid; exec sleep 1000"}))
          .ok());
  ASSERT_TRUE(
      launch(launch_request(41, {"n1"}, {"sh", "-c", "echo $$ > left.pid; exec sleep 1000"})).ok());
  pid_t other = pid_from(dir_ / "other.pid");
  pid_t left = pid_from(dir_ / "left.pid");
  ASSERT_GT(other, 0);
  ASSERT_GT(left, 0);
  // Sharing the node (a gang launch): nothing is killed.
  ASSERT_TRUE(launch(launch_request(44, {"n1"}, {"true"})).ok());
  ASSERT_TRUE(wait_exits(44, 1));
  EXPECT_TRUE(process_running(left));
  v1::LaunchRequest whole = launch_request(42, {"n1"}, {"sh", "-c", "echo started"});
  whole.set_whole_nodes(true);
  ASSERT_TRUE(launch(whole).ok());
  // The leftover was gone before the launch started its task, and the other node's job runs on.
  EXPECT_FALSE(process_running(left));
  EXPECT_TRUE(process_running(other));
  ASSERT_TRUE(wait_exits(41, 1));
  EXPECT_EQ(controller_->service().exits_of(41)[0].signal(), SIGKILL);
  ASSERT_TRUE(wait_exits(42, 1));
  EXPECT_EQ(read_lines(output(42)), std::vector<std::string>{"started"});
  EXPECT_NE(read_file(dir_ / "agent.log").find("job 41 attempt 1 still runs on nodes that job 42"),
            std::string::npos);
  ASSERT_TRUE(signal(40, SIGKILL, 0).ok());
  ASSERT_TRUE(wait_exits(40, 1));
}

// A launch can come again after its tasks ran and ended (a retry that took another route, or the
// launches a controller that took over sends to reconcile): the late copy starts nothing (its exit
// is reported again) and does not clear its nodes of the job that has them now.
TEST_F(AgentTest, ALateCopyOfALaunchWhoseTasksRanStartsNothingAndKillsNothing) {
  v1::LaunchRequest first = launch_request(71, {"n1"}, {"sh", "-c", "echo ran"});
  first.set_whole_nodes(true);
  ASSERT_TRUE(launch(first).ok());
  ASSERT_TRUE(wait_exits(71, 1));
  ASSERT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));  // reported, forgotten
  v1::LaunchRequest next =
      launch_request(72, {"n1"}, {"sh", "-c", "echo $$ > next.pid; exec sleep 1000"});
  next.set_whole_nodes(true);
  ASSERT_TRUE(launch(next).ok());
  pid_t now_there = pid_from(dir_ / "next.pid");
  ASSERT_GT(now_there, 0);
  ASSERT_TRUE(launch(first).ok());  // the late copy
  EXPECT_TRUE(process_running(now_there));
  EXPECT_EQ(read_file(dir_ / "agent.log").find("still runs on nodes that job 71"),
            std::string::npos);
  ASSERT_TRUE(wait_exits(71, 2));
  EXPECT_EQ(read_lines(output(71)), std::vector<std::string>{"ran"});
  ASSERT_TRUE(signal(72, SIGKILL, 0).ok());
  ASSERT_TRUE(wait_exits(72, 1));
}

// A launch sent again to reconcile (after the agent registered, or a controller took over) can
// come after its attempt was requeued and its nodes given to the next job, which runs there by
// then. Found by `trellis bench chaos`: such a copy killed the next job as a leftover. It kills
// nothing and starts nothing; its tasks end at once (exit 255). On free nodes it runs.
TEST_F(AgentTest, ALaunchSentAgainToReconcileNeverTakesItsNodesFromTheJobThatHasThemNow) {
  v1::LaunchRequest next =
      launch_request(82, {"n1"}, {"sh", "-c", "echo $$ > next.pid; exec sleep 1000"});
  next.set_whole_nodes(true);
  ASSERT_TRUE(launch(next).ok());
  pid_t now_there = pid_from(dir_ / "next.pid");
  ASSERT_GT(now_there, 0);
  v1::LaunchRequest again = launch_request(81, {"n1", "n2"}, {"sh", "-c", "echo ran"});
  again.set_whole_nodes(true);
  again.set_reconcile(true);
  // Called directly (not through the tree, which answers at once), the launch says why.
  grpc::Status status = launch(again);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("found job 82 attempt 1"), std::string::npos)
      << status.error_message();
  ASSERT_TRUE(wait_exits(81, 2));  // n1 and n2: the launch is one, and n1 is taken
  EXPECT_TRUE(process_running(now_there));
  for (const v1::TaskStatus& task : controller_->service().exits_of(81)) {
    EXPECT_EQ(task.exit_code(), 255) << task.node();
    EXPECT_EQ(task.signal(), 0) << task.node();
  }
  EXPECT_TRUE(read_lines(output(81)).empty());
  const std::string log = read_file(dir_ / "agent.log");
  EXPECT_NE(log.find("it found job 82 attempt 1 running on its nodes"), std::string::npos) << log;
  EXPECT_EQ(log.find("still runs on nodes that job 81"), std::string::npos) << log;
  // The same launch sent again where its nodes are free starts its tasks.
  v1::LaunchRequest free = launch_request(83, {"n2"}, {"sh", "-c", "echo ran"});
  free.set_whole_nodes(true);
  free.set_reconcile(true);
  ASSERT_TRUE(launch(free).ok());
  ASSERT_TRUE(wait_exits(83, 1));
  EXPECT_EQ(controller_->service().exits_of(83)[0].exit_code(), 0);
  EXPECT_EQ(read_lines(output(83)), std::vector<std::string>{"ran"});
  ASSERT_TRUE(signal(82, SIGKILL, 0).ok());
  ASSERT_TRUE(wait_exits(82, 1));
}

// The kill of an attempt can overtake its launch (a retried launch takes another route through
// the tree): the late launch starts nothing, and ends as killed. A later attempt runs.
TEST_F(AgentTest, ALaunchOfAnAttemptKilledBeforeItCameStartsNothing) {
  v1::SignalRequest kill;
  kill.set_job_id(51);
  kill.set_attempt(1);
  kill.set_signal(SIGKILL);
  v1::SignalReply killed;
  ASSERT_TRUE(call([&](grpc::ClientContext& context) {
                return stub_->Signal(&context, kill, &killed);
              }).ok());
  ASSERT_TRUE(launch(launch_request(51, {"n0"}, {"sh", "-c", "echo ran"})).ok());
  ASSERT_TRUE(wait_exits(51, 1));
  EXPECT_EQ(controller_->service().exits_of(51)[0].signal(), SIGKILL);
  v1::LaunchRequest next = launch_request(51, {"n0"}, {"sh", "-c", "echo attempt 2 ran"});
  next.set_attempt(2);
  ASSERT_TRUE(launch(next).ok());
  ASSERT_TRUE(wait_exits(51, 2));
  EXPECT_EQ(read_lines(output(51)), std::vector<std::string>{"attempt 2 ran"});
}

// A process that left its task's process group (setsid, as a daemonising rank does) escapes the
// shepherd's kill of the group, but not the job's cgroup: it is killed once the job's tasks here
// have ended, and the agent says so.
TEST_F(AgentTest, AProcessThatLeftItsTasksGroupIsKilledWhenTheTasksEnd) {
  // The task ends only once the escaped process has left the group: were it still inside, the
  // shepherd's kill of the group at the task's end would take it, and nothing would escape.
  ASSERT_TRUE(launch(launch_request(61, {"n2"},
                                    {"sh", "-c",
                                     "setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp "
                                     "escaped.pid; exec sleep 1000' & "
                                     "while [ ! -e escaped.pid ]; do sleep 0.01; done"}))
                  .ok());
  pid_t escaped = pid_from(dir_ / "escaped.pid");
  ASSERT_GT(escaped, 0);
  ASSERT_TRUE(wait_exits(61, 1));
  if (read_file(dir_ / "agent.log").find("freeze with signals") != std::string::npos)
    GTEST_SKIP() << "no cgroup on this host: nothing holds the process";
  EXPECT_TRUE(eventually([&] { return !process_running(escaped); }));
  EXPECT_TRUE(eventually([&] {
    return read_file(dir_ / "agent.log").find("job 61.1: 1 process(es) outlived its tasks") !=
           std::string::npos;
  })) << read_file(dir_ / "agent.log");
  if (process_running(escaped)) ::kill(escaped, SIGKILL);
}

TEST_F(AgentTest, CancelKillsTheWholeProcessGroup) {
  ASSERT_TRUE(launch(launch_request(21, {"n2"},
                                    {"sh", "-c", "sleep 1000 & echo $! > grandchild.pid; wait"}))
                  .ok());
  pid_t grandchild = pid_from(dir_ / "grandchild.pid");
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(process_running(grandchild));
  int processes = 0;
  grpc::Status status = signal(21, 0, 30, &processes);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(processes, 1);
  ASSERT_TRUE(wait_exits(21, 1));
  EXPECT_EQ(controller_->service().exits_of(21)[0].signal(), SIGTERM);
  EXPECT_TRUE(eventually([&] { return !process_running(grandchild); }));
}

TEST_F(AgentTest, CancelEscalatesToSigkillAfterTheGracePeriod) {
  ASSERT_TRUE(launch(launch_request(22, {"n3"},
                                    {"sh", "-c",
                                     "trap '' TERM; sleep 1000 & echo $! > stubborn.pid; "
                                     "while true; do wait; done"}))
                  .ok());
  pid_t grandchild = pid_from(dir_ / "stubborn.pid");
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(signal(22, 0, 0.2).ok());
  ASSERT_TRUE(wait_exits(22, 1));
  EXPECT_EQ(controller_->service().exits_of(22)[0].signal(), SIGKILL);
  EXPECT_TRUE(eventually([&] { return !process_running(grandchild); }));
}

TEST_F(AgentTest, OtherSignalsGoToTheGroupAsTheyAre) {
  ASSERT_TRUE(launch(launch_request(23, {"n0"},
                                    {"sh", "-c",
                                     "trap 'echo got USR1; exit 5' USR1; "
                                     "echo ready > ready; while true; do sleep 0.05; done"}))
                  .ok());
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(dir_ / "ready"); }));
  ASSERT_TRUE(signal(23, SIGUSR1, 0).ok());
  ASSERT_TRUE(wait_exits(23, 1));
  EXPECT_EQ(controller_->service().exits_of(23)[0].exit_code(), 5);
  EXPECT_NE(read_file(output(23)).find("got USR1"), std::string::npos);
}

TEST_F(AgentTest, CallsWithoutAValidCredentialAreRefused) {
  v1::TasksRequest request;
  v1::TasksReply reply;
  {
    grpc::ClientContext context;
    grpc::Status status = stub_->Tasks(&context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  {
    grpc::ClientContext context;
    context.AddMetadata(std::string(kMungeMetadataKey), "MUNGE:garbage:");
    grpc::Status status = stub_->Tasks(&context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  // A credential from a munged with another key.
  Result<MungeDaemon> stranger = MungeDaemon::start(dir_ / "stranger");
  ASSERT_TRUE(stranger) << stranger.error().message;
  v1::LaunchReply launched;
  grpc::Status status = call(
      [&](grpc::ClientContext& context) {
        return stub_->Launch(&context, launch_request(31, {"n0"}, {"true"}), &launched);
      },
      stranger->socket());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  // The agent keeps serving.
  status =
      call([&](grpc::ClientContext& context) { return stub_->Tasks(&context, request, &reply); });
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.tasks_size(), 0);
}

TEST_F(AgentTest, OnlyTheDaemonUserMayCall) {
  stop_agent();
  start_agent({"--daemon-uid", std::to_string(::geteuid() + 4242)});
  v1::TasksRequest request;
  v1::TasksReply reply;
  grpc::Status status =
      call([&](grpc::ClientContext& context) { return stub_->Tasks(&context, request, &reply); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
}

TEST_F(AgentTest, BadLaunchesAreInvalidArgumentsNamingTheField) {
  struct Case {
    std::string field;
    std::function<void(v1::LaunchRequest&)> spoil;
  };
  std::vector<Case> cases = {
      {"job_id", [](v1::LaunchRequest& r) { r.set_job_id(0); }},
      {"attempt", [](v1::LaunchRequest& r) { r.set_attempt(0); }},
      {"attempt", [](v1::LaunchRequest& r) { r.set_attempt(-2); }},
      {"nodes", [](v1::LaunchRequest& r) { r.clear_nodes(); }},
      {"nodes", [](v1::LaunchRequest& r) { r.set_nodes(0, "x9"); }},  // none of this agent's
      {"nodes", [](v1::LaunchRequest& r) { r.set_nodes(0, "n0 n1"); }},
      {"nnodes", [](v1::LaunchRequest& r) { r.set_nnodes(0); }},
      {"nnodes", [](v1::LaunchRequest& r) { r.set_nnodes(2); }},
      {"argv", [](v1::LaunchRequest& r) { r.clear_argv(); }},
      {"argv", [](v1::LaunchRequest& r) { r.set_argv(0, ""); }},
      {"cwd", [](v1::LaunchRequest& r) { r.set_cwd("relative/dir"); }},
      {"env", [](v1::LaunchRequest& r) { (*r.mutable_env())["A=B"] = "c"; }},
  };
  for (const Case& c : cases) {
    v1::LaunchRequest request = launch_request(41, {"n0"}, {"true"});
    c.spoil(request);
    grpc::Status status = launch(request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_EQ(status.error_message().rfind(c.field + ":", 0), 0u)
        << c.field << ": " << status.error_message();
  }
  int processes = -1;
  EXPECT_EQ(signal(0, 0, 0).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(signal(41, 999, 0).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(signal(12345, 0, 1, &processes).ok());  // nothing to signal is not an error
  EXPECT_EQ(processes, 0);
  EXPECT_EQ(list_tasks().tasks_size(), 0);
}

TEST_F(AgentTest, RestartedAgentAdoptsARunningJobAndReportsItsExitOnce) {
  ASSERT_TRUE(eventually([&] { return !controller_->service().registers().empty(); }));
  ASSERT_TRUE(
      launch(launch_request(
                 51, {"n1"},
                 {"sh", "-c", "echo started; while [ ! -e go51 ]; do sleep 0.05; done; exit 4"}))
          .ok());
  ASSERT_TRUE(eventually([&] { return read_lines(output(51)).size() == 1; }));
  stop_agent(SIGKILL);
  start_agent();
  // It registers again (from its new address), listing the job as running.
  ASSERT_TRUE(eventually(
      [&] { return controller_->service().registers().back().address() == tree_address_; }));
  v1::RegisterRequest again = controller_->service().registers().back();
  ASSERT_EQ(again.tasks_size(), 1);
  EXPECT_EQ(again.tasks(0).job_id(), 51);
  EXPECT_EQ(again.tasks(0).node(), "n1");
  EXPECT_TRUE(again.tasks(0).running());
  // A repeated launch (a controller's reconciliation) does not start it again.
  ASSERT_TRUE(
      launch(launch_request(
                 51, {"n1"},
                 {"sh", "-c", "echo started; while [ ! -e go51 ]; do sleep 0.05; done; exit 4"}))
          .ok());
  std::ofstream(dir_ / "go51").put('\n');
  ASSERT_TRUE(wait_exits(51, 1)) << read_file(dir_ / "agent.log");
  EXPECT_EQ(controller_->service().exits_of(51)[0].exit_code(), 4);
  ASSERT_TRUE(eventually([&] { return list_tasks().tasks_size() == 0; }));
  // Some time for a second report, were there one.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(controller_->service().exits_of(51).size(), 1u);
  EXPECT_EQ(read_lines(output(51)).size(), 1u);
}

TEST_F(AgentTest, ExitsEndedWhileTheAgentWasDownAreReportedAfterItsRestart) {
  ASSERT_TRUE(
      launch(launch_request(61, {"n0"},
                            {"sh", "-c", "while [ ! -e go61 ]; do sleep 0.05; done; exit 6"}))
          .ok());
  stop_agent(SIGTERM);  // a clean stop leaves the job running
  std::ofstream(dir_ / "go61").put('\n');
  ASSERT_TRUE(
      eventually([&] { return std::filesystem::exists(dir_ / "state/tasks/61.1.0.n0.exit"); }));
  EXPECT_TRUE(controller_->service().exits_of(61).empty());
  start_agent();
  ASSERT_TRUE(wait_exits(61, 1));
  EXPECT_EQ(controller_->service().exits_of(61)[0].exit_code(), 6);
}

}  // namespace
}  // namespace trellis

#endif  // TRELLIS_AGENT_BINARY
