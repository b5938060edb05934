// trellis bench mpi: launching real MPI programs through Trellis against the MPI libraries' own
// launchers on one host, measured in the same run (issue 31, item 8). A local cluster of one
// emulated node per agent (`trellis cluster up --machine flat:64 --agents 64`) runs the test
// program (tests/mpi/allreduce.c, built here with mpicc.mpich and mpicc.openmpi) as jobs of 2, 4,
// ... 64 ranks, one per node, and 64 ranks as 8 nodes x 8. For each it reports
//   init  from the submission to the last rank past MPI_Init (the ranks write the time),
//   end   from the submission to the job's end (its end time in the store),
// beside `mpiexec.mpich -n N` and `mpirun.openmpi -n N` on this host without a resource manager
// (from the launcher's start to the last rank past MPI_Init, and to the launcher's exit), the
// median of --repeat runs each, and two ratios: against the library's own launcher, and against
// `mpiexec.mpich -n N`, the reference of issue 31's goal (1.5x at every N), which is measured in
// the MPICH row of the same N and so applies to both libraries. Also the PMI exchange's tree: the
// agents of the step, the tree's height, and the barriers the root completed (from its log): a
// barrier costs 2 x height round trips between agents, which grows with log(agents). Open MPI runs
// with TCP (pml ob1, btl self,tcp) under both launchers: its shared-memory transport cannot be
// shared between emulated nodes of one host.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "daemon/exchange_tree.h"
#include "daemon/job_spec.h"

extern char** environ;
extern "C" const char trellis_allreduce_c_begin[];
extern "C" const char trellis_allreduce_c_end[];

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;

struct BenchMpiArgs {
  std::vector<int> ranks = {2, 4, 8, 16, 32, 64};
  int repeat = 3;
  std::string dir;
  bool keep = false;
};

struct Flavour {
  std::string name, compiler, mpi, launcher;
  std::vector<std::string> launcher_args;  // before -n N
  std::vector<std::string> env;            // for our jobs and the launcher alike
};

struct Sample {
  double init = 0, end = 0;
  std::string error;  // "" when the run wired up all its ranks
};

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int failed_with(const std::string& message) {
  std::cerr << "trellis bench mpi: " << message << "\n";
  return kExitFailure;
}

std::string run_capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return "cannot run " + command;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  int status = ::pclose(pipe);
  if (status != 0) out = "exit " + std::to_string(status) + ": " + out;
  return status == 0 ? "" : out;
}

// The last rank's MPI_Init time (seconds since the epoch) from the ranks' lines, if all `n`
// ranks wired up (each saw size n and sum n, ranks 0..n-1 once).
std::optional<double> last_init(const std::string& output, int n, std::string& error) {
  static const std::regex line(R"(rank (\d+) of (\d+) sum (\d+) pid \d+ init_us (\d+))");
  std::set<int> ranks;
  long long last = 0;
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
    if (std::stoi((*it)[2]) != n || std::stoi((*it)[3]) != n) {
      error = "a rank was not wired up: " + it->str();
      return std::nullopt;
    }
    ranks.insert(std::stoi((*it)[1]));
    last = std::max(last, std::stoll((*it)[4]));
  }
  if (static_cast<int>(ranks.size()) != n) {
    error = std::to_string(ranks.size()) + " of " + std::to_string(n) + " ranks reported";
    return std::nullopt;
  }
  return static_cast<double>(last) / 1e6;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Sample run_on_trellis(LiveClient& client, const Flavour& f, const std::string& binary,
                      const std::string& dir, int nodes, int ntasks, int64_t& job_id) {
  Sample s;
  std::string out =
      dir + "/" + f.name + "-" + std::to_string(ntasks) + "-" + std::to_string(nodes) + ".out";
  fs::remove(out);
  v1::JobSpec spec;
  spec.set_nodes(nodes);
  spec.set_ntasks(ntasks);
  spec.set_mpi(f.mpi);
  spec.add_argv(binary);
  spec.set_cwd(dir);
  spec.set_output(out);
  for (const std::string& e : f.env) {
    size_t eq = e.find('=');
    (*spec.mutable_env())[e.substr(0, eq)] = e.substr(eq + 1);
  }
  v1::SubmitRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitReply reply;
  double start = wall_now();
  grpc::Status status =
      client.controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.Submit(&context, request, &reply);
      });
  if (!status.ok()) {
    s.error = "submit: " + status.error_message();
    return s;
  }
  job_id = reply.job_id();
  v1::ListJobsRequest query;
  query.add_job_ids(reply.job_id());
  v1::JobInfo job;
  for (auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);;) {
    Result<v1::ListJobsReply> jobs = list_jobs(client, query);
    if (jobs && jobs->jobs_size() == 1 && jobs->jobs(0).end_time() > 0) {
      job = jobs->jobs(0);
      break;
    }
    if (std::chrono::steady_clock::now() > give_up) {
      s.error = "job " + std::to_string(reply.job_id()) + " did not end in 5 minutes";
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (job.state() != v1::COMPLETED) {
    s.error = "job " + std::to_string(job.id()) + " ended " + job.reason();
    return s;
  }
  std::optional<double> init = last_init(read_all(out), ntasks, s.error);
  if (!init) return s;
  s.init = *init - start;
  s.end = job.end_time() - start;
  return s;
}

Sample run_reference(const Flavour& f, const std::string& binary, const std::string& dir, int n) {
  Sample s;
  std::string out = dir + "/" + f.name + "-reference-" + std::to_string(n) + ".out";
  std::vector<std::string> args = {f.launcher};
  args.insert(args.end(), f.launcher_args.begin(), f.launcher_args.end());
  args.insert(args.end(), {"-n", std::to_string(n), binary});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), f.env.begin(), f.env.end());
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  double start = wall_now();
  int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    s.error = "cannot start " + f.launcher;
    return s;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  double ended = wall_now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    s.error = f.launcher + " failed: " + read_all(out);
    return s;
  }
  std::optional<double> init = last_init(read_all(out), n, s.error);
  if (!init) return s;
  s.init = *init - start;
  s.end = ended - start;
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Barriers that the step's root agent completed for `job`, from its log.
int barriers_of(const std::string& log_path, int64_t job) {
  std::ifstream log(log_path);
  std::string needle = "pmi exchange: step " + std::to_string(job) + ".";
  int count = 0;
  for (std::string line; std::getline(log, line);)
    if (line.find(needle) != std::string::npos) ++count;
  return count;
}

int run_bench_mpi(const BenchMpiArgs& args) {
  int most_nodes = 0;
  for (int n : args.ranks) most_nodes = std::max(most_nodes, n);
  std::string dir = args.dir;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "trellis-bench-mpi-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return failed_with("cannot make a directory");
    dir = pattern;
  }
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  std::ofstream(dir + "/allreduce.c")
      << std::string(trellis_allreduce_c_begin, trellis_allreduce_c_end);
  std::vector<Flavour> flavours = {
      {"mpich", "mpicc.mpich", "pmi1", "mpiexec.mpich", {}, {}},
      {"openmpi",
       "mpicc.openmpi",
       "pmix",
       "mpirun.openmpi",
       {"--oversubscribe"},
       {"OMPI_MCA_pml=ob1", "OMPI_MCA_btl=self,tcp", "OMPI_MCA_btl_tcp_if_include=lo",
        "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}}};
  std::map<std::string, std::string> binaries;
  for (const Flavour& f : flavours) {
    std::string binary = dir + "/allreduce_" + f.name;
    if (std::string error =
            run_capture(f.compiler + " -O1 -o " + binary + " " + dir + "/allreduce.c");
        !error.empty())
      return failed_with(f.compiler + ": " + error);
    binaries[f.name] = binary;
  }

  const std::string self = sibling_binary("trellis");
  const std::string cluster = dir + "/cluster";
  std::cout << "bench mpi: a local cluster of " << most_nodes << " nodes, one agent each ("
            << cluster << ")" << std::endl;
  if (std::string error =
          run_capture(self + " cluster up --machine flat:" + std::to_string(most_nodes) +
                      " --agents " + std::to_string(most_nodes) + " --dir " + cluster);
      !error.empty())
    return failed_with("cluster up: " + error);
  // The cluster goes down before its directory is removed (cluster down finds its processes
  // there), on every way out.
  struct Down {
    std::string self, cluster, remove;
    ~Down() {
      (void)run_capture(self + " cluster down --dir " + cluster);
      std::error_code ignored;
      if (!remove.empty()) fs::remove_all(remove, ignored);
    }
  } down{self, cluster, !args.keep && args.dir.empty() ? dir : ""};
  Result<LiveClient> client = connect_to_cluster(cluster + "/trellis.toml");
  if (!client) return failed_with(client.error().message);
  const int fanout = client->config.controller.pmi_fanout;

  struct Row {
    int ranks, nodes;
  };
  std::vector<Row> rows;
  for (int n : args.ranks) rows.push_back({n, n});
  if (most_nodes >= 8 && std::find(args.ranks.begin(), args.ranks.end(), 64) != args.ranks.end())
    rows.push_back({64, 8});
  std::cout << "\n"
            << std::left << std::setw(8) << "ranks" << std::setw(8) << "nodes" << std::setw(9)
            << "library" << std::right << std::setw(10) << "init s" << std::setw(10) << "end s"
            << std::setw(12) << "ref init s" << std::setw(11) << "ref end s" << std::setw(12)
            << "init ratio" << std::setw(11) << "end ratio" << std::setw(11) << "vs mpich"
            << std::setw(8) << "agents" << std::setw(8) << "height" << std::setw(10) << "barriers"
            << "\n";
  bool all_ok = true;
  std::map<std::pair<int, int>, double> mpich_reference_init;  // by (ranks, nodes)
  for (const Row& row : rows) {
    for (const Flavour& f : flavours) {
      std::vector<double> init, end, ref_init, ref_end;
      std::string error;
      int64_t last_job = 0;
      for (int r = 0; r < args.repeat; ++r) {
        Sample ours =
            run_on_trellis(*client, f, binaries[f.name], dir, row.nodes, row.ranks, last_job);
        Sample ref = run_reference(f, binaries[f.name], dir, row.ranks);
        if (!ours.error.empty()) error = ours.error;
        if (!ref.error.empty()) error = ref.error;
        if (!ours.error.empty() || !ref.error.empty()) break;
        init.push_back(ours.init);
        end.push_back(ours.end);
        ref_init.push_back(ref.init);
        ref_end.push_back(ref.end);
      }
      // The step's agents (one per node here) and its exchange tree, as the agents build it.
      std::vector<std::string> agents;
      for (int k = 0; k < row.nodes; ++k) agents.push_back(std::to_string(k));
      int height = exchange_tree_position(agents, agents.front(), fanout).height;
      std::cout << std::left << std::setw(8) << row.ranks << std::setw(8) << row.nodes
                << std::setw(9) << f.name << std::right << std::fixed << std::setprecision(3);
      if (!error.empty()) {
        all_ok = false;
        std::cout << "  failed: " << error << "\n";
        continue;
      }
      // The first node of the job is served by the agent of the same number (one node each).
      Result<v1::ListJobsReply> listed = [&] {
        v1::ListJobsRequest q;
        q.add_job_ids(last_job);
        return list_jobs(*client, q);
      }();
      int root = 0;
      if (listed && listed->jobs_size() == 1) {
        std::string nodelist = listed->jobs(0).nodelist();
        size_t digit = nodelist.find_first_of("0123456789");
        if (digit != std::string::npos) root = std::stoi(nodelist.substr(digit));
      }
      int barriers = barriers_of(cluster + "/agent-" + std::to_string(root) + ".log", last_job);
      if (f.name == "mpich") mpich_reference_init[{row.ranks, row.nodes}] = median(ref_init);
      auto mpich = mpich_reference_init.find({row.ranks, row.nodes});
      std::cout << std::setw(10) << median(init) << std::setw(10) << median(end) << std::setw(12)
                << median(ref_init) << std::setw(11) << median(ref_end) << std::setw(12)
                << std::setprecision(2) << median(init) / median(ref_init) << std::setw(11)
                << median(end) / median(ref_end) << std::setw(11);
      if (mpich != mpich_reference_init.end() && mpich->second > 0)
        std::cout << median(init) / mpich->second;
      else
        std::cout << "-";
      std::cout << std::setw(8) << row.nodes << std::setw(8) << height << std::setw(10) << barriers
                << std::setprecision(3) << "\n";
    }
  }
  std::cout << "\ninit: submission (or the launcher's start) to the last rank past MPI_Init; "
               "end: to the job's end (or the launcher's exit); medians of "
            << args.repeat
            << " runs; ratios are Trellis over the library's launcher on one host, and (vs "
               "mpich) Trellis's init over `mpiexec.mpich -n N`'s, the goal's reference.\n"
            << "A barrier crosses the agents' tree up and down: 2 x height round trips "
               "(fan-out "
            << fanout << ").\n";
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

void add_bench_mpi_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchMpiArgs>();
  CLI::App* b = bench_family(app).add_subcommand(
      "mpi",
      "Launch and wire-up of real MPI programs (MPICH, Open MPI) through Trellis, against "
      "mpiexec.mpich and mpirun.openmpi on this host, measured in the same run");
  b->add_option("--ranks", args->ranks, "Rank counts, one node each (default 2,4,8,16,32,64)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  b->add_option("--repeat", args->repeat, "Runs per measurement (median; default 3)")
      ->check(CLI::Range(1, 100));
  b->add_option("--dir", args->dir, "Where to build and run (default: a temporary directory)");
  b->add_flag("--keep", args->keep, "Keep the temporary directory");
  b->callback([args, &status] { status = run_bench_mpi(*args); });
}

}  // namespace trellis::cli
