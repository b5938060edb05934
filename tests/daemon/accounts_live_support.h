// What the live tests of accounts and QOS (accounts_live_test.cc, qos_live_test.cc) share: a
// Slurm command run as a given user, every job as a controller lists them, and a fixture that
// runs each test on SQLite with one controller and on PostgreSQL with two, with a way to kill the
// first controller with -9 and start it again as a supervisor would.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "../build_paths.h"
#include "../cli_run.h"
#include "../store_engines.h"
#include "daemon/controller_client.h"
#include "daemon/process.h"
#include "daemon_test_support.h"
#include "live_cluster.h"

namespace trellis::testing {

// A Slurm command against `cluster`, in its directory; `as` runs it as that user (setpriv).
// stdout only when `stdout_only` (stderr dropped), else both.
inline test::CommandRun slurm_as(const LiveCluster& cluster, const std::string& command,
                                 const std::string& as = "", bool stdout_only = false) {
  namespace fs = std::filesystem;
  std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
  std::string prefix =
      as.empty() ? "" : "setpriv --reuid=" + as + " --regid=nogroup --clear-groups ";
  std::string line = "cd " + cluster.dir().path() +
                     " && TRELLIS_CONF=" + (cluster.dir() / "trellis.toml") + " " + prefix + bin +
                     "/" + command;
  if (stdout_only) line = "{ " + line + "; } 2>/dev/null";
  return test::run_command(line);
}

// Every job of the cluster, as a controller lists them (retried while one comes back up).
inline v1::ListJobsReply all_jobs(ControllerClient& client) {
  v1::ListJobsRequest request;
  request.set_all_states(true);
  v1::ListJobsReply reply;
  EXPECT_TRUE(eventually([&] {
    reply.Clear();
    return client
        .call([&](v1::Controller::Stub& stub, grpc::ClientContext& c) {
          return stub.ListJobs(&c, request, &reply);
        })
        .ok();
  }));
  return reply;
}

// On SQLite one controller; on PostgreSQL two sharing the store (the first, killed -9, is the
// scheduler: the other takes over while it is down). `store_option_` goes after cluster up's
// other options.
class EnginesLiveTest : public ::testing::TestWithParam<test::Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == test::Engine::kPostgres) {
      std::string url;
      test::fresh_postgres_database(url);
      if (url.empty()) return;  // skipped, or failed
      store_option_ = " --store " + url + " --controllers 2";
    }
  }
  bool skipped() const { return GetParam() == test::Engine::kPostgres && store_option_.empty(); }
  // Kills the first controller with -9 and starts it again on its port, as a supervisor would.
  std::unique_ptr<ChildProcess> kill_and_restart(const LiveCluster& cluster) const {
    const std::string port = test::read_text(cluster.dir() / "trellisd.port");
    ::kill(cluster.pid_of("trellisd"), SIGKILL);
    auto restarted = std::make_unique<ChildProcess>(
        std::vector<std::string>{TRELLISD_BINARY, "--conf", cluster.dir() / "trellis.toml",
                                 "--listen", "127.0.0.1:" + port.substr(0, port.find('\n'))},
        cluster.dir() / "trellisd-restarted.log");
    std::ofstream(cluster.dir() / "trellisd.pid") << restarted->pid() << "\n";
    return restarted;
  }
  std::string store_option_;
};

}  // namespace trellis::testing
