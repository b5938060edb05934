// LiveCluster: a local cluster brought up by `trellis cluster up` in a fresh directory for one
// test (munged, trellisd, agents on loopback with ephemeral ports) and brought down by
// `trellis cluster down` when the test ends; the CLI and raw gRPC drive it.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../build_paths.h"
#include "../cli_run.h"
#include "daemon/config.h"
#include "daemon/controller_client.h"
#include "daemon_test_support.h"

namespace trellis::testing {

class LiveCluster {
 public:
  explicit LiveCluster(const std::string& options) {
    up_ = test::run_command(std::string(TRELLIS_BINARY) + " cluster up --dir " + dir_.path() + " " +
                            options);
    conf_ = dir_ / "trellis.toml";
  }
  ~LiveCluster() {
    test::run_command(std::string(TRELLIS_BINARY) + " cluster down --dir " + dir_.path());
  }

  const test::CommandRun& up() const { return up_; }
  const TempDir& dir() const { return dir_; }
  // `trellis ARGS` against this cluster.
  test::CommandRun trellis(const std::string& args) const {
    return test::run_command("TRELLIS_CONF=" + conf_ + " " + TRELLIS_BINARY + " " + args);
  }
  nlohmann::json job(int64_t id) const {
    test::CommandRun r = trellis("show job " + std::to_string(id) + " --json");
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  std::string state(int64_t id) const {
    nlohmann::json j = job(id);
    return j.is_object() ? j["state"].get<std::string>() : "?";
  }
  int64_t submit(const std::string& args) const {
    test::CommandRun r = trellis("submit " + args);
    size_t at = r.output.find("Submitted job ");
    return at == std::string::npos ? -1 : std::stoll(r.output.substr(at + 14));
  }
  ClusterConfig config() const { return *load_cluster_config(conf_); }
  ControllerClient client() const {
    ClusterConfig c = config();
    return ControllerClient({.addresses = c.controllers, .munge_socket = c.munge_socket});
  }
  pid_t pid_of(const std::string& name) const {
    std::ifstream in(dir_ / (name + ".pid"));
    pid_t pid = -1;
    in >> pid;
    return pid;
  }

 private:
  TempDir dir_;
  std::string conf_;
  test::CommandRun up_;
};

}  // namespace trellis::testing
