// The live system end to end: `trellis cluster up` starts a real munged, trellisd and agents on
// loopback (ephemeral ports, a private key), the tests drive them with the CLI and raw gRPC, and
// `trellis cluster down` stops exactly what was started. Jobs are real processes; what they did
// is read from their own output files.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "../build_paths.h"
#include "../cli_run.h"
#include "../store_engines.h"
#include "daemon/config.h"
#include "daemon/controller_client.h"
#include "daemon/controller_service.h"
#include "daemon/process.h"
#include "daemon_test_support.h"
#include "live_cluster.h"
#include "store/state_store.h"

namespace trellis {
namespace {

using test::CommandRun;
using test::run_command;
using testing::ChildProcess;
using testing::eventually;
using testing::LiveCluster;
using testing::TempDir;

// A job of `nodes` nodes that writes its node id, one line per node, to OUT_DIR/ID.
v1::SubmitRequest node_echo_job(int nodes, const std::string& out_dir) {
  v1::SubmitRequest request;
  v1::JobSpec& spec = *request.mutable_spec();
  spec.set_nodes(nodes);
  spec.add_argv("sh");
  spec.add_argv("-c");
  spec.add_argv("echo $TRELLIS_NODEID");
  spec.set_cwd("/tmp");
  spec.set_output(out_dir + "/%j");
  return request;
}

// Waits while jobs keep finishing (a sanitizer build is slow) until none is active; fails when
// none has finished for a minute (a stuck job).
void wait_until_no_job_is_active(ControllerClient& client) {
  int left = -1;
  auto last_progress = std::chrono::steady_clock::now();
  while (left != 0) {
    v1::ListJobsRequest active;
    v1::ListJobsReply reply;
    grpc::Status s = client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
      return stub.ListJobs(&context, active, &reply);
    });
    if (s.ok() && (left < 0 || reply.jobs_size() < left)) {
      left = reply.jobs_size();
      last_progress = std::chrono::steady_clock::now();
    }
    ASSERT_LT(std::chrono::steady_clock::now() - last_progress, std::chrono::seconds(60))
        << left << " jobs have not finished and none finished for a minute";
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// Each test runs on both stores: SQLite (the default) and a fresh PostgreSQL database.
class LiveClusterTest : public ::testing::TestWithParam<test::Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == test::Engine::kPostgres) {
      std::string url;
      PostgresServer* server = nullptr;
      test::fresh_postgres_database(url, &server);
      if (url.empty()) return;  // skipped, or failed
      store_option_ = " --store " + url;
      reader_url_ = server->reader_url(url);
    }
  }
  // The store as a reader sees it: the read-only role's URL on PostgreSQL; the file on SQLite.
  std::string reader_store(const LiveCluster& cluster) const {
    return reader_url_.empty() ? "sqlite:" + (cluster.dir() / "state.db") : reader_url_;
  }
  // The options of `cluster up` with this test's store.
  std::string with_store(const std::string& options) const { return options + store_option_; }

 private:
  std::string store_option_;
  std::string reader_url_;
};

TEST_P(LiveClusterTest, RunsAJobOnEveryNodeWithItsVariablesAndOutput) {
  LiveCluster cluster(with_store("--machine torus:4x4x4"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  std::string out = cluster.dir() / "job-%j.out";
  CommandRun r = cluster.trellis("submit -N 4 --wait -o " + out +
                                 " -- sh -c 'echo $TRELLIS_JOB_ID $TRELLIS_NODEID $TRELLIS_NNODES "
                                 "$TRELLIS_NODELIST $TRELLIS_NODENAME'");
  ASSERT_EQ(r.status, 0) << r.output;
  int64_t id = cluster.submit("--wait -- true");  // ids go up by one
  ASSERT_GT(id, 1);
  nlohmann::json job = cluster.job(id - 1);
  EXPECT_EQ(job["state"], "CD");
  std::vector<std::string> lines =
      testing::read_lines(cluster.dir() / ("job-" + std::to_string(id - 1) + ".out"));
  ASSERT_EQ(lines.size(), 4u);
  std::set<std::string> ranks, names;
  for (const std::string& line : lines) {
    std::istringstream fields(line);
    std::string job_id, rank, count, nodelist, name;
    fields >> job_id >> rank >> count >> nodelist >> name;
    EXPECT_EQ(job_id, std::to_string(id - 1));
    EXPECT_EQ(count, "4");
    EXPECT_EQ(nodelist, job["nodelist"].get<std::string>());
    ranks.insert(rank);
    names.insert(name);
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(names.size(), 4u);
  // A failing command fails the job, and --wait returns its exit status.
  CommandRun failed = cluster.trellis("submit --wait -- sh -c 'exit 3'");
  EXPECT_EQ(failed.status, 3) << failed.output;
}

TEST_P(LiveClusterTest, AShapeRequestGetsABoxAndShowmeshDrawsItWithTheControllerStopped) {
  LiveCluster cluster(with_store("--machine torus:4x4x4"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  int64_t id = cluster.submit("--shape 2x2x2 -- sleep 600");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "R"; }));
  nlohmann::json job = cluster.job(id);
  ASSERT_TRUE(job.contains("box")) << job.dump();
  std::vector<int> shape = job["box"]["shape"];
  std::sort(shape.begin(), shape.end());
  EXPECT_EQ(shape, (std::vector<int>{2, 2, 2}));

  // The read path needs no daemon: stop the controller, then draw the mesh from the store.
  ::kill(cluster.pid_of("trellisd"), SIGTERM);
  ASSERT_TRUE(eventually([&] { return !process_running(cluster.pid_of("trellisd")); }));
  CommandRun mesh = cluster.trellis("showmesh");
  ASSERT_EQ(mesh.status, 0) << mesh.output;
  EXPECT_NE(mesh.output.find("8 allocated, 56 idle"), std::string::npos) << mesh.output;
  EXPECT_EQ(std::count(mesh.output.begin(), mesh.output.end(), 'A'), 8 + 1) << mesh.output;
  EXPECT_NE(mesh.output.find("job " + std::to_string(id)), std::string::npos);
  // And the queue, read as a role that may only read.
  CommandRun queue = cluster.trellis("queue --store " + reader_store(cluster));
  ASSERT_EQ(queue.status, 0) << queue.output;
  EXPECT_NE(queue.output.find(std::to_string(id)), std::string::npos) << queue.output;
  EXPECT_NE(queue.output.find(" R "), std::string::npos) << queue.output;
}

TEST_P(LiveClusterTest, CancelKillsTheWholeProcessGroupAndTimeLimitsEndJobsAsTO) {
  LiveCluster cluster(with_store("--machine torus:4x4x4 --kill-grace 1"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  std::string child_file = cluster.dir() / "child.pid";
  int64_t id = cluster.submit("-- sh -c 'sleep 1000 & echo $! > " + child_file + "; wait'");
  ASSERT_TRUE(eventually([&] { return testing::read_file(child_file).size() > 1; }));
  pid_t child = std::stoi(testing::read_file(child_file));
  ASSERT_TRUE(process_running(child));
  CommandRun cancel = cluster.trellis("cancel " + std::to_string(id));
  ASSERT_EQ(cancel.status, 0) << cancel.output;
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "CA"; }));
  EXPECT_TRUE(eventually([&] { return !process_running(child); }));

  int64_t limited = cluster.submit("--time 0:01 -- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(limited) == "TO"; }));
  nlohmann::json job = cluster.job(limited);
  EXPECT_GE(job["end_time"].get<double>() - job["start_time"].get<double>(), 1.0);
}

TEST_P(LiveClusterTest, AKilledAgentsNodesGoDownAndItsJobIsRequeuedElsewhere) {
  LiveCluster cluster(with_store("--machine torus:4x4x4 --agents 2 --heartbeat 0.2"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  int64_t id = cluster.submit("-N 2 -- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "R"; }));
  ASSERT_EQ(cluster.job(id)["nodelist"], "n[0-1]");  // agent-0 serves n[0-31]
  auto killed_at = std::chrono::steady_clock::now();
  ::kill(cluster.pid_of("agent-0"), SIGKILL);
  ASSERT_TRUE(eventually([&] {
    CommandRun nodes = cluster.trellis("nodes");
    return nodes.output.find("32      down    n[0-31]") != std::string::npos;
  })) << cluster.trellis("nodes").output;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::cout << "nodes down " << seconds
            << " s after the agent was killed (pings every 0.2 s: 3 missed, a probe, 3 more)\n";
  ASSERT_TRUE(eventually([&] {
    nlohmann::json job = cluster.job(id);
    return job["state"] == "R" && job["attempt"] == 2;
  }));
  std::string nodelist = cluster.job(id)["nodelist"];
  EXPECT_EQ(nodelist.find("n[0-"), std::string::npos) << nodelist;
}

TEST_P(LiveClusterTest, WithNodeFailureFailTheJobEndsNF) {
  LiveCluster cluster(
      with_store("--machine flat:8 --agents 2 --heartbeat 0.2 --node-failure fail"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  int64_t id = cluster.submit("-N 6 -- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "R"; }));
  ::kill(cluster.pid_of("agent-1"), SIGKILL);
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "NF"; }));
}

TEST_P(LiveClusterTest, RefusesUnauthenticatedCallsAndOtherUsersCancelsAndKeepsServing) {
  LiveCluster cluster(with_store("--machine torus:4x4x4"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  int64_t id = cluster.submit("-- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "R"; }));

  auto channel =
      grpc::CreateChannel(cluster.config().controllers.front(), grpc::InsecureChannelCredentials());
  auto stub = v1::Controller::NewStub(channel);
  for (const char* credential : {"", "MUNGE:not-a-credential"}) {
    grpc::ClientContext context;
    if (*credential) context.AddMetadata("x-trellis-munge", credential);
    v1::SubmitRequest request;
    request.mutable_spec()->set_nodes(1);
    request.mutable_spec()->add_argv("true");
    request.mutable_spec()->set_cwd("/tmp");
    v1::SubmitReply reply;
    grpc::Status status = stub->Submit(&context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  // Another user (nobody) may not cancel root's job.
  CommandRun other = run_command("TRELLIS_CONF=" + (cluster.dir() / "trellis.toml") +
                                 " setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                 TRELLIS_BINARY + " cancel " + std::to_string(id));
  EXPECT_NE(other.status, 0);
  EXPECT_NE(other.output.find("permission denied"), std::string::npos) << other.output;
  EXPECT_EQ(cluster.state(id), "R");
  EXPECT_EQ(cluster.trellis("cancel " + std::to_string(id)).status, 0);
  EXPECT_TRUE(eventually([&] { return cluster.state(id) == "CA"; }));
}

TEST_P(LiveClusterTest, MalformedRequestsGetAClearErrorAndChangeNothing) {
  LiveCluster cluster(with_store("--machine torus:4x4x4"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  ControllerClient client = cluster.client();
  auto count_jobs = [&] {
    v1::ListJobsRequest all;
    all.set_all_states(true);
    v1::ListJobsReply reply;
    grpc::Status s = client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
      return stub.ListJobs(&context, all, &reply);
    });
    return s.ok() ? reply.jobs_size() : -1;
  };
  ASSERT_EQ(count_jobs(), 0);
  struct Case {
    std::function<void(v1::JobSpec&)> spoil;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](v1::JobSpec& s) { s.set_nodes(-3); }, "nodes"},
      {[](v1::JobSpec& s) { s.set_nodes(65); }, "nodes"},
      {[](v1::JobSpec& s) {
         s.clear_nodes();
         for (int e : {9, 9, 9}) s.add_shape(e);
       },
       "shape"},
      {[](v1::JobSpec& s) { s.add_argv(std::string(200000, 'x')); }, "argv"},
      {[](v1::JobSpec& s) { s.set_mode("bogus"); }, "mode"},
      {[](v1::JobSpec& s) { s.clear_argv(); }, "argv"},
      {[](v1::JobSpec& s) { s.set_cwd("relative/dir"); }, "cwd"},
      {[](v1::JobSpec& s) { s.set_time_limit(-5); }, "time_limit"},
      {[](v1::JobSpec& s) { (*s.mutable_env())["A=B"] = "x"; }, "env"},
  };
  for (const Case& c : cases) {
    v1::SubmitRequest request;
    v1::JobSpec& spec = *request.mutable_spec();
    spec.set_nodes(1);
    spec.add_argv("true");
    spec.set_cwd("/tmp");
    c.spoil(spec);
    v1::SubmitReply reply;
    grpc::Status status =
        client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Submit(&context, request, &reply);
        });
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.field << ": " << status.error_message();
    EXPECT_EQ(status.error_message().rfind(c.field + ":", 0), 0u)
        << "the error names the field: " << status.error_message();
  }
  EXPECT_EQ(count_jobs(), 0);
  EXPECT_EQ(cluster.submit("--wait -- true"), 1);  // and it still serves
}

TEST_P(LiveClusterTest,
       ControllerKilledDuringASubmissionStreamLosesNoAcknowledgedJobAndRunsNoneTwice) {
  LiveCluster cluster(with_store("--machine torus:4x4x4 --allocator linear-bestfit-hilbert"));
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string out_dir = cluster.dir() / "out";
  std::filesystem::create_directories(out_dir);
  ClusterConfig config = cluster.config();
  ControllerClient client = cluster.client();
  constexpr int kSubmissions = 1000;
  auto started_at = std::chrono::steady_clock::now();
  std::vector<int64_t> acknowledged;
  std::unique_ptr<ChildProcess> restarted;
  for (int i = 0; i < kSubmissions; ++i) {
    if (i == kSubmissions / 3) {
      ::kill(cluster.pid_of("trellisd"), SIGKILL);
      // Restarted at once, as a supervisor would; submissions meanwhile fail unacknowledged.
      std::cout
          << "controller killed after " << i << " submissions, "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count()
          << " s\n";
      restarted = std::make_unique<ChildProcess>(
          std::vector<std::string>{TRELLISD_BINARY, "--conf", cluster.dir() / "trellis.toml"},
          cluster.dir() / "trellisd.log");
      std::ofstream(cluster.dir() / "trellisd.pid") << restarted->pid() << "\n";
    }
    v1::SubmitRequest request = node_echo_job(1 + i % 3, out_dir);
    v1::SubmitReply reply;
    grpc::Status status =
        client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Submit(&context, request, &reply);
        });
    if (status.ok()) {
      acknowledged.push_back(reply.job_id());
    } else {
      ASSERT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  auto submitted_at = std::chrono::steady_clock::now();
  std::cout << acknowledged.size() << " of " << kSubmissions << " submissions acknowledged\n";
  ASSERT_GT(acknowledged.size(), kSubmissions / 2u);
  // Every acknowledged job finishes, and ran exactly once: one line per node in its output. The
  // wait lasts while jobs keep finishing (a sanitizer build is slow), and fails when none has
  // finished for a minute: a stuck job.
  wait_until_no_job_is_active(client);
  if (::testing::Test::HasFatalFailure()) return;
  std::cout
      << "all finished "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted_at).count()
      << " s after the last submission\n";
  v1::ListJobsRequest all;
  all.set_all_states(true);
  v1::ListJobsReply listed;
  ASSERT_TRUE(client
                  .call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
                    return stub.ListJobs(&context, all, &listed);
                  })
                  .ok());
  std::map<int64_t, v1::JobInfo> jobs;
  for (const v1::JobInfo& job : listed.jobs()) jobs[job.id()] = job;
  int ran_twice = 0, lost = 0;
  for (int64_t id : acknowledged) {
    auto job = jobs.find(id);
    if (job == jobs.end() || job->second.state() != v1::COMPLETED) {
      ++lost;
      ADD_FAILURE() << "job " << id << (job == jobs.end() ? " is gone" : " did not complete");
      continue;
    }
    std::vector<std::string> lines = testing::read_lines(out_dir + "/" + std::to_string(id));
    if (lines.size() != static_cast<size_t>(job->second.spec().nodes())) {
      ++ran_twice;
      ADD_FAILURE() << "job " << id << " wrote " << lines.size() << " lines on "
                    << job->second.spec().nodes() << " nodes";
    }
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(ran_twice, 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, LiveClusterTest,
                         ::testing::Values(test::Engine::kSqlite, test::Engine::kPostgres),
                         test::engine_name);

// Two controllers on one PostgreSQL store, and one is killed -9 in the middle of a stream of
// submissions (seed 003: no allocator is a single point of failure); clients and agents fail over
// to the other. Under lease allocation the one killed is the scheduler: the other takes the lease
// over when it runs out (0.5 s), resends the running jobs' launches, and carries on. Under
// concurrent allocation it is the one the client submits to, whose pending jobs the other adopts
// once its check-in runs out (5 s). Every acknowledged job completes exactly once. The time from
// the kill to the survivor's first start is printed (Slurm's backup controller waits
// SlurmctldTimeout, 120 s by default).
void kill_a_controller_mid_stream(const std::string& allocation) {
  std::string url;
  test::fresh_postgres_database(url);
  if (url.empty()) return;
  LiveCluster cluster("--machine torus:4x4x4 --agents 2 --controllers 2 --allocation " +
                      allocation + " --store " + url);
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string out_dir = cluster.dir() / "out";
  std::filesystem::create_directories(out_dir);
  ControllerClient client = cluster.client();
  ASSERT_EQ(client.addresses().size(), 2u);
  Result<std::unique_ptr<StateStore>> store = open_store(url, {.read_only = true});
  ASSERT_TRUE(store) << store.error().message;
  // The scheduler is whoever took the lease last ("HOST:PID took the scheduler lease").
  auto scheduler_pid = [&]() -> pid_t {
    pid_t pid = -1;
    Result<std::vector<StoredEvent>> events = (*store)->events(0, 1000000);
    if (!events) return -1;
    for (const StoredEvent& e : *events) {
      if (e.kind != "scheduler") continue;
      std::string holder = e.detail.substr(0, e.detail.find(' '));
      pid = std::stoi(holder.substr(holder.rfind(':') + 1));
    }
    return pid;
  };
  constexpr int kSubmissions = 600;
  std::vector<int64_t> acknowledged;
  Seconds killed_at = 0;
  pid_t victim = -1;
  for (int i = 0; i < kSubmissions; ++i) {
    if (i == kSubmissions / 3) {
      victim = allocation == "lease" ? scheduler_pid() : cluster.pid_of("trellisd");
      ASSERT_TRUE(victim == cluster.pid_of("trellisd") || victim == cluster.pid_of("trellisd-1"))
          << "the scheduler's pid " << victim << " is not one of this cluster's controllers";
      killed_at = wall_clock_now();
      ASSERT_EQ(::kill(victim, SIGKILL), 0);
    }
    v1::SubmitRequest request = node_echo_job(1 + i % 3, out_dir);
    v1::SubmitReply reply;
    grpc::Status status =
        client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.Submit(&context, request, &reply);
        });
    ASSERT_TRUE(status.ok()) << "the surviving controller refused a submission: "
                             << status.error_message();
    acknowledged.push_back(reply.job_id());
  }
  // Every acknowledged job completes, having run once: one line per node in its output.
  wait_until_no_job_is_active(client);
  if (::testing::Test::HasFatalFailure()) return;
  int lost = 0, ran_twice = 0;
  for (int64_t id : acknowledged) {
    Result<StoredJob> job = (*store)->job(id);
    if (!job || job->state != JobState::kCompleted) {
      ++lost;
      ADD_FAILURE() << "job " << id
                    << (job ? " is " + std::string(state_name(job->state)) + " (" + job->reason +
                                  ", exit " + std::to_string(job->exit_code) + ":" +
                                  std::to_string(job->signal) + ")"
                            : " is gone");
      continue;
    }
    std::vector<std::string> lines = testing::read_lines(out_dir + "/" + std::to_string(id));
    if (lines.size() != job->nodes.size()) {
      ++ran_twice;
      ADD_FAILURE() << "job " << id << " wrote " << lines.size() << " lines on "
                    << job->nodes.size() << " nodes";
    }
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(ran_twice, 0);
  // The takeover, from the log: the survivor took the lease (lease allocation), and its first
  // start after the kill. Under concurrent allocation the survivor places its own jobs all along,
  // and adopts the victim's unfinished ones (an "adopt" event, if the victim had any).
  Result<std::vector<StoredEvent>> events = (*store)->events(0, 1000000);
  ASSERT_TRUE(events);
  Seconds takeover = 0, first_start = 0, adopted = 0;
  for (const StoredEvent& e : *events) {
    if (e.time < killed_at) continue;
    if (e.kind == "scheduler" && takeover == 0) takeover = e.time;
    if (e.kind == "adopt" && adopted == 0) adopted = e.time;
    if (e.kind == "start" && first_start == 0 && (takeover > 0 || allocation != "lease"))
      first_start = e.time;
  }
  if (allocation == "lease") {
    ASSERT_GT(takeover, 0) << "no controller took the scheduler lease after the kill";
  }
  ASSERT_GT(first_start, 0) << "no job started after the kill";
  std::cout << allocation << " allocation: controller (pid " << victim << ") killed -9 after "
            << kSubmissions / 3 << " of " << kSubmissions << " submissions; lease taken over "
            << (takeover > 0 ? std::to_string(takeover - killed_at) + " s later" : "(not needed)")
            << ", its jobs adopted "
            << (adopted > 0 ? std::to_string(adopted - killed_at) + " s later" : "(none)")
            << ", first start by the survivor " << first_start - killed_at
            << " s after the kill (goal: under 1 s); " << acknowledged.size()
            << " jobs acknowledged, 0 lost, 0 run twice\n";
  EXPECT_LT(first_start - killed_at, 30) << "the survivor took too long to schedule";
}

TEST(TwoControllersTest, TheSchedulerKilledMidStreamLosesNoJobAndTheOtherTakesOver) {
  kill_a_controller_mid_stream("lease");
}

TEST(TwoControllersTest, ConcurrentAllocatorsOneKilledMidStreamLosesNoJobAndTheOtherAdoptsIts) {
  kill_a_controller_mid_stream("concurrent");
}

// `make run`'s demo, small: every job of the trace runs for real, both runs are written as
// `trellis sim` writes one, and the live run's metrics are those of the jobs that ran.
TEST(LiveDemo, RunsTheTraceForRealBesideThePrediction) {
  TempDir dir;
  CommandRun demo = run_command(std::string(TRELLIS_BINARY) + " cluster demo --jobs 25 " +
                                "--seconds 8 --workload " + TRELLIS_SOURCE_DIR +
                                "/data/workloads/lublin_256.swf --out " + dir.path() + "/out" +
                                " --dir " + dir.path() + "/cluster");
  ASSERT_EQ(demo.status, 0) << demo.output;
  EXPECT_NE(demo.output.find("Simulator vs live"), std::string::npos) << demo.output;
  for (const char* run : {"predicted", "live"}) {
    std::string base = dir.path() + "/out/" + run + "/";
    std::ifstream in(base + "summary.json");
    nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(summary.is_object()) << run;
    EXPECT_EQ(summary["metrics"]["jobs"], 25) << run << ": " << summary.dump();
    EXPECT_TRUE(std::ifstream(base + "report.html").good()) << run;
  }
  std::ifstream csv(dir.path() + "/out/live/jobs.csv");
  std::string header, line;
  ASSERT_TRUE(std::getline(csv, header));
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 25);
  // The demo brought its cluster down.
  CommandRun status =
      run_command(std::string(TRELLIS_BINARY) + " cluster status --dir " + dir.path() + "/cluster");
  EXPECT_EQ(status.output.find("running, pid"), std::string::npos) << status.output;
}

// Found when the chaos run was started from a copy of the binaries without trellis-shepherd: the
// agents exited at once, `cluster up` waited 30 s and failed, and left both controllers running.
// Now it fails as soon as an agent is gone, and stops what it started.
TEST(ClusterUpTest, AFailedClusterUpStopsWhatItStarted) {
  TempDir bin;
  TempDir dir;
  // trellis and trellisd, but no trellis-agent beside them (copies: the programs are found next
  // to the running binary, and a symbolic link would resolve to the build tree).
  for (const std::string& binary : {TRELLIS_BINARY, TRELLISD_BINARY}) {
    std::string name = std::filesystem::path(binary).filename();
    std::filesystem::copy_file(binary, bin / name);  // a link would lead back to the build tree
  }
  CommandRun up = run_command(bin / "trellis" + " cluster up --machine flat:4 --dir " + dir.path());
  EXPECT_NE(up.status, 0);
  EXPECT_NE(up.output.find("trellis-agent 0 exited"), std::string::npos) << up.output;
  EXPECT_NE(up.output.find("cluster down"), std::string::npos) << up.output;
  // No process of this cluster is left: none names its directory in its arguments.
  auto left = [&] {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      pid_t pid = std::atoi(entry.path().filename().c_str());
      if (pid <= 0 || !process_running(pid)) continue;
      for (const std::string& arg : process_arguments(pid))
        if (arg.find(dir.path()) != std::string::npos) found.push_back(std::to_string(pid));
    }
    return found;
  };
  EXPECT_TRUE(eventually([&] { return left().empty(); }, std::chrono::seconds(10)))
      << "still running: " << ::testing::PrintToString(left());
}

// An agent killed while a task ran leaves its cgroup (and the task's inside it); `cluster down`
// kills the leftover task and removes both, so that test runs leave no cgroups on the host.
TEST(ClusterDownTest, RemovesTheCgroupOfAnAgentKilledWhileItsTaskRan) {
  LiveCluster cluster("--machine flat:2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  std::ifstream recorded(cluster.dir() / "agent-0/cgroup");
  std::string root;
  if (!std::getline(recorded, root)) GTEST_SKIP() << "the agent freezes with signals: no cgroup";
  int64_t id = cluster.submit("-N 1 -- sleep 600");
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "R"; }));
  ASSERT_TRUE(eventually([&] {
    return std::filesystem::exists(root + "/" + std::to_string(id) + ".1");
  })) << root;
  ::kill(cluster.pid_of("agent-0"), SIGKILL);
  ASSERT_TRUE(eventually([&] { return !process_running(cluster.pid_of("agent-0")); }));
  EXPECT_TRUE(std::filesystem::exists(root)) << "a killed agent removes nothing";
  CommandRun down =
      run_command(std::string(TRELLIS_BINARY) + " cluster down --dir " + cluster.dir().path());
  EXPECT_EQ(down.status, 0) << down.output;
  EXPECT_FALSE(std::filesystem::exists(root)) << root;
}

// An agent that serves one node checks it against its [[nodetype]]: a node whose config claims
// more cores (and memory) than hwloc finds on the host is drained, the reason naming what it
// lacks; a node of a type this host holds stays in service and runs jobs.
TEST(NodeHardwareTest, ANodeClaimingMoreThanItsHostHasIsDrainedWithTheReason) {
  LiveCluster cluster(
      "--machine flat:2 --agents 2 --node-type 'big:n1:cores=4096,mem=64T' "
      "--node-type small::cores=1,mem=16M");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  nlohmann::json big;
  ASSERT_TRUE(eventually([&] {
    nlohmann::json all =
        nlohmann::json::parse(cluster.trellis("nodes --json").output, nullptr, false);
    if (!all.is_array()) return false;
    for (const nlohmann::json& node : all)
      if (node["name"] == "n1" && (node["state"] == "drain" || node["state"] == "drained"))
        big = node;
    return big.is_object();
  })) << cluster.trellis("nodes --json").output;
  EXPECT_EQ(big["type"], "big");
  EXPECT_EQ(big["cpus"], 4096);
  EXPECT_EQ(big["memory_mb"], int64_t{64} << 20);
  const std::string reason = big["reason"];
  EXPECT_NE(reason.find("hardware short of node type big: "), std::string::npos) << reason;
  EXPECT_NE(reason.find("cores: 4096 configured, "), std::string::npos) << reason;
  EXPECT_NE(reason.find("memory: 64T configured, "), std::string::npos) << reason;
  // The drain is in the controller's log, with its reason.
  EXPECT_NE(testing::read_file(cluster.dir() / "trellisd.log").find("node n1 (agent "),
            std::string::npos);
  // n0 (small) is not drained, and runs what is submitted.
  int64_t id = cluster.submit("-N 1 -- true");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "CD"; })) << cluster.job(id).dump();
  EXPECT_EQ(cluster.job(id)["nodelist"], "n0");
}

}  // namespace
}  // namespace trellis
