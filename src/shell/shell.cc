#include "shell/shell.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/id_ranges.h"
#include "core/task_binding.h"
#include "core/write_all.h"
#include "shell/agent_channel.h"
#include "shell/line_labeler.h"
#include "shell/node_topology.h"
#include "shell/pmi1_server.h"
#include "shell/pmix_server.h"
#include "shell/rank_process.h"

extern char** environ;

namespace trellis {
namespace {

using Clock = std::chrono::steady_clock;

// How long the shell waits for the agent to acknowledge how the step ended.
constexpr auto kEndAckTimeout = std::chrono::seconds(2);
// Once every rank has exited, how long output still written by what they left behind is read.
constexpr auto kOutputDrain = std::chrono::seconds(1);

// The CPUs this process may run on (its affinity mask: a cpuset or taskset narrows it).
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::string signal_text(int signal) {
  const char* name = sigabbrev_np(signal);
  return "signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
}

struct Rank {
  int rank = 0;
  int local = 0;
  std::vector<int> cpus;                 // what it is bound to (host CPU ids); empty: not bound
  std::optional<std::vector<int>> gpus;  // the node's global GPU ids it is given, when bound
  pid_t pid = 0;
  bool running = false;
  int pmi_fd = -1;  // the shell's end of the PMI socketpair
  int out_fd = -1;  // --label: read ends of the rank's stdout and stderr pipes
  int err_fd = -1;
  std::unique_ptr<LineLabeler> out_label, err_label;
};

class Shell {
 public:
  explicit Shell(const ShellOptions& options)
      : o_(options),
        layout_(*TaskLayout::from_counts(options.tasks_per_node, options.distribution)),
        name_(step_name(options.job, options.step)) {}

  ShellEnd run() {
    if (Status started = start(); !started) {
      fail_step(1, 0, started.error().message);
      kill_ranks();
    }
    loop();
    return finish();
  }

 private:
  Status start();
  // Points this process and its ranks (`base`) at the node's topology file (shell/node_topology.h).
  void use_node_topology(std::vector<std::string>& base);
  std::vector<std::string> rank_env(const Rank& rank, const std::vector<std::string>& base);
  // Takes the agent's binding of the node's ranks (TRELLIS_BIND_*, core/task_binding.h) out of
  // `base` into ranks_; an error when the agent found it cannot be met.
  Status bind_ranks(std::vector<std::string>& base);
  void loop();
  void reap();
  void read_pmi(Rank& rank);
  void read_output(Rank& rank, bool error_stream);
  void read_agent();
  void apply(Pmi1Server::Effects& effects);
  void exchange(std::string bytes, bool for_pmix);
  void exchanged(const std::string& bytes);
  void exchange_failed(const std::string& why);
  // The step's first failure; `from_exit` when it is a rank's own exit status (which a one-task
  // step's status says well enough without a line in the job's error file).
  void fail_step(int exit_code, int signal, std::string reason, bool from_exit = false);
  void kill_ranks();
  ShellEnd finish();
  Status ensure_channel();
  bool output_open() const {
    for (const Rank& r : ranks_)
      if (r.out_fd >= 0 || r.err_fd >= 0) return true;
    return false;
  }
  int running() const {
    int n = 0;
    for (const Rank& r : ranks_) n += r.running ? 1 : 0;
    return n;
  }

  const ShellOptions& o_;
  TaskLayout layout_;
  std::string name_;  // "12.0"
  std::vector<Rank> ranks_;
  bool oversubscribed_ = false;  // more ranks here than CPUs this shell may run on
  std::unique_ptr<Pmi1Server> pmi_;
  std::unique_ptr<PmixServer> pmix_;
  int children_fd_ = -1;  // signalfd for SIGCHLD
  std::optional<AgentChannel> agent_;
  uint32_t round_ = 0;       // barriers sent to the agent so far
  bool exchanging_ = false;  // one is in flight
  bool exchange_for_pmix_ = false;
  std::optional<ShellEnd> failure_;
  std::string reason_;
  bool failure_from_exit_ = false;
  std::optional<Clock::time_point> kill_at_;      // SIGKILL the ranks left (after a failure)
  std::optional<Clock::time_point> drain_until_;  // stop reading output (all ranks gone)
};

Status Shell::start() {
  // The agent's signals to the task's group are for the ranks; the shell waits for their ends.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTSTP,
                SIGTTIN, SIGTTOU, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH, SIGURG})
    ::sigaction(s, &ignore, nullptr);
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child, nullptr);
  children_fd_ = ::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  if (children_fd_ < 0) return fail(std::string("signalfd: ") + std::strerror(errno));

  std::vector<int> mine = layout_.ranks_on(o_.node_index);
  for (size_t i = 0; i < mine.size(); ++i) {
    Rank r;
    r.rank = mine[i];
    r.local = static_cast<int>(i);
    ranks_.push_back(std::move(r));
  }
  if (ranks_.empty()) return Ok{};
  oversubscribed_ = static_cast<int>(ranks_.size()) > usable_cpus();

  std::vector<std::string> base;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    // What a rank gets fresh from its shell is never inherited from the job's environment.
    if (entry.starts_with("PMI_") || entry.starts_with("PMIX_")) continue;
    base.emplace_back(entry);
  }
  std::string path;
  for (const std::string& e : base)
    if (e.starts_with("PATH=")) path = e.substr(5);
  if (Status bound = bind_ranks(base); !bound) return bound.error();

  if (o_.mpi != MpiKind::kNone) use_node_topology(base);
  if (o_.mpi != MpiKind::kNone) {
    Pmi1Server::Options pmi;
    pmi.size = layout_.ntasks();
    pmi.kvsname = name_;
    pmi.node = o_.node;
    for (const Rank& r : ranks_) pmi.ranks.push_back(r.rank);
    // RFC 13: a mapping that does not fit a value is given empty.
    std::string mapping = layout_.pmi_process_mapping();
    if (mapping.size() > kPmi1ValueMax) mapping.clear();
    pmi.preput.emplace_back("PMI_process_mapping", mapping);
    pmi_ = std::make_unique<Pmi1Server>(std::move(pmi));
  }
  if (o_.mpi == MpiKind::kPmix) {
    for (const std::string& size : PmixServer::store_sizes(base)) {
      const size_t eq = size.find('=');
      ::setenv(size.substr(0, eq).c_str(), size.c_str() + eq + 1, 1);
      base.push_back(size);
    }
    Result<std::unique_ptr<PmixServer>> server = PmixServer::start(o_, layout_);
    if (!server) return server.error();
    pmix_ = std::move(*server);
  }

  std::vector<std::string> candidates = exec_candidates(o_.argv[0], path);
  for (Rank& r : ranks_) {
    RankProcess process;
    process.argv = o_.argv;
    process.candidates = candidates;
    process.label = "trellis-shell: step " + name_ + ": rank " + std::to_string(r.rank) + ": ";
    int rank_end = -1;
    if (pmi_) {
      int pair[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(std::string("socketpair: ") + std::strerror(errno));
      r.pmi_fd = pair[0];
      rank_end = pair[1];
      ::fcntl(r.pmi_fd, F_SETFL, O_NONBLOCK);
      process.inherit_fd = rank_end;
    }
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (o_.label) {
      if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        return fail(std::string("pipe: ") + std::strerror(errno));
      r.out_fd = out[0];
      r.err_fd = err[0];
      ::fcntl(r.out_fd, F_SETFL, O_NONBLOCK);
      ::fcntl(r.err_fd, F_SETFL, O_NONBLOCK);
      process.stdout_fd = out[1];
      process.stderr_fd = err[1];
      r.out_label = std::make_unique<LineLabeler>(std::to_string(r.rank) + ": ");
      r.err_label = std::make_unique<LineLabeler>(std::to_string(r.rank) + ": ");
    }
    process.env = rank_env(r, base);
    process.cpus = r.cpus;
    if (rank_end >= 0) process.env.push_back("PMI_FD=" + std::to_string(rank_end));
    if (pmix_) {
      Result<std::vector<std::string>> extra = pmix_->client_env(r.rank);
      if (!extra) return extra.error();
      process.env.insert(process.env.end(), extra->begin(), extra->end());
    }
    Result<pid_t> pid = start_rank(process);
    if (rank_end >= 0) ::close(rank_end);
    if (out[1] >= 0) ::close(out[1]);
    if (err[1] >= 0) ::close(err[1]);
    if (!pid) return pid.error();
    r.pid = *pid;
    r.running = true;
  }
  return Ok{};
}

Status Shell::bind_ranks(std::vector<std::string>& base) {
  std::string cpus, gpus, error;
  std::erase_if(base, [&](const std::string& e) {
    for (auto [name, into] : {std::pair{"TRELLIS_BIND_CPUS=", &cpus},
                              {"TRELLIS_BIND_GPUS=", &gpus},
                              {"TRELLIS_BIND_ERROR=", &error}})
      if (e.starts_with(name)) {
        *into = e.substr(std::strlen(name));
        return true;
      }
    return false;
  });
  if (!error.empty()) return fail(error);
  auto sets = [&](const std::string& text,
                  const char* what) -> Result<std::vector<std::vector<int>>> {
    if (text.empty()) return std::vector<std::vector<int>>();
    Result<std::vector<std::vector<int>>> decoded = decode_task_sets(text);
    if (!decoded) return fail(std::string(what) + ": " + decoded.error().message);
    if (decoded->size() != ranks_.size())
      return fail(std::string(what) + ": " + std::to_string(decoded->size()) + " sets for " +
                  std::to_string(ranks_.size()) + " ranks on " + o_.node);
    return decoded;
  };
  Result<std::vector<std::vector<int>>> cpu_sets = sets(cpus, "TRELLIS_BIND_CPUS");
  if (!cpu_sets) return cpu_sets.error();
  Result<std::vector<std::vector<int>>> gpu_sets = sets(gpus, "TRELLIS_BIND_GPUS");
  if (!gpu_sets) return gpu_sets.error();
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (!cpu_sets->empty()) ranks_[i].cpus = (*cpu_sets)[i];
    if (!gpu_sets->empty()) ranks_[i].gpus = (*gpu_sets)[i];
  }
  return Ok{};
}

void Shell::use_node_topology(std::vector<std::string>& base) {
  // A job that names its own topology keeps it.
  for (const std::string& e : base)
    if (e.starts_with("HWLOC_XMLFILE=")) return;
  // Without the file, each process discovers the topology itself, as it would anyway: slower,
  // the same result, so nothing to report.
  Result<std::string> file = node_topology_file();
  if (!file) return;
  // For libpmix's discovery in this process (PmixServer::start) and for the ranks. THISSYSTEM:
  // the XML describes this very machine, so hwloc may bind with it.
  ::setenv("HWLOC_XMLFILE", file->c_str(), 1);
  ::setenv("HWLOC_THISSYSTEM", "1", 1);
  std::erase_if(base, [](const std::string& e) { return e.starts_with("HWLOC_THISSYSTEM="); });
  base.push_back("HWLOC_XMLFILE=" + *file);
  base.push_back("HWLOC_THISSYSTEM=1");
  // hwloc loads all its plugins when a topology is made, even one read from XML, which none of
  // them takes part in: libxml2 (with ICU), OpenCL, X11 for GL, libpciaccess, 3.5 ms of CPU in
  // each process (1.0 ms without them; its built-in parser reads the file to the same topology).
  // A job that sets the variable, even empty, keeps its own.
  for (const std::string& e : base)
    if (e.starts_with("HWLOC_PLUGINS_BLACKLIST=")) return;
  ::setenv("HWLOC_PLUGINS_BLACKLIST", kUnusedHwlocPlugins, 1);
  base.push_back(std::string("HWLOC_PLUGINS_BLACKLIST=") + kUnusedHwlocPlugins);
}

std::vector<std::string> Shell::rank_env(const Rank& r, const std::vector<std::string>& base) {
  std::vector<std::string> env = base;
  auto set = [&](std::string_view name, const std::string& value) {
    std::string prefix = std::string(name) + "=";
    for (std::string& e : env)
      if (e.starts_with(prefix)) {
        e = prefix + value;
        return;
      }
    env.push_back(prefix + value);
  };
  set("TRELLIS_PROCID", std::to_string(r.rank));
  set("TRELLIS_LOCALID", std::to_string(r.local));
  set("SLURM_PROCID", std::to_string(r.rank));
  set("SLURM_LOCALID", std::to_string(r.local));
  if (!r.cpus.empty())
    set("TRELLIS_TASK_CPUS", format_id_ranges(std::vector<int64_t>(r.cpus.begin(), r.cpus.end())));
  if (r.gpus) {
    // The job sees its GPUs on the node as 0, 1, ... in the order of TRELLIS_GPUS (its device
    // rules hide the others); a job holding the node whole sees them by their global ids.
    std::vector<std::string> job_gpus;
    for (const std::string& e : env)
      if (e.starts_with("TRELLIS_GPUS=")) {
        std::istringstream list(e.substr(13));
        for (std::string id; std::getline(list, id, ',');) job_gpus.push_back(id);
      }
    std::string global, visible;
    for (int g : *r.gpus) {
      const std::string id = std::to_string(g);
      auto at = std::find(job_gpus.begin(), job_gpus.end(), id);
      global += (global.empty() ? "" : ",") + id;
      visible += (visible.empty() ? "" : ",") +
                 (job_gpus.empty() ? id : std::to_string(at - job_gpus.begin()));
    }
    set("TRELLIS_TASK_GPUS", global);
    set("CUDA_VISIBLE_DEVICES", visible);
    set("ROCR_VISIBLE_DEVICES", visible);
    set("GPU_DEVICE_ORDINAL", visible);
  }
  if (o_.mpi != MpiKind::kNone) {
    set("PMI_RANK", std::to_string(r.rank));
    set("PMI_SIZE", std::to_string(layout_.ntasks()));
  }
  // Open MPI's ranks poll while they wait (for a fence, for a message) unless told to yield;
  // mpirun tells them so when a node runs more ranks than it has CPUs, and so does the shell.
  // A value the job set stays.
  constexpr std::string_view kYield = "OMPI_MCA_mpi_yield_when_idle=";
  if (oversubscribed_ && std::none_of(env.begin(), env.end(),
                                      [&](const std::string& e) { return e.starts_with(kYield); }))
    env.push_back(std::string(kYield) + "1");
  return env;
}

void Shell::loop() {
  for (;;) {
    Clock::time_point now = Clock::now();
    if (kill_at_ && now >= *kill_at_) {
      for (const Rank& r : ranks_)
        if (r.running) ::kill(r.pid, SIGKILL);
      kill_at_.reset();
    }
    if (running() == 0) {
      if (!drain_until_) drain_until_ = now + kOutputDrain;
      if (!output_open() || now >= *drain_until_) return;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<Rank*, int>> who;  // per fd: the rank, and 0 pmi / 1 out / 2 err
    fds.push_back({children_fd_, POLLIN, 0});
    who.emplace_back(nullptr, 0);
    for (Rank& r : ranks_) {
      if (r.pmi_fd >= 0) {
        fds.push_back({r.pmi_fd, POLLIN, 0});
        who.emplace_back(&r, 0);
      }
      if (r.out_fd >= 0) {
        fds.push_back({r.out_fd, POLLIN, 0});
        who.emplace_back(&r, 1);
      }
      if (r.err_fd >= 0) {
        fds.push_back({r.err_fd, POLLIN, 0});
        who.emplace_back(&r, 2);
      }
    }
    size_t agent_index = fds.size();
    if (agent_) fds.push_back({agent_->fd(), POLLIN, 0});
    size_t pmix_index = fds.size();
    if (pmix_) fds.push_back({pmix_->wake_fd(), POLLIN, 0});

    int timeout = -1;
    auto until = [&](Clock::time_point t) {
      int ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count() + 1);
      timeout = timeout < 0 ? std::max(ms, 0) : std::min(timeout, std::max(ms, 0));
    };
    if (kill_at_) until(*kill_at_);
    if (drain_until_) until(*drain_until_);
    int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    for (size_t i = 1; i < who.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Rank& r = *who[i].first;
      if (who[i].second == 0)
        read_pmi(r);
      else
        read_output(r, who[i].second == 2);
    }
    if (agent_ && agent_index < fds.size() && fds[agent_index].revents != 0) read_agent();
    if (pmix_ && pmix_index < fds.size() && fds[pmix_index].revents != 0) {
      for (PmixServer::Event& event : pmix_->take_events()) {
        if (event.kind == PmixServer::Event::Kind::kFence) {
          exchange(std::move(event.bytes), /*for_pmix=*/true);
        } else {  // kAbort
          fail_step(event.exit_code == 0 ? 1 : event.exit_code, 0, event.reason);
          kill_ranks();
        }
      }
    }
    if (fds[0].revents != 0) reap();
  }
}

void Shell::reap() {
  signalfd_siginfo info;
  while (::read(children_fd_, &info, sizeof info) > 0) {
  }
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (Rank& r : ranks_) {
      if (r.pid != pid || !r.running) continue;
      r.running = false;
      // What it said last on its PMI socket comes first: an abort explains the exit that follows.
      if (r.pmi_fd >= 0) read_pmi(r);
      std::string who = "rank " + std::to_string(r.rank) + " on " + o_.node;
      if (WIFSIGNALED(status)) {
        fail_step(0, WTERMSIG(status), who + " was killed by " + signal_text(WTERMSIG(status)),
                  true);
      } else if (WEXITSTATUS(status) != 0) {
        fail_step(WEXITSTATUS(status), 0,
                  who + " exited with exit code " + std::to_string(WEXITSTATUS(status)), true);
      } else if (pmi_ && pmi_->initialized_not_finalized(r.local)) {
        fail_step(1, 0, who + " exited (code 0) between PMI init and finalize");
      }
      if (failure_) kill_ranks();
      if (r.pmi_fd >= 0) {
        ::close(r.pmi_fd);
        r.pmi_fd = -1;
      }
    }
  }
}

void Shell::read_pmi(Rank& r) {
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(r.pmi_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: all read
    if (n == 0) {       // the rank closed its end (finalized, or exited)
      ::close(r.pmi_fd);
      r.pmi_fd = -1;
      return;
    }
    Pmi1Server::Effects effects;
    pmi_->receive(r.local, std::string_view(buffer, static_cast<size_t>(n)), effects);
    apply(effects);
    if (r.pmi_fd < 0) return;
  }
}

void Shell::apply(Pmi1Server::Effects& effects) {
  for (const auto& [client, line] : effects.replies) {
    Rank& r = ranks_[static_cast<size_t>(client)];
    if (r.pmi_fd < 0) continue;
    // Answers are short and the rank waits for each: a blocking write of one line is bounded by
    // the socket buffer, which one line never fills.
    int flags = ::fcntl(r.pmi_fd, F_GETFL);
    ::fcntl(r.pmi_fd, F_SETFL, flags & ~O_NONBLOCK);
    const char* at = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::send(r.pmi_fd, at, left, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      at += n;
      left -= static_cast<size_t>(n);
    }
    ::fcntl(r.pmi_fd, F_SETFL, flags);
  }
  if (effects.failure) {
    fail_step(effects.failure->exit_code, 0, effects.failure->reason);
    kill_ranks();
  }
  if (effects.exchange && !failure_) exchange(pmi_->take_contribution(), /*for_pmix=*/false);
}

Status Shell::ensure_channel() {
  if (agent_) return Ok{};
  if (o_.agent.empty()) return fail("no agent to exchange with (--agent)");
  ExchangeMessage hello;
  hello.type = ExchangeType::kHello;
  hello.job = o_.job;
  hello.attempt = o_.attempt;
  hello.step = o_.step;
  hello.node = o_.node;
  Result<AgentChannel> channel = AgentChannel::connect(o_.agent, hello);
  if (!channel) return channel.error();
  agent_.emplace(std::move(*channel));
  return Ok{};
}

void Shell::exchange(std::string bytes, bool for_pmix) {
  if (exchanging_) {
    exchange_failed("a second barrier began before the first one ended");
    return;
  }
  exchanging_ = true;
  exchange_for_pmix_ = for_pmix;
  ++round_;
  if (o_.nodes.size() == 1) {  // every rank of the step is here
    exchanged(bytes);
    return;
  }
  if (Status ok = ensure_channel(); !ok) return exchange_failed(ok.error().message);
  ExchangeMessage contribute;
  contribute.type = ExchangeType::kContribute;
  contribute.round = round_;
  contribute.bytes = std::move(bytes);
  if (Status sent = agent_->send(contribute); !sent) exchange_failed(sent.error().message);
}

void Shell::exchanged(const std::string& bytes) {
  exchanging_ = false;
  if (exchange_for_pmix_) {
    pmix_->fence_done(bytes);
    return;
  }
  Pmi1Server::Effects effects;
  pmi_->exchanged(bytes, effects);
  apply(effects);
}

void Shell::exchange_failed(const std::string& why) {
  bool for_pmix = exchange_for_pmix_;
  exchanging_ = false;
  if (for_pmix) {
    pmix_->fence_failed();
    fail_step(1, 0, "the PMIx fence of " + o_.node + " failed: " + why);
    kill_ranks();
    return;
  }
  Pmi1Server::Effects effects;
  pmi_->exchange_failed(why, effects);
  apply(effects);
}

void Shell::read_agent() {
  Result<std::vector<ExchangeMessage>> messages = agent_->receive();
  if (!messages) {
    agent_.reset();
    if (exchanging_) exchange_failed("lost the agent: " + messages.error().message);
    return;
  }
  for (ExchangeMessage& m : *messages) {
    if (m.type == ExchangeType::kResult && exchanging_ && m.round == round_) {
      exchanged(m.bytes);
    } else if (m.type == ExchangeType::kError) {
      if (exchanging_) exchange_failed(m.text);
    }
  }
}

void Shell::read_output(Rank& r, bool error_stream) {
  int& fd = error_stream ? r.err_fd : r.out_fd;
  LineLabeler& labeler = error_stream ? *r.err_label : *r.out_label;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;
    if (n == 0) {
      write_all(error_stream ? 2 : 1, labeler.finish());
      ::close(fd);
      fd = -1;
      return;
    }
    write_all(error_stream ? 2 : 1, labeler.feed(std::string_view(buffer, static_cast<size_t>(n))));
  }
}

void Shell::fail_step(int exit_code, int signal, std::string reason, bool from_exit) {
  if (failure_) return;
  failure_ = ShellEnd{exit_code, signal};
  reason_ = std::move(reason);
  failure_from_exit_ = from_exit;
}

void Shell::kill_ranks() {
  if (kill_at_ || running() == 0) return;
  for (const Rank& r : ranks_) {
    if (!r.running) continue;
    ::kill(r.pid, SIGTERM);
    ::kill(r.pid, SIGCONT);  // a stopped rank must run to see its SIGTERM
  }
  // What the ranks started too: their process group is the shell's (the task's, when the shell
  // leads it as the shepherd starts it), and the shell ignores SIGTERM.
  if (::getpgrp() == ::getpid()) ::kill(0, SIGTERM);
  kill_at_ = Clock::now() + std::chrono::milliseconds(static_cast<long long>(o_.kill_grace * 1000));
}

ShellEnd Shell::finish() {
  for (Rank& r : ranks_) {
    if (r.out_fd >= 0) write_all(1, r.out_label->finish());
    if (r.err_fd >= 0) write_all(2, r.err_label->finish());
  }
  if (!failure_) return {};
  // As srun says which task failed; a lone task's exit status says it already.
  if (!failure_from_exit_ || layout_.ntasks() > 1)
    write_all(2, "trellis-shell: step " + name_ + ": " + reason_ + "\n");
  // The agent puts the reason in the exit report (the job's reason); without an agent (or when it
  // does not answer) the exit status alone is reported.
  if (ensure_channel()) {
    ExchangeMessage end;
    end.type = ExchangeType::kEnd;
    end.exit_code = failure_->exit_code;
    end.signal = failure_->signal;
    end.text = reason_;
    if (agent_->send(end)) {
      for (auto deadline = Clock::now() + kEndAckTimeout; Clock::now() < deadline;) {
        Result<ExchangeMessage> m = agent_->wait(kEndAckTimeout);
        if (!m || m->type == ExchangeType::kAck) break;
      }
    }
  }
  return *failure_;
}

}  // namespace

ShellEnd run_shell(const ShellOptions& options) {
  return Shell(options).run();
}

}  // namespace trellis
