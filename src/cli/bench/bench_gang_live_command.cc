// trellis bench gang-live: gang switching on real processes (seed 002, thesis sections 4.3 and
// 4.8), on 64 emulated nodes of this host, one trellis-agent per node, driven through the same
// switch tree (daemon/switch_sender.h) that trellisd uses:
//   (a) switch latency per phase (freeze, collect, thaw: the slowest node's) and the round trip
//       through the tree, p50/p99, for each fan-out;
//   (b) the overhead O = (T_gang - T_alone) / T_alone of a 64-process CPU-bound job switched
//       against itself (frozen, looked at and thawed) once per slice, for each slice length
//       (the thesis's Fig. 4.8 method);
//   (c) two jobs time-shared: each one's run time against one alone (ideal 2.00, thesis Table
//       4.3), with jobs of trellis-work processes that count only their running time;
//   (d) the thesis's DQT experiment on a live cluster against its simulation (bench_gang_dqt.h).
// The agents are started by the bench with no controller (they serve the switches and launches
// they are sent); the jobs of (b) are shell loops calibrated in the same run. All 64 nodes share
// this host's cores, so (b) measures what switching costs the jobs here, agents included.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "cli/alloc_report.h"
#include "cli/bench/bench_gang_dqt.h"
#include "cli/commands.h"
#include "cli/percentile.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/detached_process.h"
#include "daemon/munge_daemon.h"
#include "daemon/proc_stat.h"
#include "daemon/switch_sender.h"
#include "daemon/tree/tree_channel.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct BenchGangLiveArgs {
  int nodes = 64;
  int switches = 200;  // per fan-out in (a)
  std::vector<int> fanouts = {2, 4, 8, 16, 64};
  // (a): an outgoing job's activity is looked at on its first switch-out and every this many
  // after, as the controller does ([controller] activity_every; activity_wanted()).
  int activity_every = ControllerSettings{}.activity_every;
  std::vector<int> slices_ms = {20, 40, 100, 200};
  double work_seconds = 6;  // T_alone of the CPU-bound job in (b) and (c), about
  std::string dir;
  std::string parts = "abcd";  // which of (a)-(d) to run
  DqtLiveArgs dqt;
};

int failed_with(const Error& error) {
  std::cerr << "trellis bench gang-live: " << error.message << "\n";
  return kExitFailure;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The emulated nodes: one agent process per node, no controller.
class Nodes {
 public:
  Nodes(fs::path dir, int count, const std::string& munge_socket)
      : dir_(std::move(dir)),
        credentials_(munge_socket),
        signer_(credentials_, static_cast<int>(::geteuid())),
        tree_(signer_, channel_, "bench gang-live") {
    for (int k = 0; k < count; ++k) {
      fs::path state = dir_ / ("agent-" + std::to_string(k));
      fs::create_directories(state);
      Result<pid_t> pid = start_detached(
          {sibling_binary("trellis-agent"), "--controller", "127.0.0.1:1", "--nodes",
           "n" + std::to_string(k), "--state-dir", state.string(), "--munge-socket", munge_socket,
           "--port-file", (state / "port").string(), "--tree-port-file",
           (state / "tree-port").string(), "--heartbeat-ms", "600000"},
          (dir_ / ("agent-" + std::to_string(k) + ".log")).string(),
          (dir_ / ("agent-" + std::to_string(k) + ".pid")).string());
      if (pid) pids_.push_back(*pid);
    }
  }
  ~Nodes() {
    for (int64_t job : jobs_) signal_all(job, SIGKILL);
    for (pid_t pid : pids_) ::kill(pid, SIGTERM);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }

  // Waits for every agent's ports; false if one did not come up.
  bool wait_ready() {
    auto give_up = Clock::now() + std::chrono::seconds(60);
    auto read_port = [&](const fs::path& file) -> std::string {
      std::string text;
      while (text.empty() || text.back() != '\n') {
        if (Clock::now() > give_up) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::ifstream in(file);
        text.assign(std::istreambuf_iterator<char>(in), {});
      }
      return text.substr(0, text.size() - 1);
    };
    for (size_t k = 0; k < pids_.size(); ++k) {
      fs::path state = dir_ / ("agent-" + std::to_string(k));
      std::string port = read_port(state / "port"), tree_port = read_port(state / "tree-port");
      if (port.empty() || tree_port.empty()) return false;
      addresses_.push_back("127.0.0.1:" + tree_port);
      stubs_.push_back(v1::Agent::NewStub(
          grpc::CreateChannel("127.0.0.1:" + port, grpc::InsecureChannelCredentials())));
    }
    return !pids_.empty();
  }

  const std::vector<std::string>& addresses() const { return addresses_; }
  const CredentialSource& credentials() const { return credentials_; }
  // The control tree the switches go down, as trellisd's.
  TreeSender& tree() { return tree_; }

  // Starts `job` on every node: argv run by each node's agent, in `cwd`. The launches go out in
  // parallel, so that the job's tasks start within moments of each other.
  Status launch(int64_t job, const std::vector<std::string>& argv, const std::string& cwd) {
    jobs_.push_back(job);
    std::vector<std::string> errors(stubs_.size());
    // Every node of the job, in node-id order (the job shells lay ranks out over them), and as a
    // hostlist; each agent starts the one node it serves.
    std::vector<std::string> nodes;
    for (size_t i = 0; i < stubs_.size(); ++i) nodes.push_back("n" + std::to_string(i));
    const std::string nodelist =
        nodes.size() == 1 ? nodes[0] : "n[0-" + std::to_string(nodes.size() - 1) + "]";
    std::vector<std::thread> threads;
    for (size_t k = 0; k < stubs_.size(); ++k) {
      threads.emplace_back([&, k] {
        v1::LaunchRequest request;
        request.set_job_id(job);
        request.set_attempt(1);
        for (const std::string& node : nodes) request.add_nodes(node);
        request.set_nodelist(nodelist);
        request.set_nnodes(static_cast<int>(nodes.size()));
        for (const std::string& a : argv) request.add_argv(a);
        request.set_cwd(cwd);
        request.set_output("/dev/null");
        request.set_uid(static_cast<int>(::geteuid()));
        request.set_gid(static_cast<int>(::getegid()));
        v1::LaunchReply reply;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        if (Status ok = credentials_.attach(context); !ok) {
          errors[k] = ok.error().message;
          return;
        }
        grpc::Status status = stubs_[k]->Launch(&context, request, &reply);
        if (!status.ok())
          errors[k] = "launch on agent " + std::to_string(k) + ": " + status.error_message();
      });
    }
    for (std::thread& t : threads) t.join();
    for (const std::string& e : errors)
      if (!e.empty()) return fail(e);
    return Ok{};
  }

  // The CPU time used so far by the agents, by `also` (munged) and by this process, in ticks.
  long long cpu_ticks(pid_t also) const {
    long long ticks = 0;
    std::vector<pid_t> all = pids_;
    all.push_back(also);
    all.push_back(::getpid());
    for (pid_t pid : all)
      if (Result<ProcStat> stat = read_proc_stat(pid)) ticks += stat->cpu_ticks;
    return ticks;
  }

  void signal_all(int64_t job, int signal) {
    for (auto& stub : stubs_) {
      v1::SignalRequest request;
      request.set_job_id(job);
      request.set_signal(signal);
      v1::SignalReply reply;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      if (credentials_.attach(context)) (void)stub->Signal(&context, request, &reply);
    }
  }

 private:
  fs::path dir_;
  CredentialSource credentials_;
  TreeSigner signer_;
  TreeChannel channel_;
  TreeSender tree_;
  std::vector<pid_t> pids_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<v1::Agent::Stub>> stubs_;
  std::vector<int64_t> jobs_;
};

SwitchOrder order_of(const std::vector<std::string>& agents, std::vector<int64_t> freeze,
                     std::vector<int64_t> thaw) {
  SwitchOrder order;
  order.agents = agents;
  for (int64_t j : freeze) order.freeze.push_back({j, 1});
  for (int64_t j : thaw) order.thaw.push_back({j, 1});
  return order;
}

// The shell loop that does `iterations` of work, then leaves a marker DONE_DIR/JOB.NODE.
std::vector<std::string> busy_job(long iterations, const fs::path& done_dir, int64_t job) {
  return {"/bin/sh", "-c",
          "i=0; while [ $i -lt " + std::to_string(iterations) + " ]; do i=$((i+1)); done; : > " +
              (done_dir / (std::to_string(job) + ".")).string() + "$TRELLIS_NODEID"};
}

// A job of trellis-work processes: each runs for `seconds` of its own running time (frozen time
// does not count, whatever else shares this host's cores), then leaves a marker.
std::vector<std::string> work_job(double seconds, const fs::path& done_dir, int64_t job) {
  return {"/bin/sh", "-c",
          sibling_binary("trellis-work") + " " + std::to_string(seconds) + " && : > " +
              (done_dir / (std::to_string(job) + ".")).string() + "$TRELLIS_NODEID"};
}

// Seconds one shell loop of `iterations` takes alone on this host.
double time_loop(long iterations) {
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string script =
        "i=0; while [ $i -lt " + std::to_string(iterations) + " ]; do i=$((i+1)); done";
    ::execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
    ::_exit(127);
  }
  ::waitpid(pid, nullptr, 0);
  return seconds_since(start);
}

// How many of `job`'s tasks have left their marker.
int done_count(const fs::path& done_dir, int64_t job, int nodes) {
  int done = 0;
  for (int k = 0; k < nodes; ++k)
    done += fs::exists(done_dir / (std::to_string(job) + "." + std::to_string(k)));
  return done;
}

// Parts (a)-(c), on agents this bench starts itself.
int run_switching_parts(const BenchGangLiveArgs& args) {
  auto want = [&](char part) { return args.parts.find(part) != std::string::npos; };
  fs::path dir = args.dir.empty() ? fs::temp_directory_path() /
                                        ("trellis-gang-live-" + std::to_string(::getpid()))
                                  : fs::absolute(args.dir);
  fs::create_directories(dir);
  // Removed last (after the agents and munged are gone), on every way out, unless given.
  struct RemoveAtExit {
    fs::path dir;
    ~RemoveAtExit() {
      std::error_code ignored;
      if (!dir.empty()) fs::remove_all(dir, ignored);
    }
  } remove_at_exit{args.dir.empty() ? dir : fs::path()};
  Result<MungeDaemon> munge = MungeDaemon::start((dir / "munge").string());
  if (!munge) return failed_with(munge.error());
  int status = kExitOk;
  {
    Nodes nodes(dir, args.nodes, munge->socket());
    if (!nodes.wait_ready())
      return failed_with(fail("the agents did not start (logs in " + dir.string() + ")"));
    const std::vector<std::string>& agents = nodes.addresses();
    std::cout << "trellis bench gang-live: " << args.nodes << " nodes, one agent each, on "
              << std::thread::hardware_concurrency() << " cores; freezer: see "
              << (dir / "agent-0.log").string() << "\n\n";

    const fs::path work = dir / "work";
    fs::create_directories(work);
    // (a) Latency: two jobs of sleeping processes on every node, switched against each other.
    if (want('a')) {
      for (int64_t job : {1, 2})
        if (Status ok = nodes.launch(job, {"/bin/sleep", "100000"}, work.string()); !ok)
          return failed_with(ok.error());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::cout
          << "(a) switch latency through the tree, " << args.switches
          << " switches per fan-out (microseconds; phases: the slowest node's; collect:\n"
             "the outgoing job's activity, looked at on its first switch-out and every "
          << args.activity_every
          << " after, as the controller's\n"
             "activity_every; CPU/sw: the CPU time of the agents, munged and this sender per\n"
             "switch; floor: that over this host's cores, the least latency a switch can have "
             "here)\n";
      std::cout << std::right << std::setw(7) << "fanout" << std::setw(10) << "depth"
                << std::setw(12) << "freeze p50" << std::setw(11) << "p99" << std::setw(13)
                << "collect p50" << std::setw(11) << "p99" << std::setw(11) << "thaw p50"
                << std::setw(11) << "p99" << std::setw(13) << "switch p50" << std::setw(11) << "p99"
                << std::setw(11) << "CPU/sw" << std::setw(9) << "floor"
                << "\n";
      {
        SwitchSender prime(nodes.tree(), {.fanout = 64});
        (void)prime.switch_through_tree(order_of(agents, {2}, {}), agents);
      }
      std::map<int64_t, int> switch_outs = {{2, 1}};  // the priming switch's look at job 2
      for (int fanout : args.fanouts) {
        SwitchSender sender(nodes.tree(), {.fanout = fanout, .deadline_seconds = 5});
        std::vector<double> freeze, collect, thaw, round;
        int failed = 0;
        const long long cpu_before = nodes.cpu_ticks(munge->pid());
        for (int i = 0; i < args.switches; ++i) {
          // From job 2 frozen: switch i freezes the job that runs and thaws the other.
          int64_t out = i % 2 == 0 ? 1 : 2, in = 3 - out;
          SwitchOrder order = order_of(agents, {out}, {in});
          if (!activity_wanted(++switch_outs[out], args.activity_every))
            order.skip_activity.push_back({out, 1});
          auto start = Clock::now();
          v1::SwitchReply reply = sender.switch_through_tree(order, agents);
          round.push_back(seconds_since(start) * 1e6);
          freeze.push_back(static_cast<double>(reply.freeze_us()));
          collect.push_back(static_cast<double>(reply.collect_us()));
          thaw.push_back(static_cast<double>(reply.thaw_us()));
          failed += reply.failed_size() + reply.errors_size();
        }
        // The CPU time one switch costs the agents, munged and this process (the sender), and
        // the latency it means at the least with every core of this host on it.
        const double cpu_per_switch =
            static_cast<double>(nodes.cpu_ticks(munge->pid()) - cpu_before) /
            static_cast<double>(::sysconf(_SC_CLK_TCK)) / args.switches * 1e6;
        const double floor = cpu_per_switch / std::max(1u, std::thread::hardware_concurrency());
        // Back to job 1 running, 2 frozen.
        if (args.switches % 2 == 1)
          (void)sender.switch_through_tree(order_of(agents, {2}, {1}), agents);
        int depth = 0;
        for (long reach = 1, level = 1; reach < args.nodes; ++depth) {
          level *= fanout;
          reach += level;
        }
        std::cout << std::setw(7) << fanout << std::setw(10) << depth + 1 << std::fixed
                  << std::setprecision(0) << std::setw(12) << percentile(freeze, 0.5)
                  << std::setw(11) << percentile(freeze, 0.99) << std::setw(13)
                  << percentile(collect, 0.5) << std::setw(11) << percentile(collect, 0.99)
                  << std::setw(11) << percentile(thaw, 0.5) << std::setw(11)
                  << percentile(thaw, 0.99) << std::setw(13) << percentile(round, 0.5)
                  << std::setw(11) << percentile(round, 0.99) << std::setw(11) << cpu_per_switch
                  << std::setw(9) << floor
                  << (failed ? "  (" + std::to_string(failed) + " failures)" : "") << "\n";
        if (failed) status = kExitFailure;
      }
      nodes.signal_all(1, SIGKILL);
      nodes.signal_all(2, SIGKILL);
    }
    if (!want('b') && !want('c')) return status;

    // Calibration: iterations for which 64 processes on this host's cores take work_seconds.
    const double per_iteration = time_loop(200000) / 200000;
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    const long iterations =
        static_cast<long>(args.work_seconds * cores / args.nodes / std::max(per_iteration, 1e-9));
    const fs::path done_dir = dir / "done";
    fs::create_directories(done_dir);
    int64_t next_job = 10;
    // Runs the jobs to their end, switching them as `switch_every` says (nothing when 0): with
    // one job, it is frozen and thawed in one switch each slice; with two, they alternate. Each
    // job's time from the launch to its last task's end.
    using JobCommand = std::function<std::vector<std::string>(int64_t job)>;
    auto busy = [&](int64_t job) { return busy_job(iterations, done_dir, job); };
    auto run_jobs = [&](int count, double slice,
                        const JobCommand& command) -> Result<std::vector<double>> {
      std::vector<int64_t> ids;
      for (int i = 0; i < count; ++i) ids.push_back(next_job++);
      SwitchSender sender(nodes.tree(), {.fanout = 16, .deadline_seconds = 5});
      // The second job is launched first and frozen, and the clock starts once it is in place:
      // as in the thesis's Table 4.3, the two take turns from the first slice. (Its tasks run
      // for the moments between their launch and the freeze; the last one launched hardly at
      // all, and a job ends with its last task. A launch into a job frozen beforehand would wait
      // for the task to start, which a frozen cgroup does not let it do.)
      for (size_t i = 1; i < ids.size(); ++i) {
        if (Status ok = nodes.launch(ids[i], command(ids[i]), work.string()); !ok)
          return ok.error();
        (void)sender.switch_through_tree(order_of(agents, {ids[i]}, {}), agents);
      }
      auto start = Clock::now();
      if (Status ok = nodes.launch(ids[0], command(ids[0]), work.string()); !ok) return ok.error();
      std::vector<double> took(ids.size(), 0);
      size_t running = 0;
      auto next_switch = Clock::now() + std::chrono::duration<double>(slice);
      while (std::any_of(took.begin(), took.end(), [](double t) { return t == 0; })) {
        for (size_t i = 0; i < ids.size(); ++i)
          if (took[i] == 0 && done_count(done_dir, ids[i], args.nodes) == args.nodes)
            took[i] = seconds_since(start);
        if (seconds_since(start) > 600) return fail("the jobs did not end within 600 s");
        if (slice > 0 && Clock::now() >= next_switch) {
          next_switch += std::chrono::duration<double>(slice);
          if (ids.size() == 1) {
            (void)sender.switch_through_tree(order_of(agents, {ids[0]}, {ids[0]}), agents);
          } else if (took[0] == 0 && took[1] == 0) {
            size_t out = running, in = 1 - running;
            (void)sender.switch_through_tree(order_of(agents, {ids[out]}, {ids[in]}), agents);
            running = in;
          } else {  // one has ended: the other runs alone
            for (size_t i = 0; i < 2; ++i)
              if (took[i] == 0)
                (void)sender.switch_through_tree(order_of(agents, {}, {ids[i]}), agents);
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      return took;
    };

    Result<std::vector<double>> alone = run_jobs(1, 0, busy);
    if (!alone) return failed_with(alone.error());
    const double t_alone = alone->front();
    std::cout << "\nT_alone " << std::fixed << std::setprecision(3) << t_alone << " s: a "
              << args.nodes << "-process CPU-bound job alone (" << iterations
              << " loop iterations per process)\n";
    if (want('b')) {
      std::cout << "\n(b) overhead of the job switched against itself every slice\n";
      std::cout << std::setw(10) << "slice ms" << std::setw(12) << "T_gang s" << std::setw(14)
                << "overhead %"
                << "\n";
      for (int ms : args.slices_ms) {
        Result<std::vector<double>> gang = run_jobs(1, ms / 1000.0, busy);
        if (!gang) return failed_with(gang.error());
        std::cout << std::setw(10) << ms << std::setw(12) << std::setprecision(3) << gang->front()
                  << std::setw(14) << std::setprecision(2)
                  << (gang->front() - t_alone) / t_alone * 100 << "\n";
      }
    }
    if (!want('c')) return status;

    // (c) with jobs that count only their running time: 64 CPU-bound processes per job would
    // measure how this host's cores are shared rather than how the nodes are.
    auto timed = [&](int64_t job) { return work_job(args.work_seconds, done_dir, job); };
    Result<std::vector<double>> timed_alone = run_jobs(1, 0, timed);
    if (!timed_alone) return failed_with(timed_alone.error());
    const double alone_c = timed_alone->front();
    std::cout << "\n(c) two jobs of " << args.nodes << " trellis-work processes ("
              << args.work_seconds << " s of running time each) time-shared at 100 ms slices\n"
              << "alone " << std::setprecision(3) << alone_c << " s (ideal 2.00 x alone each)\n";
    Result<std::vector<double>> pair = run_jobs(2, 0.1, timed);
    if (!pair) return failed_with(pair.error());
    std::cout << "job 1 " << std::setprecision(3) << (*pair)[0] << " s = " << std::setprecision(2)
              << (*pair)[0] / alone_c << " x alone; job 2 " << std::setprecision(3) << (*pair)[1]
              << " s = " << std::setprecision(2) << (*pair)[1] / alone_c << " x alone\n";
  }
  return status;
}

int run_bench_gang_live(const BenchGangLiveArgs& args) {
  int status = kExitOk;
  if (args.parts.find_first_of("abc") != std::string::npos) status = run_switching_parts(args);
  if (args.parts.find('d') != std::string::npos) {
    // After (a)-(c)'s agents are gone: the experiment needs the host's cores to itself.
    DqtLiveArgs dqt = args.dqt;
    dqt.nodes = args.nodes;
    if (!args.dir.empty()) dqt.dir = (fs::absolute(args.dir) / "dqt-cluster").string();
    std::cout << "\n";
    if (run_dqt_live_experiment(dqt) != kExitOk) status = kExitFailure;
  }
  return status;
}

}  // namespace

int run_gang_switch_latency(int nodes, int switches, const std::vector<int>& fanouts) {
  BenchGangLiveArgs args;
  args.nodes = nodes;
  args.switches = switches;
  args.fanouts = fanouts;
  args.parts = "a";
  return run_bench_gang_live(args);
}

void add_bench_gang_live_command(CLI::App& app, int& status) {
  auto args = std::make_shared<BenchGangLiveArgs>();
  CLI::App* cmd = bench_family(app).add_subcommand(
      "gang-live",
      "Gang switching on real processes (as root): 64 emulated nodes, one trellis-agent each.\n"
      "(a) switch latency per phase through the tree for each fan-out; (b) the overhead of a\n"
      "CPU-bound job switched against itself per slice length; (c) two jobs time-shared;\n"
      "(d) the thesis's DQT experiment: a simulated workload of about 1,500 jobs run on a live\n"
      "cluster (trellisd, dqt-ffapa), mean RETR by job size against the simulation (about 20\n"
      "minutes at the defaults)");
  cmd->add_option("--nodes", args->nodes, "Emulated nodes, one agent each (default 64)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--switches", args->switches, "Switches per fan-out in (a) (default 200)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--fanouts", args->fanouts, "Fan-outs of (a) (default 2 4 8 16 64)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--activity-every", args->activity_every,
                  "(a): an outgoing job's activity is looked at on its first switch-out and every "
                  "this many after (default: the controller's activity_every, 4)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--slices", args->slices_ms, "Slice lengths of (b), ms (default 20 40 100 200)")
      ->check(CLI::Range(5, 10000));
  cmd->add_option("--work", args->work_seconds,
                  "Seconds the jobs of (b) and (c) take alone, about (default 6)")
      ->check(CLI::Range(0.5, 600.0));
  cmd->add_option("--parts", args->parts, "Which parts to run, e.g. \"ab\" (default abcd)")
      ->check([](const std::string& parts) {
        if (parts.empty() || parts.find_first_not_of("abcd") != std::string::npos)
          return std::string("letters from a, b, c, d");
        return std::string();
      });
  cmd->add_option("--dqt-units", args->dqt.units,
                  "(d): arrivals over this many time units (default 10000, as the thesis)")
      ->check(CLI::Range(10.0, 1e6));
  cmd->add_option("--dqt-unit", args->dqt.unit_seconds,
                  "(d): seconds per time unit, which is also the slice (default 0.1)")
      ->check(CLI::Range(0.01, 10.0));
  cmd->add_option("--dqt-mean", args->dqt.mean_service,
                  "(d): mean job length in units, exponential (default 12: about 1,500 jobs)")
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--dqt-gradient-start", args->dqt.gradient_start,
                  "(d): the load at the start; +0.05 every 5% of the arrivals (default 0.05)")
      ->check(CLI::Range(0.01, 10.0));
  cmd->add_option("--dqt-csv", args->dqt.csv,
                  "(d): write one line per job (both runs' times and RETR) to this file");
  cmd->add_option("--dqt-seed", args->dqt.seed, "(d): the workload's seed (default 1)");
  cmd->add_option("--dqt-fanout", args->dqt.switch_fanout,
                  "(d): the cluster's switch fan-out (default 16)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--dir", args->dir, "Where the agents live (default: a fresh temp dir)");
  cmd->callback([args, &status] { status = run_bench_gang_live(*args); });
}

}  // namespace trellis::cli
