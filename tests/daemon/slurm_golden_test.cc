// The Slurm front ends' output against Slurm's own: tests/golden/slurm/ holds what Slurm 22.05
// printed for a scenario recorded with the peer harness (../shared/peers/slurm, 4 nodes, partition
// "batch"): a running job, a completed one, a failed one (exit 3), one waiting on afterok of the
// first, an array 1-6%2, one waiting on afterok of the failed one; then the first cancelled.
// sacct's fixture comes from Slurm's source (print_fields.c, sacct.c: the accounting storage of
// the harness is off). The same scenario runs on Trellis, and each output is compared field by
// field: column layouts byte for byte, field names and their order, state names, reasons, time
// formats, array compression. What differs by nature (ids, node names, the partition's name,
// times, the submitting directory) is mapped before comparing.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "../build_paths.h"
#include "../cli_run.h"
#include "daemon_test_support.h"
#include "live_cluster.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::eventually;
using testing::LiveCluster;

namespace fs = std::filesystem;

std::string golden(const std::string& name) {
  return test::read_text(fs::path(TRELLIS_SOURCE_DIR) / "tests/golden/slurm" / name);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The squeue default columns of a line, cut at Slurm's fixed widths (%.18i %.9P %.8j %.8u %.2t
// %.10M %.6D %R), each trimmed: a line laid out otherwise comes apart here.
std::vector<std::string> squeue_columns(const std::string& line) {
  const std::pair<size_t, size_t> cuts[] = {{0, 18}, {19, 9},  {29, 8}, {38, 8},
                                            {47, 2}, {50, 10}, {61, 6}, {68, std::string::npos}};
  std::vector<std::string> out;
  for (auto [at, n] : cuts) {
    std::string part = at < line.size() ? line.substr(at, n) : "";
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    out.push_back(part);
  }
  return out;
}

// The keys of scontrol show job's Key=Value pairs, in order.
std::vector<std::string> keys_of(const std::string& text) {
  std::vector<std::string> keys;
  for (const std::string& line : lines_of(text)) {
    // Values hold no spaces here; a key follows a space or starts the line.
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      size_t eq = word.find('=');
      if (eq != std::string::npos && eq > 0) keys.push_back(word.substr(0, eq));
    }
  }
  return keys;
}

std::string value_of(const std::string& text, const std::string& key) {
  std::regex re("(^|\\s)" + key + "=(\\S*)");
  std::smatch m;
  return std::regex_search(text, m, re) ? m[2].str() : "<none>";
}

class SlurmGoldenTest : public ::testing::Test {
 protected:
  CommandRun slurm(const std::string& command) {
    std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
    return test::run_command("cd " + cluster_.dir().path() +
                             " && TRELLIS_CONF=" + (cluster_.dir() / "trellis.toml") +
                             " PATH=" + bin + ":$PATH " + command);
  }
  // A job id as the recording wrote it ("5", "5_2", "5_[3-6%2]") with this run's id.
  std::string map_id(const std::string& text) const {
    size_t cut = text.find('_');
    auto it = ids_.find(text.substr(0, cut));
    if (it == ids_.end()) return text;
    return it->second + (cut == std::string::npos ? "" : text.substr(cut));
  }
  // A line whose first field (up to a space or '|') is a job id, mapped.
  std::string map_first(const std::string& line) const {
    size_t cut = line.find_first_of(" |");
    return map_id(line.substr(0, cut)) + (cut == std::string::npos ? "" : line.substr(cut));
  }
  std::vector<std::string> mapped_lines(const std::string& file) const {
    std::vector<std::string> out;
    for (const std::string& line : lines_of(golden(file))) out.push_back(map_first(line));
    return out;
  }
  LiveCluster cluster_{"--machine flat:4"};
  std::map<std::string, std::string> ids_;  // recorded id -> this run's
};

TEST_F(SlurmGoldenTest, SbatchSqueueScontrolSinfoAndSacctPrintAsSlurmDoes) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  CommandRun first = slurm("sbatch -J golden -o /dev/null --wrap 'sleep 60'");
  ASSERT_EQ(first.status, 0) << first.output;
  // "Submitted batch job N\n", --parsable "N\n": as recorded.
  std::regex submitted("Submitted batch job ([0-9]+)\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(first.output, m, submitted)) << first.output;
  ASSERT_TRUE(std::regex_match(golden("sbatch.txt"), std::regex("Submitted batch job 1\nrc=0\n")));
  const std::string g = m[1];
  CommandRun quick = slurm("sbatch --parsable -J quick -o /dev/null --wrap 'true'");
  ASSERT_TRUE(std::regex_match(quick.output, std::regex("[0-9]+\n"))) << quick.output;
  ASSERT_TRUE(std::regex_match(golden("sbatch-parsable.txt"), std::regex("2\n")));
  const std::string q = quick.output.substr(0, quick.output.size() - 1);
  auto id = [&](const std::string& args) {
    CommandRun r = slurm("sbatch --parsable -o /dev/null " + args);
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  };
  const std::string f = id("-J failing --wrap 'exit 3'");
  const std::string w = id("-J waiting -d afterok:" + g + " --wrap 'true'");
  const std::string a = id("-J arr --array 1-6%2 --wrap 'sleep 60'");
  const std::string n = id("-J never -d afterok:" + f + " --wrap 'true'");
  ids_ = {{"1", g}, {"2", q}, {"3", f}, {"4", w}, {"5", a}, {"6", n}};
  auto squeue_shows = [&](const std::string& text) {
    return slurm("squeue -t all -h -o '%i|%T|%r'").output.find(text) != std::string::npos;
  };
  ASSERT_TRUE(eventually([&] {
    return squeue_shows(q + "|COMPLETED") && squeue_shows(f + "|FAILED|NonZeroExitCode") &&
           squeue_shows(n + "|PENDING|DependencyNeverSatisfied") &&
           squeue_shows(w + "|PENDING|Dependency\n") && squeue_shows(a + "_2|RUNNING");
  })) << slurm("squeue -t all").output;

  // squeue: the header byte for byte; every row's columns at Slurm's widths.
  auto compare_squeue = [&](const std::string& command, const std::string& file) {
    std::vector<std::string> ours = lines_of(slurm(command).output);
    std::vector<std::string> theirs = lines_of(golden(file));
    ASSERT_FALSE(ours.empty());
    EXPECT_EQ(ours[0], theirs[0]) << command;
    std::multiset<std::vector<std::string>> want, got;
    for (size_t i = 1; i < theirs.size(); ++i) {
      std::vector<std::string> c = squeue_columns(theirs[i]);
      c[0] = map_id(c[0]);
      c[1] = c[1] == "batch" ? "main" : c[1];
      c[5] = "T";                                  // times differ
      if (c[7].starts_with("n0")) c[7] = "NODES";  // node names differ
      want.insert(c);
    }
    for (size_t i = 1; i < ours.size(); ++i) {
      std::vector<std::string> c = squeue_columns(ours[i]);
      EXPECT_TRUE(std::regex_match(c[5], std::regex("[0-9]+:[0-9]{2}"))) << ours[i];
      c[5] = "T";
      if (c[7].starts_with("n")) c[7] = "NODES";
      got.insert(c);
    }
    EXPECT_EQ(got, want) << command << ":\n" << slurm(command).output;
  };
  compare_squeue("squeue", "squeue.txt");
  compare_squeue("squeue -r", "squeue-r.txt");
  // A format of the user's.
  {
    std::set<std::string> ours, theirs;
    for (const std::string& l : lines_of(slurm("squeue -h -o '%i %t %M %j'").output))
      ours.insert(std::regex_replace(l, std::regex(" [0-9]+:[0-9]{2} "), " T "));
    for (const std::string& l : mapped_lines("squeue-fmt.txt"))
      theirs.insert(std::regex_replace(l, std::regex(" [0-9]+:[0-9]{2} "), " T "));
    EXPECT_EQ(ours, theirs);
  }

  // scontrol show job: the same keys in the same order, values in Slurm's forms.
  auto show = [&](const std::string& job) { return slurm("scontrol show job " + job).output; };
  for (const auto& [ours, file] :
       std::vector<std::pair<std::string, std::string>>{{show(g), "scontrol-1.txt"},
                                                        {show(w), "scontrol-4.txt"},
                                                        {show(f), "scontrol-3.txt"},
                                                        {show(a + "_1"), "scontrol-array.txt"}}) {
    std::string theirs = golden(file);
    EXPECT_EQ(keys_of(ours), keys_of(theirs)) << file << "\nours:\n" << ours;
    for (const char* key :
         {"JobState", "Reason", "ExitCode", "BatchFlag", "Requeue", "StdIn", "Command", "JobName",
          "ArrayTaskId", "ArrayTaskThrottle", "NumNodes", "OverSubscribe"})
      EXPECT_EQ(value_of(ours, key), value_of(theirs, key)) << file << ": " << key;
    EXPECT_EQ(value_of(ours, "ArrayJobId"), map_id(value_of(theirs, "ArrayJobId"))) << file;
    std::string dependency = value_of(theirs, "Dependency");
    if (dependency.starts_with("afterok:"))
      dependency = "afterok:" + map_id(dependency.substr(8, dependency.find('(') - 8)) +
                   dependency.substr(dependency.find('('));
    EXPECT_EQ(value_of(ours, "Dependency"), dependency) << file;
    std::regex when("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}|Unknown");
    for (const char* key : {"SubmitTime", "StartTime", "EndTime", "EligibleTime"}) {
      EXPECT_TRUE(std::regex_match(value_of(ours, key), when)) << file << ": " << key;
      EXPECT_EQ(value_of(ours, key) == "Unknown", value_of(theirs, key) == "Unknown")
          << file << ": " << key << " " << value_of(ours, key);
    }
    EXPECT_TRUE(
        std::regex_match(value_of(ours, "RunTime"), std::regex("[0-9]{2}:[0-9]{2}:[0-9]{2}")));
    // The layout: the same lines, each indented as Slurm indents it, and the closing blank lines.
    EXPECT_EQ(lines_of(ours).size(), lines_of(theirs).size()) << file;
    EXPECT_TRUE(ours.ends_with("   Power=\n   \n\n")) << file;
  }
  EXPECT_EQ(value_of(show(n), "Dependency"), "afterok:" + f + "(failed)");

  // sinfo: the header byte for byte, the rows by their fields.
  auto words = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
  };
  std::vector<std::string> sinfo = lines_of(slurm("sinfo").output);
  std::vector<std::string> sinfo_golden = lines_of(golden("sinfo.txt"));
  ASSERT_FALSE(sinfo.empty());
  EXPECT_EQ(sinfo[0], sinfo_golden[0]);
  for (size_t i = 1; i < sinfo.size(); ++i) {
    std::vector<std::string> w = words(sinfo[i]);
    ASSERT_EQ(w.size(), 6u) << sinfo[i];
    EXPECT_EQ(w[0], "main*");
    EXPECT_EQ(w[1], "up");
    EXPECT_EQ(w[2], "infinite");
    EXPECT_TRUE(w[4] == "alloc" || w[4] == "idle") << sinfo[i];
  }
  EXPECT_EQ(slurm("sinfo -o %P").output, "PARTITION\nmain*\n");
  EXPECT_EQ(golden("sinfo-P.txt"), "PARTITION\nbatch*\n");

  // After the first job is cancelled: every state and reason as Slurm gives them.
  ASSERT_EQ(slurm("scancel " + g).status, 0);
  ASSERT_TRUE(eventually([&] { return squeue_shows(g + "|CANCELLED|None"); }));
  ASSERT_TRUE(eventually([&] { return squeue_shows(w + "|PENDING|DependencyNeverSatisfied"); }));
  {
    std::set<std::string> ours;
    for (const std::string& l : lines_of(slurm("squeue -t all -h -o '%i|%T|%r'").output))
      ours.insert(l);
    std::set<std::string> theirs;
    for (const std::string& l : mapped_lines("squeue-states.txt")) theirs.insert(l);
    EXPECT_EQ(ours, theirs);
  }
  EXPECT_EQ(value_of(show(g), "ExitCode"), value_of(golden("scontrol-cancelled.txt"), "ExitCode"));

  // sacct: Slurm's header layout, and what snakemake reads: "ID|STATE" lines for the job and its
  // batch step, CANCELLED without "by UID".
  EXPECT_EQ(slurm("sacct -j " + q + " | head -2").output, golden("sacct-default-header.txt"));
  EXPECT_EQ(slurm("sacct -P -n --format=JobIdRaw,State -j " + q).output,
            q + "|COMPLETED\n" + q + ".batch|COMPLETED\n");
  EXPECT_EQ(slurm("sacct -X -P -n -o jobid,state,exitcode -j " + f).output, f + "|FAILED|3:0\n");
  ASSERT_TRUE(
      eventually([&] { return slurm("sacct -X -P -n -o State -j " + g).output == "CANCELLED\n"; }));
  EXPECT_EQ(slurm("sacct -P -o JobID,State,ExitCode -j " + f + " | head -1").output,
            "JobID|State|ExitCode\n");
  EXPECT_EQ(slurm("sacct -p -n -X -o jobid,state -j " + f).output, f + "|FAILED|\n");

  // Errors as Slurm gives them: an unknown job, an unknown option.
  CommandRun bad = slurm("squeue -j 999999");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("Invalid job id specified"), std::string::npos) << bad.output;
  CommandRun unknown = slurm("sbatch --foo --wrap true");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("unrecognized option '--foo'"), std::string::npos);
  EXPECT_NE(golden("sbatch-unknown.txt").find("unrecognized option '--foo'"), std::string::npos);
}

// Cores and memory on shared nodes, against Slurm 22.05 with select/cons_tres
// (SelectTypeParameters=CR_Core_Memory; 2 nodes of CPUs=2, RealMemory=1000, recorded with the
// peer harness): `sbatch -c 1 --mem=100M`, `sbatch -N 1 -n 2 --mem-per-cpu=200M` and
// `sbatch -c 2 --mem=900M` (which waits for Resources), then squeue's %C %c %m, sinfo's %c %m %C
// %z, scontrol show node's CPUAlloc, AllocMem, State, CfgTRES and AllocTRES, and scontrol show
// job's NumCPUs, NumTasks, TRES and MinMemory*. Trellis runs the same on a flat:2 machine of
// that node type, shared.
TEST(SlurmTresGoldenTest, CoresAndMemoryOfSharedNodesPrintAsSlurmsConsTresDoes) {
  LiveCluster cluster(
      "--machine flat:2 --node-type 'two::cores=2,sockets=2,mem=1000M' "
      "--shared-nodes");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  auto slurm = [&](const std::string& command) {
    std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
    return test::run_command("cd " + cluster.dir().path() +
                             " && TRELLIS_CONF=" + (cluster.dir() / "trellis.toml") +
                             " PATH=" + bin + ":$PATH " + command);
  };
  auto id = [&](const std::string& args) {
    CommandRun r = slurm("sbatch --parsable -o /dev/null " + args);
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  };
  const std::string one = id("-c 1 --mem=100M -J one --wrap 'sleep 60'");
  ASSERT_TRUE(eventually([&] { return cluster.state(std::stoll(one)) == "R"; }));
  const std::string two = id("-N 1 -n 2 --mem-per-cpu=200M -J two --wrap 'sleep 60'");
  ASSERT_TRUE(eventually([&] { return cluster.state(std::stoll(two)) == "R"; }));
  const std::string wait = id("-c 2 --mem=900M -J wait --wrap 'sleep 60'");
  const std::map<std::string, std::string> ids = {{"1", one}, {"2", two}, {"3", wait}};
  auto node = [](std::string text) {  // Slurm's n0000 is our n0
    return std::regex_replace(text, std::regex("n000([0-9])"), "n$1");
  };
  ASSERT_TRUE(eventually([&] {
    return slurm("squeue -h -o '%i %R' -j " + wait).output == wait + " (Resources)\n";
  })) << slurm("squeue").output;

  // squeue: the header byte for byte, each row's columns.
  {
    std::vector<std::string> ours =
        lines_of(slurm("squeue -o '%.18i %.8j %.2t %.4C %.4c %.10m %R'").output);
    std::vector<std::string> theirs = lines_of(golden("squeue-tres.txt"));
    ASSERT_FALSE(ours.empty());
    EXPECT_EQ(ours[0], theirs[0]);
    std::set<std::string> want, got(ours.begin() + 1, ours.end());
    for (size_t i = 1; i < theirs.size(); ++i) {
      std::istringstream words(theirs[i]);
      std::string recorded;
      words >> recorded;
      std::string line = node(theirs[i]);
      const std::string mapped = ids.at(recorded);
      line.replace(line.find(recorded), recorded.size(), mapped);
      // Right-aligned in 18 columns: the id's length may differ.
      line = std::string(18 - std::min<size_t>(18, mapped.size()), ' ') +
             line.substr(line.find(mapped));
      want.insert(line);
    }
    EXPECT_EQ(got, want) << slurm("squeue -o '%.18i %.8j %.2t %.4C %.4c %.10m %R'").output;
  }
  // sinfo: per node and per partition, as recorded (the partition's name aside).
  EXPECT_EQ(slurm("sinfo -N -o '%N %c %m %C %z'").output, node(golden("sinfo-tres.txt")));
  EXPECT_EQ(slurm("sinfo -o '%P %c %m %C'").output,
            std::regex_replace(golden("sinfo-tres-part.txt"), std::regex("batch\\*"), "main*"));
  // scontrol show node: what its jobs hold.
  {
    const std::string ours = slurm("scontrol show node n0").output;
    const std::string theirs = golden("scontrol-node-tres.txt");
    for (const char* key : {"CPUAlloc", "CPUEfctv", "CPUTot", "RealMemory", "AllocMem", "State",
                            "Sockets", "CoresPerSocket", "ThreadsPerCore", "CfgTRES", "AllocTRES"})
      EXPECT_EQ(value_of(ours, key), value_of(theirs, key)) << key << "\nours:\n" << ours;
  }
  // scontrol show job: the cores, tasks, TRES and memory asked or held.
  for (const auto& [job, file] : std::vector<std::pair<std::string, std::string>>{
           {one, "scontrol-job-tres.txt"}, {two, "scontrol-job2-tres.txt"}}) {
    const std::string ours = slurm("scontrol show job " + job).output;
    const std::string theirs = golden(file);
    EXPECT_EQ(keys_of(ours), keys_of(theirs)) << file << "\nours:\n" << ours;
    for (const char* key : {"NumNodes", "NumCPUs", "NumTasks", "CPUs/Task", "TRES", "MinCPUsNode",
                            "MinMemoryNode", "MinMemoryCPU"})
      EXPECT_EQ(value_of(ours, key), value_of(theirs, key)) << file << ": " << key;
  }
  // sacct: what each asked and holds, in the same TRES words ordered by name, as sacct prints
  // them (recorded from Slurm 22.05 with slurmdbd: "billing=2,cpu=2,gres/gpu=2,mem=1G,node=1").
  EXPECT_EQ(value_of(golden("scontrol-job2-tres.txt"), "TRES"), "cpu=2,mem=400M,node=1,billing=2");
  EXPECT_EQ(slurm("sacct -X -n -P -o ReqCPUS,ReqTRES,AllocTRES -j " + two).output,
            "2|billing=2,cpu=2,mem=400M,node=1|billing=2,cpu=2,mem=400M,node=1\n");
}

}  // namespace
}  // namespace trellis
