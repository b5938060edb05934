#include "cli/cluster/interrupt_cleanup.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <thread>

namespace trellis::cli {
namespace {

sigset_t watched() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  return signals;
}

}  // namespace

InterruptCleanup::InterruptCleanup(std::string who) : who_(std::move(who)) {
  sigset_t signals = watched();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread exists, so all inherit
  std::thread([this] {
    sigset_t signals = watched();
    int received = 0;
    sigwait(&signals, &received);
    std::string command;
    {
      std::lock_guard lock(mutex_);
      command = command_;
    }
    std::cerr << "\n" << who_ << ": interrupted; stopping what it started\n";
    if (!command.empty()) (void)std::system(command.c_str());
    _exit(128 + received);
  }).detach();
}

void InterruptCleanup::set(std::string command) {
  std::lock_guard lock(mutex_);
  command_ = std::move(command);
}

}  // namespace trellis::cli
