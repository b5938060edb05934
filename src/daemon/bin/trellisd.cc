// trellisd: the Trellis controller (allocator daemon). See `trellisd --help`.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "daemon/config.h"
#include "daemon/controller_service.h"
#include "daemon/log.h"

int main(int argc, char** argv) {
  CLI::App app{
      "trellisd: the Trellis controller. It takes jobs over gRPC (trellis submit, queue, cancel),\n"
      "schedules them with the same scheduling core as `trellis sim`, starts them on the agents\n"
      "(trellis-agent), and keeps every decision in its store, from which it rebuilds itself\n"
      "after a restart. Several trellisd may share one PostgreSQL store: all take every call,\n"
      "one at a time schedules (the scheduler lease), and another takes over when it stops. The "
      "config file's format is in src/daemon/config.h; `trellis cluster up`\n"
      "writes one for a local cluster."};
  std::string conf;
  std::string listen, port_file;
  app.add_option("--conf,-c", conf, "the cluster config (TOML); default: $TRELLIS_CONF");
  app.add_option("--listen", listen, "host:port to serve on, overriding [controller] listen");
  app.add_option("--port-file", port_file,
                 "where to write the bound port, overriding [controller] port_file (several "
                 "controllers of one cluster share its config, each with its own --listen)");
  app.set_version_flag("--version", std::string("trellisd ") + TRELLIS_VERSION);
  CLI11_PARSE(app, argc, argv);

  trellis::Result<std::string> path = trellis::find_cluster_config(conf);
  if (!path) {
    std::cerr << "trellisd: " << path.error().message << "\n";
    return 2;
  }
  trellis::Result<trellis::ClusterConfig> config = trellis::load_cluster_config(*path);
  if (!config) {
    std::cerr << "trellisd: " << config.error().message << "\n";
    return 2;
  }
  if (!listen.empty()) config->controller.listen = listen;
  if (!port_file.empty()) config->controller.port_file = port_file;

  // SIGTERM and SIGINT are taken by a thread that waits for them, so shutdown runs as ordinary
  // code rather than in a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  trellis::Result<std::unique_ptr<trellis::ControllerServer>> server =
      trellis::ControllerServer::start(*config);
  if (!server) {
    std::cerr << "trellisd: " << server.error().message << "\n";
    return 1;
  }
  trellis::log_line("trellisd " TRELLIS_VERSION " serving " + config->machine + " on port " +
                    std::to_string((*server)->port()) + ", policy " + config->controller.policy +
                    ", store " + config->store);
  if (!config->controller.port_file.empty()) {
    std::string tmp = config->controller.port_file + ".tmp";
    std::ofstream(tmp) << (*server)->port() << "\n";
    std::rename(tmp.c_str(), config->controller.port_file.c_str());
  }
  std::thread watcher([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    trellis::log_line("trellisd: signal " + std::to_string(signal_number) + ", shutting down");
    (*server)->shutdown();
  });
  (*server)->wait();
  // The watcher may still be waiting if shutdown came from elsewhere; wake it.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  return 0;
}
