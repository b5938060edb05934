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

// A Slurm command (sbatch, squeue, ...) against `cluster`, in its directory.
CommandRun slurm_command(const LiveCluster& cluster, const std::string& command) {
  std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
  return test::run_command("cd " + cluster.dir().path() + " && TRELLIS_CONF=" +
                           (cluster.dir() / "trellis.toml") + " PATH=" + bin + ":$PATH " + command);
}

class SlurmGoldenTest : public ::testing::Test {
 protected:
  CommandRun slurm(const std::string& command) { return slurm_command(cluster_, command); }
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
  auto slurm = [&](const std::string& command) { return slurm_command(cluster, command); };
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

// GPUs as Slurm 22.05 shows them, against tests/golden/slurm/recorded-gpu-usage/D_* (its README
// says how they were recorded): one node of 4 cores, 8000 MB and 4 GPUs of type tesla, with
// slurmdbd and AccountingStorageTRES=gres/gpu, so that gres/gpu is in every TRES, as Trellis
// always has it. Four jobs ask for GPUs in each of Slurm's ways (--gres=gpu:2 -c 2, --gpus=1,
// --gpus-per-node=1, --gpus-per-task=1 -n 2, each --mem=1G); the fourth waits for GPUs until the
// first is cancelled. Trellis runs the same on one emulated node of that type (the host has
// neither the cores nor the GPUs), shared: squeue %b and -O's TRES fields, sinfo %G, scontrol
// show node's Gres, CfgTRES and AllocTRES, scontrol show job's TRES and TresPer*, and sacct's
// AllocTRES and ReqTRES of jobs and batch steps.
TEST(SlurmGpuGoldenTest, GpuJobsPrintAsSlurmDoes) {
  LiveCluster cluster(
      "--machine flat:1 --node-type 'gpu::cores=4,sockets=4,mem=8000M,gpus=tesla:4' "
      "--shared-nodes --emulate");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  auto slurm = [&](const std::string& command) { return slurm_command(cluster, command); };
  auto recorded = [](const std::string& name) { return golden("recorded-gpu-usage/" + name); };
  std::map<std::string, std::string> ids;  // recorded id -> ours
  // A recording as Trellis would print it: Slurm's n0000 is our n0, its partition batch our
  // main (right-aligned in squeue's 9 columns), and each line's leading job id ours, padded so
  // that the next column stays where it was.
  auto ours_of = [&](const std::string& text) {
    std::string out;
    for (std::string line : lines_of(text)) {
      line = std::regex_replace(line, std::regex("n0000"), "n0");
      line = std::regex_replace(line, std::regex("    batch "), "     main ");
      const size_t start = line.find_first_not_of(' ');
      const size_t end = line.find_first_of(" |.", start);
      auto id = ids.find(line.substr(start, end - start));
      if (start != std::string::npos && id != ids.end()) {
        const std::string mapped = id->second;
        const std::string recorded_id = line.substr(start, end - start);
        std::string rest = end == std::string::npos ? "" : line.substr(end);
        const long grow = static_cast<long>(mapped.size()) - static_cast<long>(recorded_id.size());
        long lead = static_cast<long>(start);
        if (lead > 0) {
          lead = std::max(0L, lead - grow);  // right-aligned: the padding before it gives way
        } else if (!rest.empty() && rest[0] == ' ') {
          const long spaces = static_cast<long>(rest.find_first_not_of(' '));
          const long keep = std::max(1L, spaces - grow);
          rest = std::string(keep, ' ') + rest.substr(spaces);
        }
        line = std::string(lead, ' ') + mapped + rest;
      }
      out += line + "\n";
    }
    return out;
  };
  auto submit = [&](const std::string& recorded_id, const std::string& args) {
    CommandRun r = slurm("sbatch --parsable -o /dev/null " + args + " --wrap 'sleep 300'");
    EXPECT_EQ(r.status, 0) << r.output;
    ids[recorded_id] = r.output.substr(0, r.output.find('\n'));
    return ids[recorded_id];
  };
  auto node_values = [](const std::string& text) {
    std::string out;
    for (const char* key :
         {"CPUAlloc", "CPUTot", "Gres", "RealMemory", "AllocMem", "State", "CfgTRES", "AllocTRES"})
      out += std::string(key) + "=" + value_of(text, key) + " ";
    return out;
  };
  auto job_values = [](const std::string& text) {
    std::string out;
    for (const char* key :
         {"JobState", "Reason", "NumNodes", "NumCPUs", "NumTasks", "CPUs/Task", "TRES",
          "MinCPUsNode", "MinMemoryNode", "TresPerJob", "TresPerNode", "TresPerTask"})
      out += std::string(key) + "=" + value_of(text, key) + " ";
    return out;
  };

  // The idle node.
  EXPECT_EQ(slurm("sinfo -o '%N %G %c %m %C'").output,
            ours_of(recorded("D_02_sinfo_N_G_c_m_C_idle.txt")));
  EXPECT_EQ(slurm("sinfo -N -o '%N %G'").output, ours_of(recorded("D_03_sinfo_-N_N_G_idle.txt")));
  EXPECT_EQ(slurm("sinfo -o %G").output, recorded("D_04_sinfo_G_idle.txt"));
  EXPECT_EQ(node_values(slurm("scontrol show node n0").output),
            node_values(recorded("D_01_show_node_idle.txt")));

  const std::string first = submit("5", "--gres=gpu:2 -c 2 --mem=1G");
  ASSERT_TRUE(eventually([&] { return cluster.state(std::stoll(first)) == "R"; }));
  EXPECT_EQ(node_values(slurm("scontrol show node n0").output),
            node_values(recorded("D_05_show_node_job1_gres2.txt")));
  submit("6", "--gpus=1 --mem=1G");
  submit("7", "--gpus-per-node=1 --mem=1G");
  const std::string fourth = submit("8", "--gpus-per-task=1 -n 2 --mem=1G");
  ASSERT_TRUE(eventually([&] {
    return slurm("squeue -h -t R -o %i").output ==
               ids["5"] + "\n" + ids["6"] + "\n" + ids["7"] + "\n" &&
           slurm("squeue -h -o '%i %R' -j " + fourth).output == fourth + " (Resources)\n";
  })) << slurm("squeue").output;

  // Three jobs run, the fourth waits for GPUs.
  for (const auto& [id, file] : std::vector<std::pair<std::string, std::string>>{
           {"5", "D_06_show_job1_gres_gpu2_c2_mem1G.txt"},
           {"6", "D_07_show_job2_gpus1.txt"},
           {"7", "D_08_show_job3_gpus_per_node1.txt"},
           {"8", "D_09_show_job4_gpus_per_task1_n2_PENDING.txt"}}) {
    const std::string ours = slurm("scontrol show job " + ids[id]).output;
    EXPECT_EQ(keys_of(ours), keys_of(recorded(file))) << file << "\nours:\n" << ours;
    EXPECT_EQ(job_values(ours), job_values(recorded(file))) << file;
  }
  EXPECT_EQ(node_values(slurm("scontrol show node n0").output),
            node_values(recorded("D_10_show_node_jobs123_full.txt")));
  EXPECT_EQ(slurm("squeue -o '%i %b %C %m'").output, ours_of(recorded("D_11_squeue_i_b_C_m.txt")));
  EXPECT_EQ(slurm("squeue -o '%.18i %.9P %b'").output,
            ours_of(recorded("D_12_squeue_18i_9P_b.txt")));
  EXPECT_EQ(slurm("squeue -O JobID,tres-per-node,tres-alloc").output,
            ours_of(recorded("D_13_squeue_O_JobID_tres-per-node_tres-alloc.txt")));
  EXPECT_EQ(slurm("squeue -O JobID:8,State:10,tres-per-node:20,tres-per-job:20,tres-per-task:20,"
                  "tres-alloc:60")
                .output,
            ours_of(recorded("D_13b_squeue_O_all_tres.txt")));
  EXPECT_EQ(slurm("sinfo -o '%N %G %c %m %C'").output,
            ours_of(recorded("D_15_sinfo_N_G_c_m_C_busy.txt")));
  EXPECT_EQ(slurm("sinfo -N -o '%N %G'").output, ours_of(recorded("D_16_sinfo_-N_N_G_busy.txt")));
  EXPECT_EQ(slurm("sinfo -o %G").output, recorded("D_17_sinfo_G_busy.txt"));

  // The first cancelled: the fourth gets its GPUs, one to each of its two tasks.
  ASSERT_EQ(slurm("scancel " + first).status, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(std::stoll(fourth)) == "R"; }));
  {
    const std::string ours = slurm("scontrol show job " + fourth).output;
    const std::string theirs = recorded("D_18_show_job4_gpus_per_task1_n2_RUNNING.txt");
    EXPECT_EQ(keys_of(ours), keys_of(theirs)) << ours;
    EXPECT_EQ(job_values(ours), job_values(theirs));
    EXPECT_EQ(value_of(ours, "NodeList"), "n0");
  }
  EXPECT_EQ(node_values(slurm("scontrol show node n0").output),
            node_values(recorded("D_19_show_node_jobs234.txt")));
  EXPECT_EQ(slurm("squeue -o '%i %b %C %m'").output,
            ours_of(recorded("D_20_squeue_i_b_C_m_jobs234.txt")));
  EXPECT_EQ(slurm("squeue -o '%.18i %.9P %b'").output,
            ours_of(recorded("D_21_squeue_18i_9P_b_jobs234.txt")));
  EXPECT_EQ(slurm("squeue -O JobID,tres-per-node,tres-alloc").output,
            ours_of(recorded("D_22_squeue_O_JobID_tres-per-node_tres-alloc_jobs234.txt")));
  // Field names squeue does not know: each reported, the others printed, exit 0.
  {
    const std::string fields =
        "JobID:8,TresPerNode:30,TresPerJob:20,TresPerTask:20,TresPerSocket:15,tres-alloc:60";
    CommandRun out = slurm("sh -c 'squeue -O " + fields + " 2>/dev/null'");
    EXPECT_EQ(out.status, 0);
    EXPECT_EQ(out.output, ours_of(recorded("D_23_squeue_O_more.txt")));
    EXPECT_EQ(slurm("sh -c 'squeue -O " + fields + " 2>&1 >/dev/null'").output,
              recorded("D_23_squeue_O_more.stderr"));
  }
  EXPECT_EQ(slurm("squeue -O JobID:8,tres-per-node:20,tres-per-job:20,tres-per-task:20,"
                  "tres-per-socket:20,tres-alloc:60")
                .output,
            ours_of(recorded("D_23b_squeue_O_hyphen_names.txt")));
  EXPECT_EQ(slurm("squeue -O JobID,tres-per-node:30,tres-alloc:60").output,
            ours_of(recorded("D_23c_squeue_O_wide.txt")));
  EXPECT_EQ(slurm("squeue -t all -o '%i %T %b'").output,
            ours_of(recorded("D_25_squeue_t_all_i_T_b.txt")));
  // sacct: each job's and its batch step's TRES. Slurm's State of the cancelled one says who
  // ("CANCELLED by 0"); Trellis does not record who cancelled a job, so the State column is
  // compared without it.
  std::string theirs = ours_of(recorded("D_26_sacct_AllocTRES_ReqTRES_jobs5-8_-P.txt"));
  theirs = std::regex_replace(theirs, std::regex("CANCELLED by [0-9]+"), "CANCELLED");
  std::string list = ids["5"] + "," + ids["6"] + "," + ids["7"] + "," + ids["8"];
  std::string ours =
      slurm("sacct -j " + list + " --format=JobID,JobName,AllocTRES%60,ReqTRES%60,State -P").output;
  // The recording was taken after every job was cancelled; here three still run.
  ours = std::regex_replace(ours, std::regex("\\|RUNNING\n"), "|CANCELLED\n");
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace trellis
