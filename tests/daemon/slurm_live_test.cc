// Slurm's job model on a live cluster: batch scripts with #SBATCH directives under the command
// line, a script edited after submission running as submitted, an array of 20 with %3 never
// running more than 3 tasks at once (from the tasks' own timestamps), afterok / afternotok /
// never-satisfiable dependencies, all of it across a controller killed with SIGKILL and started
// again.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../build_paths.h"
#include "../cli_run.h"
#include "daemon/process.h"
#include "daemon_test_support.h"
#include "live_cluster.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::ChildProcess;
using testing::eventually;
using testing::LiveCluster;

namespace fs = std::filesystem;

// `sbatch ARGS` (or another Slurm command) against the cluster, run in `dir`.
CommandRun slurm(const LiveCluster& cluster, const std::string& dir, const std::string& command) {
  std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
  return test::run_command("cd " + dir + " && TRELLIS_CONF=" + (cluster.dir() / "trellis.toml") +
                           " PATH=" + bin + ":$PATH " + command);
}

int64_t job_id_of(const CommandRun& r) {
  try {
    return std::stoll(r.output);
  } catch (...) {
    return -1;
  }
}

// The job's pending reason, or what `show job` said when it gave no job.
std::string reason_of(const LiveCluster& cluster, int64_t id) {
  nlohmann::json job = cluster.job(id);
  if (job.is_object()) return job["reason"].get<std::string>();
  return "<show job " + std::to_string(id) + ": " +
         cluster.trellis("show job " + std::to_string(id) + " --json").output + ">";
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(SlurmLiveTest, DirectivesApplyAndTheCommandLineOverridesThem) {
  // Two GPU nodes and six CPU nodes ([[nodetype]]), shown by sinfo as Slurm's %c %m %G %C %z.
  LiveCluster cluster(
      "--machine torus:2x2x2 --node-type 'gpu:n[0-1]:cores=4,mem=8G,gpus=a100:2,features=ib' "
      "--node-type cpu::cores=2,mem=4G");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string dir = cluster.dir().path();
  CommandRun nodes = slurm(cluster, dir, "sinfo -h -o '%c|%m|%G|%f|%C|%z|%N' | sort");
  EXPECT_EQ(nodes.output,
            "2|4096|(null)|(null)|0/12/0/12|1:2:1|n[2-7]\n"
            "4|8192|gpu:a100:2|ib|0/8/0/8|1:4:1|n[0-1]\n")
      << nodes.output;
  CommandRun node = slurm(cluster, dir, "scontrol show node n1");
  for (const char* line :
       {"NodeName=n1 Arch=x86_64 CoresPerSocket=4 \n", "   CPUAlloc=0 CPUEfctv=4 CPUTot=4\n",
        "   AvailableFeatures=ib\n", "   Gres=gpu:a100:2\n",
        "   RealMemory=8192 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1\n",
        "   CfgTRES=cpu=4,mem=8G,billing=4,gres/gpu=2\n", "   AllocTRES=\n"})
    EXPECT_NE(node.output.find(line), std::string::npos) << line << " in:\n" << node.output;
  write_file(cluster.dir() / "job.sh",
             "#!/bin/sh\n"
             "#SBATCH -N 3 -J fromscript\n"
             "#SBATCH --time=7 -o from-%j.out\n"
             "#TRELLIS --env FROM=directive\n"
             "echo \"$SLURM_JOB_NUM_NODES $FROM $SLURM_JOB_NAME $1\"\n");
  // The command line's -J and -N win; the rest comes from the directives.
  CommandRun r =
      cluster.trellis("submit --parsable -J cli -N 2 -D " + dir + " " + dir + "/job.sh arg1");
  int64_t id = job_id_of(r);
  ASSERT_GT(id, 0) << r.output;
  ASSERT_TRUE(eventually([&] { return cluster.state(id) == "CD"; })) << cluster.job(id).dump();
  nlohmann::json job = cluster.job(id);
  EXPECT_EQ(job["name"], "cli");
  EXPECT_EQ(job["nodes"], 2);
  EXPECT_EQ(job["time_limit"], 420);
  // The script ran once (on the first node), with the job's environment.
  std::string out = test::read_text(cluster.dir() / ("from-" + std::to_string(id) + ".out"));
  EXPECT_EQ(out, "2 directive cli arg1\n");
  // sbatch reads the same directives; its -t overrides them.
  CommandRun s = slurm(cluster, dir, "sbatch -t 3 job.sh");
  ASSERT_EQ(s.status, 0) << s.output;
  ASSERT_EQ(s.output.rfind("Submitted batch job ", 0), 0u) << s.output;
  int64_t second = std::stoll(s.output.substr(20));
  ASSERT_TRUE(eventually([&] { return cluster.state(second) == "CD"; }));
  job = cluster.job(second);
  EXPECT_EQ(job["nodes"], 3);
  EXPECT_EQ(job["name"], "fromscript");
  EXPECT_EQ(job["time_limit"], 180);
  // Tasks from directives: -n and --ntasks-per-node lay out the job, and the script's srun runs
  // that many tasks (a step of the job, on its nodes).
  write_file(cluster.dir() / "tasks.sh",
             "#!/bin/sh\n"
             "#SBATCH -N 2\n"
             "#SBATCH -n 4 -o tasks-%j.out\n"
             "echo \"batch $SLURM_NTASKS\"\n"
             "srun sh -c 'echo \"task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME\"'\n");
  CommandRun t = slurm(cluster, dir, "sbatch --parsable tasks.sh");
  int64_t tasks = job_id_of(t);
  ASSERT_GT(tasks, 0) << t.output;
  ASSERT_TRUE(eventually([&] { return cluster.state(tasks) == "CD"; }))
      << cluster.job(tasks).dump();
  job = cluster.job(tasks);
  EXPECT_EQ(job["nodes"], 2);
  EXPECT_EQ(job["ntasks"], 4);
  std::vector<std::string> lines =
      testing::read_lines(cluster.dir() / ("tasks-" + std::to_string(tasks) + ".out"));
  std::sort(lines.begin(), lines.end());
  ASSERT_EQ(lines.size(), 5u) << test::read_text(cluster.dir() /
                                                 ("tasks-" + std::to_string(tasks) + ".out"));
  EXPECT_EQ(lines[0], "batch 4");
  // Ranks 0..3 once each, two per node (block).
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(lines[1 + rank].rfind("task " + std::to_string(rank) + " of 4 on n", 0), 0u)
        << lines[1 + rank];
  EXPECT_EQ(lines[1].substr(lines[1].rfind(' ')), lines[2].substr(lines[2].rfind(' ')));
  EXPECT_EQ(lines[3].substr(lines[3].rfind(' ')), lines[4].substr(lines[4].rfind(' ')));
  EXPECT_NE(lines[1].substr(lines[1].rfind(' ')), lines[3].substr(lines[3].rfind(' ')));
  // An option Trellis does not support is an error that names it.
  CommandRun bad = slurm(cluster, dir, "sbatch --hold job.sh");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("'--hold' is not supported"), std::string::npos) << bad.output;
  write_file(cluster.dir() / "bad.sh", "#!/bin/sh\n#SBATCH --begin=now\ntrue\n");
  CommandRun bad_directive = cluster.trellis("submit " + dir + "/bad.sh");
  EXPECT_EQ(bad_directive.status, 2);
  EXPECT_NE(bad_directive.output.find("bad.sh: directive option '--begin'"), std::string::npos)
      << bad_directive.output;

  // Cores, memory and GPUs: the directives' under the command line's (a later --mem and --gres
  // replace the script's), kept with the job and shown as squeue's %C %c %m %b; what no node of
  // the partition can hold is refused with the reason.
  write_file(cluster.dir() / "resources.sh",
             "#!/bin/sh\n#SBATCH -c 2 --mem=1G\n#SBATCH --gres=license:1 -n 2\nsleep 60\n");
  CommandRun no_licence = slurm(cluster, dir, "sbatch resources.sh");
  EXPECT_NE(no_licence.status, 0) << no_licence.output;
  EXPECT_NE(no_licence.output.find("no node of partition main can hold the job: 1 license per "
                                   "node asked, its nodes have 0"),
            std::string::npos)
      << no_licence.output;
  CommandRun asked = slurm(cluster, dir, "sbatch --parsable --mem=512M --gres=gpu:1 resources.sh");
  int64_t resources = job_id_of(asked);
  ASSERT_GT(resources, 0) << asked.output;
  CommandRun shown =
      slurm(cluster, dir, "squeue -h -j " + std::to_string(resources) + " -o '%C|%c|%m|%b'");
  EXPECT_EQ(shown.output, "4|2|512M|gres:gpu:1\n") << shown.output;
  // --gres=none drops the script's, then --gpus-per-node asks for two A100s on each node.
  CommandRun gpus = slurm(cluster, dir,
                          "sbatch --parsable --gres=none --gpus-per-node=a100:2 "
                          "--mem-per-cpu=2G -c 1 resources.sh");
  int64_t with_gpus = job_id_of(gpus);
  ASSERT_GT(with_gpus, 0) << gpus.output;
  shown = slurm(cluster, dir, "squeue -h -j " + std::to_string(with_gpus) + " -o '%m|%b'");
  EXPECT_EQ(shown.output, "2G|gres:gpu:a100:2\n") << shown.output;
  EXPECT_EQ(
      slurm(cluster, dir, "scancel " + std::to_string(resources) + " " + std::to_string(with_gpus))
          .status,
      0);
  for (const auto& [options, says] : std::vector<std::pair<std::string, std::string>>{
           {"--gpus-per-node=3", "3 GPUs per node asked, its nodes have 2 (node type gpu)"},
           {"-N 3 -C ib", "only 2 nodes of partition main can hold"},
           {"--mem=9G", "9G of memory per node asked, its nodes have 8G (node type gpu)"}}) {
    CommandRun refused = slurm(cluster, dir, "sbatch " + options + " --wrap true");
    EXPECT_NE(refused.status, 0) << options;
    EXPECT_NE(refused.output.find(says), std::string::npos) << options << ": " << refused.output;
  }
  for (const auto& [options, says] : std::vector<std::pair<std::string, std::string>>{
           {"--mem=2GB", "--mem: '2GB' is not a memory size"},
           {"--gres=gpu:a:b:1", "--gres: 'gpu:a:b:1'"},
           {"-c 0", "--cpus-per-task: '0'"},
           {"--exclusive=everyone", "--exclusive: 'everyone'"},
           {"--gpus=a100:1 --gpus-per-node=v100:1", "differs from 'a100'"}}) {
    CommandRun refused = slurm(cluster, dir, "sbatch " + options + " --wrap true");
    EXPECT_NE(refused.status, 0) << options;
    EXPECT_NE(refused.output.find(says), std::string::npos) << options << ": " << refused.output;
  }
}

// srun outside a job runs its command and its output lands where srun's own would, in order with
// what its caller writes next: into a file the caller truncated (the tasks must not write past
// the caller's offset), a file opened for appending, and a pipe; with the command after "--".
TEST(SlurmLiveTest, SrunsOutputLandsWhereItsCallersWould) {
  LiveCluster cluster("--machine torus:2x2x2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string dir = cluster.dir().path();
  write_file(cluster.dir() / "truncated.sh",
             "{ srun -N 2 -l -- sh -c 'echo rank$SLURM_PROCID'; echo after; } > truncated.txt\n");
  CommandRun truncated = slurm(cluster, dir, "sh truncated.sh");
  ASSERT_EQ(truncated.status, 0) << truncated.output;
  std::vector<std::string> lines = testing::read_lines(cluster.dir() / "truncated.txt");
  ASSERT_EQ(lines.size(), 3u) << testing::read_file(cluster.dir() / "truncated.txt");
  std::sort(lines.begin(), lines.begin() + 2);
  EXPECT_EQ(lines, (std::vector<std::string>{"0: rank0", "1: rank1", "after"}));

  write_file(cluster.dir() / "appended.sh",
             "echo before > appended.txt; srun -n 1 echo task >> appended.txt; "
             "echo after >> appended.txt\n");
  CommandRun appended = slurm(cluster, dir, "sh appended.sh");
  ASSERT_EQ(appended.status, 0) << appended.output;
  EXPECT_EQ(testing::read_file(cluster.dir() / "appended.txt"), "before\ntask\nafter\n");

  CommandRun piped = slurm(cluster, dir, "srun -N 2 -- sh -c 'echo x$SLURM_NNODES' | sort");
  EXPECT_EQ(piped.status, 0) << piped.output;
  EXPECT_EQ(piped.output, "x2\nx2\n");
}

// sacct shows what each step used, as the kernel counted it: a step whose tasks hold 96 MiB each
// has a MaxRSS of at least that, and the job's TotalCPU is the sum of its steps' (the
// script's, and the two-node step's over both nodes).
TEST(SlurmLiveTest, SacctShowsWhatEachStepUsed) {
  LiveCluster cluster("--machine flat:2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string dir = cluster.dir().path();
  write_file(cluster.dir() / "used.sh",
             "#!/bin/sh\n"
             "#SBATCH -N 2 -o used.out\n"
             "srun -N 2 python3 -c 'x = bytearray(96 << 20); print(len(x))'\n"
             "srun -N 2 python3 -c 'sum(range(3000000))'\n");
  CommandRun submitted = slurm(cluster, dir, "sbatch --parsable used.sh");
  const int64_t job = job_id_of(submitted);
  ASSERT_GT(job, 0) << submitted.output;
  ASSERT_TRUE(eventually([&] { return cluster.state(job) == "CD"; }, std::chrono::seconds(60)))
      << cluster.job(job).dump();
  const std::string id = std::to_string(job);
  std::vector<std::string> rows;
  auto joined = [&] {
    std::string text;
    for (const std::string& row : rows) text += row + "\n";
    return text;
  };
  // The job's end is recorded a moment before its steps' usage can be read back: both come
  // from the same reports, so wait for the last step's.
  ASSERT_TRUE(eventually([&] {
    CommandRun listed =
        slurm(cluster, dir,
              "sacct -n -P -o JobID,JobName,MaxRSS,MaxRSSNode,TotalCPU,UserCPU,State -j " + id);
    rows.clear();
    std::istringstream lines(listed.output);
    for (std::string line; std::getline(lines, line);) rows.push_back(line);
    return rows.size() == 4 && rows[3].find("|python3|||") == std::string::npos;
  })) << joined();
  auto fields = [](const std::string& row) {
    std::vector<std::string> out;
    std::istringstream in(row);
    for (std::string f; std::getline(in, f, '|');) out.push_back(f);
    return out;
  };
  // "00:01.234" or "01:02:03" as microseconds; -1 when neither.
  auto micros = [](const std::string& text) -> int64_t {
    int a = 0, b = 0, c = 0;
    if (std::sscanf(text.c_str(), "%d:%d:%d", &a, &b, &c) == 3 &&
        text.find('.') == std::string::npos)
      return ((a * 60LL + b) * 60 + c) * 1000000;
    if (std::sscanf(text.c_str(), "%d:%d.%d", &a, &b, &c) == 3)
      return (a * 60LL + b) * 1000000 + c * 1000LL;
    return -1;
  };
  const std::vector<std::string> whole = fields(rows[0]), batch = fields(rows[1]),
                                 first = fields(rows[2]), second = fields(rows[3]);
  ASSERT_EQ(whole.size(), 7u) << rows[0];
  EXPECT_EQ(whole[0], id);
  EXPECT_EQ(whole[2], "");  // a batch job's allocation has no MaxRSS of its own, as in Slurm
  EXPECT_EQ(batch[0], id + ".batch");
  EXPECT_EQ(first[0], id + ".1");
  EXPECT_EQ(first[1], "python3");
  EXPECT_EQ(second[0], id + ".2");
  EXPECT_EQ(first[6], "COMPLETED");
  // The 96 MiB step: its peak in KiB, as Slurm prints it ("218348K"), and where it was. (Both
  // steps span the job's two nodes: srun runs a one-task step on the batch node inside the
  // script, cli/slurm/srun.cc, where its usage is the batch step's.)
  ASSERT_FALSE(first[2].empty()) << rows[2];
  EXPECT_EQ(first[2].back(), 'K') << rows[2];
  EXPECT_GE(std::stoll(first[2]), 96 << 10) << rows[2];
  EXPECT_LT(std::stoll(first[2]), 400 << 10) << rows[2];
  EXPECT_TRUE(first[3] == "n0" || first[3] == "n1") << rows[2];
  // The counting step ran on both nodes and burned CPU on each; the job's total is the sum.
  const int64_t total = micros(whole[4]), script = micros(batch[4]), one = micros(first[4]),
                two = micros(second[4]);
  ASSERT_GE(total, 0) << rows[0];
  ASSERT_GE(script, 0) << rows[1];
  ASSERT_GE(one, 0) << rows[2];
  ASSERT_GT(two, 100000) << rows[3];  // two pythons summing 3 million numbers: over 0.1 s
  EXPECT_LE(micros(second[5]), two) << rows[3];  // UserCPU is part of TotalCPU
  // Each shown to the millisecond, so the sum may be off by a millisecond per row.
  EXPECT_NEAR(static_cast<double>(total), static_cast<double>(script + one + two), 3000.0)
      << joined();
}

// Gated jobs, scripts, arrays and dependencies, with the controller killed and started again
// while dependents wait and array tasks run.
TEST(SlurmLiveTest, ScriptsArraysAndDependenciesHoldAcrossAControllerKill) {
  LiveCluster cluster("--machine torus:2x2x2");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string dir = cluster.dir().path();
  auto sbatch = [&](const std::string& args) {
    CommandRun r = slurm(cluster, dir, "sbatch --parsable -o /dev/null " + args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.output;
    return job_id_of(r);
  };
  auto wrap = [](const std::string& command) { return "--wrap '" + command + "'"; };
  // Two jobs that wait for a file each: one succeeds, one fails.
  int64_t ok = sbatch(wrap("while [ ! -e " + dir + "/open-ok ]; do sleep 0.05; done"));
  int64_t bad = sbatch(wrap("while [ ! -e " + dir + "/open-bad ]; do sleep 0.05; done; exit 3"));
  auto stamp = [&](const std::string& name) { return wrap("date +%s.%N > " + dir + "/" + name); };
  int64_t after_ok = sbatch("-d afterok:" + std::to_string(ok) + " " + stamp("after-ok"));
  int64_t notok_of_ok = sbatch("-d afternotok:" + std::to_string(ok) + " " + stamp("never-ran"));
  int64_t notok_of_bad = sbatch("-d afternotok:" + std::to_string(bad) + " " + stamp("after-bad"));
  int64_t ok_of_bad = sbatch("-d afterok:" + std::to_string(bad) + " " + stamp("never-ran-2"));
  int64_t killed = sbatch("--kill-on-invalid-dep=yes -d afterok:" + std::to_string(bad) + " " +
                          stamp("never-ran-3"));
  // A script edited after submission runs as it was submitted.
  write_file(cluster.dir() / "edited.sh",
             "#!/bin/sh\necho as-submitted > " + dir + "/edited.out\n");
  int64_t edited = sbatch("-d afterany:" + std::to_string(ok) + " edited.sh");
  write_file(cluster.dir() / "edited.sh", "#!/bin/sh\necho edited > " + dir + "/edited.out\n");
  // An array of 20, at most 3 at once; each task stamps its start and end.
  const std::string task = "date +%s.%N > " + dir +
                           "/start-$SLURM_ARRAY_TASK_ID; sleep 0.4; date +%s.%N > " + dir +
                           "/end-$TRELLIS_ARRAY_TASK_ID";
  int64_t array = sbatch("--array 0-19%3 " + wrap(task));
  for (int64_t id :
       {ok, bad, after_ok, notok_of_ok, notok_of_bad, ok_of_bad, killed, edited, array})
    ASSERT_GT(id, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(ok) == "R" && cluster.state(bad) == "R"; }));
  ASSERT_TRUE(eventually([&] { return reason_of(cluster, after_ok) == "Dependency"; }))
      << cluster.job(after_ok).dump();
  CommandRun queue = slurm(cluster, dir, "squeue -h -o '%i %t %r'");
  EXPECT_NE(queue.output.find(std::to_string(after_ok) + " PD Dependency"), std::string::npos)
      << queue.output;

  // The controller dies with array tasks running and dependents waiting, and comes back.
  ASSERT_TRUE(eventually([&] { return fs::exists(cluster.dir() / "start-1"); }));
  ::kill(cluster.pid_of("trellisd"), SIGKILL);
  ASSERT_TRUE(eventually([&] { return !process_running(cluster.pid_of("trellisd")); }));
  auto restarted = std::make_unique<ChildProcess>(
      std::vector<std::string>{TRELLISD_BINARY, "--conf", cluster.dir() / "trellis.toml"},
      cluster.dir() / "trellisd.log");
  std::ofstream(cluster.dir() / "trellisd.pid") << restarted->pid() << "\n";
  // Still held after the restart, until the jobs they wait for end.
  ASSERT_TRUE(eventually([&] { return reason_of(cluster, after_ok) == "Dependency"; }));
  EXPECT_EQ(cluster.state(edited), "PD");
  write_file(cluster.dir() / "open-bad", "");
  ASSERT_TRUE(eventually([&] { return cluster.state(bad) == "F"; }));
  ASSERT_TRUE(eventually([&] { return cluster.state(notok_of_bad) == "CD"; }));
  ASSERT_TRUE(eventually([&] { return cluster.state(killed) == "CA"; }));
  ASSERT_TRUE(
      eventually([&] { return reason_of(cluster, ok_of_bad) == "DependencyNeverSatisfied"; }));
  EXPECT_EQ(cluster.state(after_ok), "PD") << "afterok must wait for success";
  write_file(cluster.dir() / "open-ok", "");
  ASSERT_TRUE(eventually([&] { return cluster.state(after_ok) == "CD"; }));
  ASSERT_TRUE(eventually([&] { return cluster.state(edited) == "CD"; }));
  ASSERT_TRUE(
      eventually([&] { return reason_of(cluster, notok_of_ok) == "DependencyNeverSatisfied"; }));
  // afterok started only after its job ended; afternotok only after failure.
  double ok_end = cluster.job(ok)["end_time"];
  double after_ok_start = cluster.job(after_ok)["start_time"];
  EXPECT_GE(after_ok_start, ok_end);
  EXPECT_GE(double(cluster.job(notok_of_bad)["start_time"]), double(cluster.job(bad)["end_time"]));
  for (const char* never : {"never-ran", "never-ran-2", "never-ran-3"})
    EXPECT_FALSE(fs::exists(cluster.dir() / never)) << never;
  EXPECT_EQ(reason_of(cluster, killed), "DependencyNeverSatisfied");
  EXPECT_EQ(test::read_text(cluster.dir() / "edited.out"), "as-submitted\n");

  // Every task ran once; never more than 3 at once, by the tasks' own clocks.
  // Every task has written its end (a file appears, empty, before `date` writes into it, and the
  // last tasks run side by side, so end-19 is not the last one written).
  ASSERT_TRUE(eventually([&] {
    for (int t = 0; t < 20; ++t)
      if (test::read_text(cluster.dir() / ("end-" + std::to_string(t))).empty()) return false;
    return true;
  }));
  std::vector<std::pair<double, int>> edges;
  for (int t = 0; t < 20; ++t) {
    std::string start = test::read_text(cluster.dir() / ("start-" + std::to_string(t)));
    std::string end = test::read_text(cluster.dir() / ("end-" + std::to_string(t)));
    ASSERT_FALSE(start.empty() || end.empty()) << "task " << t;
    edges.push_back({std::stod(start), +1});
    edges.push_back({std::stod(end), -1});
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at the same instant
  int running = 0, most = 0;
  for (const auto& [at, step] : edges) most = std::max(most, running += step);
  EXPECT_LE(most, 3);
  EXPECT_GE(most, 2) << "the array ran its tasks side by side";
  ASSERT_TRUE(eventually([&] {
    CommandRun states = slurm(cluster, dir, "sacct -X -n -P -o State -j " + std::to_string(array));
    return std::count(states.output.begin(), states.output.end(), '\n') == 20 &&
           states.output.find("COMPLETED\n") != std::string::npos &&
           states.output.find("RUNNING") == std::string::npos &&
           states.output.find("PENDING") == std::string::npos;
  }));
}

}  // namespace
}  // namespace trellis
