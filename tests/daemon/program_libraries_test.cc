// What the agent reads of a job's program before it starts (daemon/program_libraries.h), and how a
// step is wired from it (daemon/agent_requests.h's step_wiring): real programs of this machine,
// the tests' MPI program built with both of Debian's MPI compilers, a script, and broken files.
#include "daemon/program_libraries.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../mpi/mpi_programs.h"
#include "daemon/agent_requests.h"
#include "daemon_test_support.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

class ProgramLibrariesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    programs_ = new testing::TempDir();
    for (const testing::MpiFlavour* f : {&testing::kMpich, &testing::kOpenMpi}) {
      std::string error;
      binaries_[f->name] = testing::build_allreduce(*f, programs_->path(), error);
      ASSERT_FALSE(binaries_[f->name].empty()) << f->compiler << ": " << error;
    }
  }
  static void TearDownTestSuite() {
    delete programs_;
    programs_ = nullptr;
  }

  std::string write_file(const std::string& name, const std::string& bytes, mode_t mode = 0755) {
    std::string path = (fs::path(dir_.path()) / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    ::chmod(path.c_str(), mode);
    return path;
  }

  static inline testing::TempDir* programs_ = nullptr;
  static inline std::map<std::string, std::string> binaries_;
  testing::TempDir dir_;
};

TEST_F(ProgramLibrariesTest, ReadsTheLibrariesAProgramNeeds) {
  Result<std::vector<std::string>> libraries = needed_libraries("/bin/true");
  ASSERT_TRUE(libraries) << libraries.error().message;
  EXPECT_NE(std::find(libraries->begin(), libraries->end(), "libc.so.6"), libraries->end());
  EXPECT_EQ(program_mpi("/bin/true"), ProgramMpi::kNone);
  EXPECT_EQ(program_mpi("/bin/sh"), ProgramMpi::kNone);
}

TEST_F(ProgramLibrariesTest, TellsOpenMpiFromMpichByTheirLibraries) {
  EXPECT_EQ(program_mpi(binaries_["openmpi"]), ProgramMpi::kOpenMpi);
  EXPECT_EQ(program_mpi(binaries_["mpich"]), ProgramMpi::kMpich);
  Result<std::vector<std::string>> ompi = needed_libraries(binaries_["openmpi"]);
  ASSERT_TRUE(ompi);
  EXPECT_NE(std::find(ompi->begin(), ompi->end(), "libmpi.so.40"), ompi->end());
  EXPECT_EQ(mpi_of_library("libmpi.so.40"), ProgramMpi::kOpenMpi);
  EXPECT_EQ(mpi_of_library("libmpich.so.12"), ProgramMpi::kMpich);
  EXPECT_EQ(mpi_of_library("libmpi.so.12"), ProgramMpi::kMpich);  // MVAPICH, Intel MPI
  EXPECT_EQ(mpi_of_library("libm.so.6"), ProgramMpi::kNone);
  EXPECT_EQ(mpi_of_library("libmpfr.so.6"), ProgramMpi::kNone);
}

TEST_F(ProgramLibrariesTest, AScriptOrABrokenFileIsUnknownWithTheReasonNamingIt) {
  std::string script = write_file("job.sh", "#!/bin/sh\nmpirun ./a.out\n");
  Result<std::vector<std::string>> read = needed_libraries(script);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find(script), std::string::npos) << read.error().message;
  EXPECT_EQ(program_mpi(script), ProgramMpi::kUnknown);
  EXPECT_EQ(program_mpi(dir_.path() + "/absent"), ProgramMpi::kUnknown);
  // An ELF file cut short, and one whose dynamic section points outside the file: refused, not
  // read past their ends.
  std::ifstream in("/bin/true", std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 4096u);
  for (size_t length : {size_t{4}, size_t{64}, size_t{200}, size_t{4096}}) {
    std::string cut = write_file("cut" + std::to_string(length), whole.substr(0, length));
    EXPECT_FALSE(needed_libraries(cut)) << length;
    EXPECT_EQ(program_mpi(cut), ProgramMpi::kUnknown) << length;
  }
}

TEST_F(ProgramLibrariesTest, FindsTheProgramAsExecWould) {
  EXPECT_EQ(*find_program("true", "/nonexistent:/usr/bin:/bin", "/"), "/usr/bin/true");
  // A directory, or a file that is not executable, of the command's name is passed over.
  fs::create_directories(dir_.path() + "/a/tool");
  fs::create_directories(dir_.path() + "/b");
  write_file("b/tool", "data", 0644);
  std::string runnable = write_file("tool", "#!/bin/sh\n");
  std::string path = dir_.path() + "/a:" + dir_.path() + "/b:" + dir_.path();
  EXPECT_EQ(*find_program("tool", path, "/"), dir_.path() + "/tool");
  // A command with a '/' is itself, relative to the job's directory; an empty PATH entry is
  // the job's directory.
  EXPECT_EQ(*find_program("./tool", "", dir_.path()), dir_.path() + "/./tool");
  EXPECT_EQ(*find_program("tool", "/nonexistent:", dir_.path()), dir_.path() + "/./tool");
  Result<std::string> missing = find_program("no-such-program", "/usr/bin:/bin", "/");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no-such-program"), std::string::npos);
}

v1::LaunchRequest one_node_launch(std::vector<std::string> argv, int ntasks = 1) {
  v1::LaunchRequest request;
  request.set_job_id(5);
  request.set_attempt(1);
  request.add_nodes("n0");
  request.set_nnodes(1);
  request.add_tasks_per_node(ntasks);
  for (std::string& arg : argv) request.add_argv(std::move(arg));
  request.set_cwd("/tmp");
  return request;
}

StepWiring wiring_of(const v1::LaunchRequest& request) {
  const std::map<std::string, std::string> variables = {{"PATH", "/usr/bin:/bin"}};
  return step_wiring(request, launch_layout(request), variables);
}

TEST_F(ProgramLibrariesTest, AStepIsWiredForWhatItsProgramNeeds) {
  // One task of a program that links no MPI: the command itself, no shell, no PMI.
  StepWiring wiring = wiring_of(one_node_launch({"true"}));
  EXPECT_TRUE(wiring.direct);
  EXPECT_EQ(wiring.mpi, MpiKind::kNone);
  EXPECT_EQ(wiring.program_path, "/usr/bin/true");
  // Several tasks of it: a shell serving PMI-1 (it may still start an MPI program).
  wiring = wiring_of(one_node_launch({"true"}, 2));
  EXPECT_FALSE(wiring.direct);
  EXPECT_EQ(wiring.mpi, MpiKind::kPmi1);
  // MPI programs, one task or many: Open MPI gets PMIx (and PMI-1), MPICH PMI-1.
  for (int ntasks : {1, 4}) {
    wiring = wiring_of(one_node_launch({binaries_["openmpi"]}, ntasks));
    EXPECT_FALSE(wiring.direct) << ntasks;
    EXPECT_EQ(wiring.mpi, MpiKind::kPmix) << ntasks;
    wiring = wiring_of(one_node_launch({binaries_["mpich"]}, ntasks));
    EXPECT_FALSE(wiring.direct) << ntasks;
    EXPECT_EQ(wiring.mpi, MpiKind::kPmi1) << ntasks;
  }
  // A script may run either: both are served.
  std::string script = write_file("run.sh", "#!/bin/sh\nexec ./a.out\n");
  wiring = wiring_of(one_node_launch({script}));
  EXPECT_FALSE(wiring.direct);
  EXPECT_EQ(wiring.mpi, MpiKind::kPmix);
  // What the job asks for wins; --label needs the shell; --mpi none with one task is direct.
  v1::LaunchRequest asked = one_node_launch({binaries_["openmpi"]});
  asked.set_mpi("pmi1");
  EXPECT_EQ(wiring_of(asked).mpi, MpiKind::kPmi1);
  asked.set_mpi("none");
  EXPECT_TRUE(wiring_of(asked).direct);
  v1::LaunchRequest labelled = one_node_launch({"true"});
  labelled.set_label(true);
  EXPECT_FALSE(wiring_of(labelled).direct);
  v1::LaunchRequest none_of_two = one_node_launch({"true"}, 2);
  none_of_two.set_mpi("none");
  EXPECT_FALSE(wiring_of(none_of_two).direct);
  EXPECT_EQ(wiring_of(none_of_two).mpi, MpiKind::kNone);
}

TEST_F(ProgramLibrariesTest, ADirectTaskRunsTheCommandWithTheRankVariablesAShellWouldSet) {
  ShellSetup shell;
  shell.binary = "/opt/trellis/trellis-shell";
  TaskSpec spec = task_spec(one_node_launch({"true", "x"}), 0, {"PATH=/usr/bin:/bin"}, shell);
  EXPECT_FALSE(spec.shell);
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"true", "x"}));
  EXPECT_EQ(spec.program, "/usr/bin/true");
  for (const char* entry : {"SLURM_PROCID=0", "SLURM_LOCALID=0", "TRELLIS_PROCID=0",
                            "SLURM_STEP_ID=0", "TRELLIS_NODENAME=n0"})
    EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), entry), spec.env.end()) << entry;
  TaskSpec shelled = task_spec(one_node_launch({"true"}, 2), 0, {"PATH=/usr/bin:/bin"}, shell);
  EXPECT_TRUE(shelled.shell);
  EXPECT_EQ(shelled.argv.front(), shell.binary);
  EXPECT_EQ(std::find(shelled.env.begin(), shelled.env.end(), "SLURM_PROCID=0"),
            shelled.env.end());  // each rank's own, from its shell
}

TEST_F(ProgramLibrariesTest, ABatchStepSeesNoStepVariablesAsUnderSbatch) {
  v1::LaunchRequest batch = one_node_launch({"/bin/sh", "script"});
  batch.set_script("#!/bin/sh\ntrue\n");
  TaskSpec spec = task_spec(batch, 0, {"PATH=/usr/bin:/bin"}, ShellSetup{});
  EXPECT_FALSE(spec.shell);
  for (const std::string& entry : spec.env) EXPECT_NE(entry.rfind("SLURM_STEP", 0), 0u) << entry;
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "TRELLIS_STEP_ID=batch"), spec.env.end());
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "SLURM_JOB_ID=5"), spec.env.end());
}

}  // namespace
}  // namespace trellis
