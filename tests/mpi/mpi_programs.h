// The MPI test program (tests/mpi/allreduce.c) built with Debian's MPI compilers, and the check
// of what its ranks print: a run of N ranks passes only if N lines say "rank R of N sum N" with R
// covering 0..N-1 once each, so that ranks that ran as singletons ("rank 0 of 1 sum 1" each)
// fail it.
#pragma once

#include <signal.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../build_paths.h"
#include "../cli_run.h"

namespace trellis::testing {

// Which MPI: how to compile, and what a step running it must ask for.
struct MpiFlavour {
  std::string name;      // "mpich", "openmpi"
  std::string compiler;  // mpicc.mpich, mpicc.openmpi
  std::string mpi;       // trellis submit --mpi
};
inline const MpiFlavour kMpich{"mpich", "mpicc.mpich", "pmi1"};
inline const MpiFlavour kOpenMpi{"openmpi", "mpicc.openmpi", "pmix"};

// Open MPI between emulated nodes of one host: shared memory (vader) would be set up between
// ranks that PMIx says are on different nodes but share /dev/shm and one hostname, so the tests
// keep Open MPI to TCP over loopback (and the ob1 messaging layer that uses it).
inline const std::string kOpenMpiOnOneHost =
    "--env OMPI_MCA_pml=ob1 --env OMPI_MCA_btl=self,tcp --env OMPI_MCA_btl_tcp_if_include=lo";

// Builds allreduce.c with the flavour's compiler into `dir`; the binary's path, or "" (with the
// compiler's output in `error`).
inline std::string build_allreduce(const MpiFlavour& flavour, const std::string& dir,
                                   std::string& error) {
  std::string binary = dir + "/allreduce_" + flavour.name;
  test::CommandRun r = test::run_command(flavour.compiler + " -O1 -o " + binary + " " +
                                         TRELLIS_SOURCE_DIR + "/tests/mpi/allreduce.c");
  if (r.status != 0) {
    error = r.output;
    return "";
  }
  return binary;
}

struct RankLine {
  int rank = -1, size = 0, sum = 0;
  pid_t pid = 0;
  long long init_us = 0, end_us = 0;
};

// The ranks' lines in `output` (other lines are ignored).
inline std::vector<RankLine> rank_lines(const std::string& output) {
  static const std::regex line(
      R"(rank (\d+) of (\d+) sum (\d+) pid (\d+) init_us (\d+) end_us (\d+))");
  std::vector<RankLine> out;
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
    RankLine l;
    l.rank = std::stoi((*it)[1]);
    l.size = std::stoi((*it)[2]);
    l.sum = std::stoi((*it)[3]);
    l.pid = static_cast<pid_t>(std::stol((*it)[4]));
    l.init_us = std::stoll((*it)[5]);
    l.end_us = std::stoll((*it)[6]);
    out.push_back(l);
  }
  return out;
}

// "" when `output` is a wired-up run of `n` ranks, else what is wrong with it.
inline std::string check_allreduce(const std::string& output, int n) {
  std::vector<RankLine> lines = rank_lines(output);
  if (static_cast<int>(lines.size()) != n)
    return std::to_string(lines.size()) + " rank lines for " + std::to_string(n) + " ranks:\n" +
           output;
  std::set<int> ranks;
  for (const RankLine& l : lines) {
    if (l.size != n || l.sum != n)
      return "a rank saw size " + std::to_string(l.size) + " and sum " + std::to_string(l.sum) +
             " (not wired up):\n" + output;
    if (l.rank < 0 || l.rank >= n || !ranks.insert(l.rank).second)
      return "rank " + std::to_string(l.rank) + " is out of range or twice:\n" + output;
  }
  return "";
}

// The pids of `lines` that still run.
inline std::vector<pid_t> still_running(const std::vector<RankLine>& lines) {
  std::vector<pid_t> alive;
  for (const RankLine& l : lines)
    if (l.pid > 0 && ::kill(l.pid, 0) == 0) alive.push_back(l.pid);
  return alive;
}

}  // namespace trellis::testing
