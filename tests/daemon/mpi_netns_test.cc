// MPI jobs whose nodes are served by agents on separate hosts as far as the network goes: each
// agent in a network namespace of its own with its own address (tests/daemon/netns_cluster.h):
// the PMI exchange between agents and the ranks' own traffic cross the hosts' addresses. Open
// MPI's TCP transport is told to use the hosts' subnet (its shared-memory transport would only
// serve ranks of one emulated node, and these nodes share one machine's /dev/shm: the job keeps
// to TCP); MPICH's UCX picks its transports itself.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "../mpi/mpi_programs.h"
#include "netns_cluster.h"

namespace trellis::testing {
namespace {

TEST(MpiNetnsTest, RanksOnAgentsOnSeparateHostsWireUp) {
  if (std::string why = NetnsCluster::unavailable(); !why.empty()) GTEST_SKIP() << why;
  NetnsCluster cluster("--machine torus:2x2 --agents 2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  TempDir programs;
  ::chmod(programs.path().c_str(), 0755);
  std::string subnet = cluster.host(0).address;
  subnet = subnet.substr(0, subnet.rfind('.')) + ".0/24";
  for (const MpiFlavour* f : {&kMpich, &kOpenMpi}) {
    std::string error;
    std::string binary = build_allreduce(*f, programs.path(), error);
    ASSERT_FALSE(binary.empty()) << error;
    std::string extra = f->name == "openmpi" ? "--env OMPI_MCA_pml=ob1 --env OMPI_MCA_btl=self,tcp "
                                               "--env OMPI_MCA_btl_tcp_if_include=" +
                                                   subnet
                                             : "";
    for (const std::string layout : {"-N 4", "-N 2 -n 4"}) {
      std::string out = programs / (f->name + "-out-%j.txt");
      test::CommandRun r =
          cluster.trellis("submit " + layout + " --mpi " + f->mpi + " " + extra + " --wait -o " +
                          out + " -D " + programs.path() + " -- " + binary);
      size_t at = r.output.find("Submitted job ");
      ASSERT_NE(at, std::string::npos) << r.output;
      std::string id = std::to_string(std::stoll(r.output.substr(at + 14)));
      std::string path = out;
      path.replace(path.find("%j"), 2, id);
      EXPECT_EQ(r.status, 0) << f->name << " " << layout << ": " << r.output
                             << test::read_text(path);
      EXPECT_EQ(check_allreduce(test::read_text(path), 4), "") << f->name << " " << layout;
    }
  }
}

}  // namespace
}  // namespace trellis::testing
