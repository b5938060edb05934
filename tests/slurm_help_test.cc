// --help, -h, --usage, --version and -V of every Slurm-named command (cli/slurm/slurm_help.h), as
// a Slurm user types them first: each answers on stdout with exit 0, -h keeps Slurm's meaning
// where Slurm gives it another (squeue, sinfo: no header; scancel: none), and every option a
// command's help lists is one the command takes (run with a value, it is not refused as
// unrecognized or unsupported), so the help cannot drift from the parser.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "build_paths.h"
#include "cli_run.h"

namespace trellis {
namespace {

using test::CommandRun;
using test::run_command;

const std::vector<std::string> kCommands = {"sbatch", "squeue",   "scancel", "sacct",
                                            "sinfo",  "scontrol", "srun"};

// A command run by its Slurm name, as the links in the build tree name it, with stdout apart
// from stderr (the help must be on stdout) and no cluster to talk to.
struct Split {
  int status = -1;
  std::string out, err;
};
Split run_slurm(const std::string& command, const std::string& args) {
  const std::string bin = std::filesystem::path(TRELLIS_BINARY).parent_path() / "slurm-bin";
  test::TempDir dir;
  const std::string err = (dir.path() / "err").string();
  CommandRun r = run_command("(cd " + dir.str() + " && env -u TRELLIS_CONF -u SLURM_JOB_ID " +
                             "-u TRELLIS_JOB_ID " + bin + "/" + command + " " + args + " 2>" + err +
                             " </dev/null)");
  return {r.status, r.output, test::read_text(err)};
}

TEST(SlurmHelpTest, EveryCommandAnswersHelpUsageAndVersionOnStdout) {
  for (const std::string& command : kCommands) {
    Split help = run_slurm(command, "--help");
    EXPECT_EQ(help.status, 0) << command << ": " << help.err;
    EXPECT_EQ(help.out.rfind("Usage: " + command + " ", 0), 0u) << command << ":\n" << help.out;
    EXPECT_NE(help.out.find("--version"), std::string::npos) << command;
    EXPECT_NE(help.out.find("README.md"), std::string::npos) << command;
    EXPECT_EQ(help.err, "") << command;

    Split usage = run_slurm(command, "--usage");
    EXPECT_EQ(usage.status, 0) << command << ": " << usage.err;
    EXPECT_EQ(usage.out.rfind("Usage: " + command + " [", 0), 0u) << command << ":\n" << usage.out;
    for (const std::string& line : {usage.out}) EXPECT_LT(line.find('\n'), 81u) << command;

    for (const char* flag : {"--version", "-V"}) {
      Split version = run_slurm(command, flag);
      EXPECT_EQ(version.status, 0) << command << " " << flag << ": " << version.err;
      EXPECT_TRUE(
          std::regex_match(version.out, std::regex(R"(slurm \d+\.\d+\.\d+ \(trellis .+\)\n)")))
          << command << " " << flag << ": " << version.out;
    }
  }
}

TEST(SlurmHelpTest, DashHKeepsSlurmsMeaningPerCommand) {
  for (const char* command : {"sbatch", "srun", "sacct", "scontrol"}) {
    Split h = run_slurm(command, "-h");
    EXPECT_EQ(h.status, 0) << command << ": " << h.err;
    EXPECT_EQ(h.out, run_slurm(command, "--help").out) << command;
  }
  // squeue -h and sinfo -h mean --noheader: no help, and (with no cluster) the cluster's error.
  for (const char* command : {"squeue", "sinfo"}) {
    Split h = run_slurm(command, "-h");
    EXPECT_NE(h.status, 0) << command;
    EXPECT_EQ(h.out.find("Usage:"), std::string::npos) << command;
    EXPECT_NE(h.err.find("config"), std::string::npos) << command << ": " << h.err;
  }
  Split scancel = run_slurm("scancel", "-h");
  EXPECT_EQ(scancel.status, 2);
  EXPECT_NE(scancel.err.find("unrecognized option '-h'"), std::string::npos) << scancel.err;
}

TEST(SlurmHelpTest, AHelpAfterTheScriptOrCommandIsTheirs) {
  // sbatch job.sh --help: --help is the script's argument, so sbatch tries to submit job.sh.
  Split sbatch = run_slurm("sbatch", "-o out.txt job.sh --help");
  EXPECT_EQ(sbatch.out.find("Usage:"), std::string::npos);
  EXPECT_NE(sbatch.err.find("job.sh"), std::string::npos) << sbatch.err;
  Split with_value = run_slurm("sbatch", "-o out.txt --help");  // out.txt is -o's value
  EXPECT_EQ(with_value.status, 0);
  EXPECT_EQ(with_value.out.rfind("Usage: sbatch", 0), 0u);
}

// The options a help text lists: "--name" with whether it takes a value.
std::map<std::string, bool> listed_options(const std::string& help) {
  std::map<std::string, bool> options;
  static const std::regex line(R"(^  (?:-\w, |    )--([\w-]+)(=|\[=)?)");
  std::istringstream lines(help);
  for (std::string text; std::getline(lines, text);) {
    std::smatch m;
    if (std::regex_search(text, m, line)) options[m[1]] = m[2].matched && m[2] == "=";
  }
  options.erase("help");
  options.erase("usage");
  options.erase("version");
  return options;
}

TEST(SlurmHelpTest, EveryOptionAHelpListsIsTakenByItsCommand) {
  // Values that parse for options whose value is checked; any other option gets "1".
  const std::map<std::string, std::string> values = {{"array", "1-2"},
                                                     {"dependency", "afterok:1"},
                                                     {"kill-on-invalid-dep", "yes"},
                                                     {"export", "ALL"},
                                                     {"shape", "2x2"},
                                                     {"mode", "torus"},
                                                     {"env", "A=1"},
                                                     {"mpi", "auto"},
                                                     {"distribution", "block"},
                                                     {"format", "%i"},
                                                     {"states", "R"},
                                                     {"state", "PENDING"},
                                                     {"user", "root"},
                                                     {"signal", "9"},
                                                     {"starttime", "2026-01-01"},
                                                     {"endtime", "2026-01-02"},
                                                     {"partition", "main"},
                                                     {"jobs", "1"},
                                                     {"time", "10"},
                                                     {"nodelist", "n0"},
                                                     {"name", "x"},
                                                     {"job-name", "x"},
                                                     {"output", "out.txt"},
                                                     {"error", "err.txt"},
                                                     {"chdir", "/tmp"},
                                                     {"wrap", "true"},
                                                     {"cpu-bind", "cores"},
                                                     {"sacct:format", "JobID,State"},
                                                     {"sacct:state", "CD"},
                                                     {"sinfo:states", "idle"},
                                                     {"sinfo:format", "%P"}};
  int checked = 0;
  for (const std::string& command : kCommands) {
    std::map<std::string, bool> options = listed_options(run_slurm(command, "--help").out);
    EXPECT_GE(options.size(), 4u) << command;
    for (const auto& [name, takes_value] : options) {
      const std::string own = command + ":" + name;  // a value only this command takes
      std::string value = values.contains(own)    ? values.at(own)
                          : values.contains(name) ? values.at(name)
                                                  : "1";
      std::string args = "--" + name + (takes_value ? " " + value : "");
      if (command == "sbatch" && name != "wrap") args += " --wrap true";
      if (command == "srun" || command == "scontrol")
        args += command == "srun" ? " true" : " show job";
      Split r = run_slurm(command, args);
      for (const char* refusal : {"unrecognized option", "not supported", "not expected",
                                  "requires an argument", "is not a"})
        EXPECT_EQ(r.err.find(refusal), std::string::npos)
            << command << " " << args << " (listed in its --help) was refused: " << r.err;
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

}  // namespace
}  // namespace trellis
