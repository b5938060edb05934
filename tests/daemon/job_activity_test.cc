// Seed 002's global state detection on the agent's side (daemon/job_activity.h, proc_stat.h)
// and the job-side runtime (include/trellis/runtime.h), with real processes: forked children
// that spin or block, and trellis-runtime-probe, a C program using the runtime.
//
// Nothing here asserts how long something takes: conditions that depend on the scheduler are
// polled until they hold (failing after 10 s), and the rest follow from what the test waited for.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "../build_paths.h"
#include "daemon/job_activity.h"
#include "daemon/proc_stat.h"
#include "daemon_test_support.h"
#include "runtime/area_layout.h"
#include "trellis/runtime.h"

extern char** environ;

namespace trellis {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

using testing::eventually;

char state_of(pid_t pid) {
  Result<ProcStat> stat = read_proc_stat(pid);
  return stat ? stat->state : '?';
}

long long cpu_ticks_of(pid_t pid) {
  Result<ProcStat> stat = read_proc_stat(pid);
  return stat ? stat->cpu_ticks : -1;
}

// Stops `pid` with SIGSTOP, as the signal freezer does, and waits until /proc shows it stopped.
void stop(pid_t pid) {
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  ASSERT_TRUE(eventually([&] { return state_of(pid) == 'T'; }));
}

// A forked child running `body` (which does not return) in a process group: a new one led by
// the child (group 0), or `group`. Killed and reaped at scope exit.
class Child {
 public:
  Child(const std::function<void()>& body, pid_t group = 0) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, group);
      body();
      ::_exit(0);
    }
    if (pid_ > 0) ::setpgid(pid_, group == 0 ? pid_ : group);  // whichever runs first
  }
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::kill(pid_, SIGCONT);
    ::waitpid(pid_, nullptr, 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

void spin_forever() {
  volatile unsigned long spins = 0;
  for (;;) spins = spins + 1;
}

// Blocks in read() on `fd` (a pipe nobody writes until the test wants), then spins.
std::function<void()> read_then_spin(int fd) {
  return [fd] {
    char byte;
    while (::read(fd, &byte, 1) < 0 && errno == EINTR) {
    }
    spin_forever();
  };
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe(fds) == 0) read = fds[0], write = fds[1];
  }
  ~Pipe() {
    ::close(read);
    ::close(write);
  }
};

// A shared-memory name of this test process, unlinked at scope exit.
class AreaName {
 public:
  AreaName() {
    static int counter = 0;
    name_ = "/trellis-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    ::shm_unlink(name_.c_str());
  }
  ~AreaName() { ::shm_unlink(name_.c_str()); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// trellis-runtime-probe (tests/daemon/runtime_probe.c) with TRELLIS_RUNTIME_AREA = `area`
// ("" = unset), attaching at start when `attach`, in a new process group. Commands go to its
// stdin; its answers are read a line at a time.
class Probe {
 public:
  explicit Probe(const std::string& area, bool attach = true) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, TRELLIS_RUNTIME_AREA_ENV "=", sizeof TRELLIS_RUNTIME_AREA_ENV) != 0)
        env_strings.push_back(*e);
    }
    if (!area.empty()) env_strings.push_back(std::string(TRELLIS_RUNTIME_AREA_ENV "=") + area);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string program = TRELLIS_RUNTIME_PROBE_BINARY, first = "attach";
    std::vector<char*> argv{program.data()};
    if (attach) argv.push_back(first.data());
    argv.push_back(nullptr);

    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
      ::execve(program.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    if (pid_ > 0) ::setpgid(pid_, pid_);
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Probe() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);  // with a child it forked
      ::kill(-pid_, SIGCONT);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(to_);
    ::close(from_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  pid_t pid() const { return pid_; }
  void send(char command) { ASSERT_EQ(::write(to_, &command, 1), 1); }
  // The next line it printed, without the newline; "" after 10 s or at end of output.
  std::string line() {
    auto deadline = steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[256];
      ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

// A runtime area made by hand (as a foreign or damaged segment would be): `size` bytes, and
// when `initialize` a valid header.
class HandMadeArea {
 public:
  HandMadeArea(const std::string& name, size_t size, bool initialize) {
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0) return;
    if (::ftruncate(fd, static_cast<off_t>(size)) == 0 && size >= TRELLIS_AREA_SIZE) {
      void* mapped = ::mmap(nullptr, TRELLIS_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mapped != MAP_FAILED) area_ = static_cast<trellis_area*>(mapped);
    }
    ::close(fd);
    if (area_ != nullptr && initialize) {
      area_->version = TRELLIS_AREA_VERSION;
      area_->slot_count = TRELLIS_AREA_SLOTS;
      area_->slot_size = sizeof(trellis_area_slot);
      area_->magic = TRELLIS_AREA_MAGIC;
    }
  }
  ~HandMadeArea() {
    if (area_ != nullptr) ::munmap(area_, TRELLIS_AREA_SIZE);
  }
  HandMadeArea(const HandMadeArea&) = delete;
  HandMadeArea& operator=(const HandMadeArea&) = delete;
  trellis_area* operator->() const { return area_; }
  bool ok() const { return area_ != nullptr; }
  void set_slot(int i, pid_t pid, long long start_time, int message_waits, int input_waits) {
    area_->slots[i].message_waits = message_waits;
    area_->slots[i].input_waits = input_waits;
    area_->slots[i].start_time = start_time;
    area_->slots[i].pid = pid;
  }

 private:
  trellis_area* area_ = nullptr;
};

// A pid that no process has: a child that has been reaped.
pid_t dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::string attach_answer(int rc, int error) {
  return "attach " + std::to_string(rc) + " " + std::to_string(error);
}

// --- /proc ---------------------------------------------------------------------------------

TEST(ProcStat, ParsesANameWithParenthesesAndSpaces) {
  Result<ProcStat> stat = parse_proc_stat(
      "4242 (a) (b c) R 1 4243 4244 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 3 0 987654 1000 100 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->name, "a) (b c");
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->parent, 1);
  EXPECT_EQ(stat->process_group, 4243);
  EXPECT_EQ(stat->cpu_ticks, 12);
  EXPECT_EQ(stat->threads, 3);
  EXPECT_EQ(stat->start_time, 987654);

  // The same from the kernel: a process that names itself so.
  Pipe never;
  Child child([&] {
    ::prctl(PR_SET_NAME, "x) (y z) R 1");
    read_then_spin(never.read)();
  });
  ASSERT_TRUE(eventually([&] {
    Result<ProcStat> s = read_proc_stat(child.pid());
    return s && s->name == "x) (y z) R 1" && s->state == 'S';
  }));
  Result<ProcStat> real = read_proc_stat(child.pid());
  ASSERT_TRUE(real);
  EXPECT_EQ(real->pid, child.pid());
  EXPECT_EQ(real->parent, ::getpid());
  EXPECT_EQ(real->process_group, child.pid());
  EXPECT_EQ(real->threads, 1);
  Result<ProcStat> self = read_proc_stat(::getpid());
  ASSERT_TRUE(self);
  EXPECT_GE(real->start_time, self->start_time);
}

TEST(ProcStat, RefusesMalformedLinesAndMissingProcesses) {
  for (const char* text :
       {"", "12", "12 (x", "x (y) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
        "12 (x) R 1 2", "12 (x) RR 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
        "12 (x) R 1 2 3 4 5 6 7 8 9 10 z 12 13 14 15 16 17 18 19"}) {
    Result<ProcStat> stat = parse_proc_stat(text);
    EXPECT_FALSE(stat) << text;
  }
  Result<ProcStat> gone = read_proc_stat(dead_pid());
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Error::Code::kNotFound);
  EXPECT_FALSE(read_proc_stat(0));
  EXPECT_FALSE(read_proc_stat(-1));
}

TEST(ProcStat, ListsAGroupsProcessesAndAProcessesThreads) {
  Pipe never;
  Child leader(read_then_spin(never.read));
  Child member1(read_then_spin(never.read), leader.pid());
  Child member2(read_then_spin(never.read), leader.pid());
  Child stranger(read_then_spin(never.read));
  std::vector<pid_t> expected{leader.pid(), member1.pid(), member2.pid()};
  std::sort(expected.begin(), expected.end());
  EXPECT_TRUE(eventually([&] { return processes_in_group(leader.pid()) == expected; }));
  EXPECT_TRUE(processes_in_group(0).empty());
  EXPECT_TRUE(processes_in_group(dead_pid()).empty());

  std::latch done(1);
  std::thread a([&] { done.wait(); }), b([&] { done.wait(); });
  std::vector<ProcStat> threads = read_thread_stats(::getpid());
  done.count_down();
  a.join();
  b.join();
  ASSERT_GE(threads.size(), 3u);
  bool main_thread = false;  // its id is the pid
  for (size_t i = 0; i < threads.size(); ++i) {
    main_thread = main_thread || threads[i].pid == ::getpid();
    if (i > 0) {
      EXPECT_LT(threads[i - 1].pid, threads[i].pid);
    }
  }
  EXPECT_TRUE(main_thread);
  EXPECT_TRUE(read_thread_stats(dead_pid()).empty());
}

// --- ActivityMonitor from /proc ---------------------------------------------------------------

TEST(JobActivity, ACpuBoundProcessIsRunning) {
  Child spinner(spin_forever);
  ActivityMonitor monitor;
  for (int i = 0; i < 5; ++i) {  // runnable or using CPU at every sample
    TaskActivity a = monitor.sample("t", spinner.pid(), "");
    EXPECT_EQ(a.processes, 1);
    EXPECT_EQ(a.running, 1);
    EXPECT_EQ(a.waiting_input + a.waiting_message, 0);
    EXPECT_FALSE(a.from_runtime);
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(eventually([&] { return monitor.sample("t", spinner.pid(), "").cpu_ticks > 0; }));
}

TEST(JobActivity, AProcessBlockedInReadIsIdleFromTheSecondSample) {
  Pipe input;
  Child reader(read_then_spin(input.read));
  ActivityMonitor monitor;
  TaskActivity first = monitor.sample("t", reader.pid(), "");
  EXPECT_EQ(first.processes, 1);
  EXPECT_EQ(first.running, 1);  // nothing to compare with yet
  TaskActivity a;
  ASSERT_TRUE(eventually([&] {
    a = monitor.sample("t", reader.pid(), "");
    return a.waiting_input == 1;
  }));
  EXPECT_EQ(a.processes, 1);
  EXPECT_EQ(a.running, 0);
  EXPECT_EQ(a.waiting_message, 0);
  EXPECT_EQ(a.cpu_ticks, 0);
  EXPECT_TRUE(a.idle());
  EXPECT_EQ(global_state({a}), GlobalState::kIdle);

  // Input arrives: it wakes and computes.
  ASSERT_EQ(::write(input.write, "x", 1), 1);
  EXPECT_TRUE(eventually([&] { return monitor.sample("t", reader.pid(), "").running == 1; }));

  // Forgetting the task starts over: the next sample is a first one.
  Pipe never;
  Child idle(read_then_spin(never.read));
  ASSERT_TRUE(eventually([&] { return monitor.sample("u", idle.pid(), "").waiting_input == 1; }));
  monitor.forget("u");
  EXPECT_EQ(monitor.sample("u", idle.pid(), "").running, 1);
}

// The agent samples right after freezing: a process stopped while it was spinning used CPU in
// the slice the sample covers, so it is running even though all /proc shows now is 'T'.
TEST(JobActivity, AProcessFrozenWhileSpinningIsRunningForTheSliceItRan) {
  Child spinner(spin_forever);
  ActivityMonitor monitor;
  EXPECT_EQ(monitor.sample("t", spinner.pid(), "").running, 1);
  long long after_first = cpu_ticks_of(spinner.pid());
  ASSERT_TRUE(eventually([&] { return cpu_ticks_of(spinner.pid()) > after_first; }));
  stop(spinner.pid());
  TaskActivity a = monitor.sample("t", spinner.pid(), "");
  EXPECT_EQ(a.running, 1);
  EXPECT_EQ(a.waiting_input, 0);
  EXPECT_GT(a.cpu_ticks, 0);

  // Sampled again with nothing run since: no CPU time, stopped: idle (sample once per slice).
  TaskActivity again = monitor.sample("t", spinner.pid(), "");
  EXPECT_EQ(again.running, 0);
  EXPECT_EQ(again.waiting_input, 1);

  // Thawed for another slice and frozen again: running again.
  long long frozen_at = cpu_ticks_of(spinner.pid());
  ASSERT_EQ(::kill(spinner.pid(), SIGCONT), 0);
  ASSERT_TRUE(eventually([&] { return cpu_ticks_of(spinner.pid()) > frozen_at; }));
  stop(spinner.pid());
  EXPECT_EQ(monitor.sample("t", spinner.pid(), "").running, 1);
}

TEST(JobActivity, CountsEveryProcessOfTheGroupAndNothingElse) {
  Pipe never;
  Child leader(spin_forever);
  Child reader1(read_then_spin(never.read), leader.pid());
  Child reader2(read_then_spin(never.read), leader.pid());
  Child zombie([] {}, leader.pid());  // exits at once; not reaped until the end: a zombie
  Child stranger(read_then_spin(never.read));
  ASSERT_TRUE(eventually([&] { return state_of(zombie.pid()) == 'Z'; }));
  ActivityMonitor monitor;
  TaskActivity a;
  ASSERT_TRUE(eventually([&] {
    a = monitor.sample("t", leader.pid(), "");
    return a.waiting_input == 2;
  }));
  EXPECT_EQ(a.processes, 3);
  EXPECT_EQ(a.running, 1);
  EXPECT_EQ(a.waiting_message, 0);
  EXPECT_FALSE(a.idle());
  EXPECT_EQ(global_state({a}), GlobalState::kRunning);

  // By pid list (a freezer cgroup's): pids that do not exist and repeated ones are skipped.
  ActivityMonitor by_pids;
  std::vector<pid_t> pids{reader1.pid(), dead_pid(), reader2.pid(), reader1.pid()};
  ASSERT_TRUE(eventually([&] {
    a = by_pids.sample("t", pids, "");
    return a.waiting_input == 2;
  }));
  EXPECT_EQ(a.processes, 2);
}

TEST(JobActivity, GlobalStateCombinesTheNodes) {
  TaskActivity running{.processes = 2, .running = 1, .waiting_input = 1};
  TaskActivity input{.processes = 2, .waiting_input = 1, .waiting_message = 1};
  TaskActivity messages{.processes = 3, .waiting_message = 3, .from_runtime = true};
  TaskActivity empty;
  EXPECT_EQ(global_state({}), GlobalState::kRunning);
  EXPECT_EQ(global_state({empty}), GlobalState::kRunning);
  EXPECT_EQ(global_state({messages, messages, empty}), GlobalState::kStopped);
  EXPECT_EQ(global_state({messages, input}), GlobalState::kIdle);
  EXPECT_EQ(global_state({messages, running}), GlobalState::kRunning);
  EXPECT_EQ(global_state({input, input}), GlobalState::kIdle);
  EXPECT_TRUE(messages.waiting_for_messages());
  EXPECT_FALSE(input.waiting_for_messages());
  EXPECT_FALSE(empty.idle());
}

TEST(JobActivity, AreaNamesAreValidAndDistinct) {
  EXPECT_EQ(runtime_area_name(12, 1, "n3"), "/trellis-12.1.n3");
  EXPECT_EQ(runtime_area_name(7, 2, "a/b c_d"), "/trellis-7.2.a_2Fb_20c_5Fd");
  EXPECT_NE(runtime_area_name(7, 2, "a_b"), runtime_area_name(7, 2, "a/b"));
  std::string long_a = runtime_area_name(1, 1, std::string(300, 'a') + "x");
  std::string long_b = runtime_area_name(1, 1, std::string(300, 'a') + "y");
  EXPECT_NE(long_a, long_b);
  EXPECT_LE(long_a.size(), 200u);
  for (const std::string& name : {long_a, runtime_area_name(1, 1, "/../x\n")}) {
    EXPECT_EQ(name.find('/', 1), std::string::npos) << name;
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << name << ": " << std::strerror(errno);
    ::close(fd);
    EXPECT_TRUE(remove_runtime_area(name));
    EXPECT_LT(::shm_open(name.c_str(), O_RDONLY, 0), 0);  // gone
    EXPECT_TRUE(remove_runtime_area(name));               // and removing again is fine
  }
  EXPECT_TRUE(remove_runtime_area(""));
}

// --- the runtime area ---------------------------------------------------------------------

// The ordering rule: the wait is visible while the process blocks (also once it is frozen),
// and gone once it has woken up and computes.
TEST(Runtime, AMessageWaitIsSeenWhileBlockedAndClearedAfterWaking) {
  AreaName area;
  Probe probe(area.name());
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  probe.send('m');
  ASSERT_EQ(probe.line(), "begin");
  ActivityMonitor monitor;
  TaskActivity a = monitor.sample("t", probe.pid(), area.name());  // a first sample, yet waiting
  EXPECT_EQ(a.processes, 1);
  EXPECT_EQ(a.waiting_message, 1);
  EXPECT_EQ(a.running, 0);
  EXPECT_TRUE(a.from_runtime);
  EXPECT_TRUE(a.waiting_for_messages());
  EXPECT_EQ(global_state({a}), GlobalState::kStopped);

  ASSERT_TRUE(eventually([&] { return state_of(probe.pid()) == 'S'; }));  // blocked in read
  stop(probe.pid());
  a = monitor.sample("t", probe.pid(), area.name());
  EXPECT_EQ(a.waiting_message, 1);
  ASSERT_EQ(::kill(probe.pid(), SIGCONT), 0);

  probe.send('x');  // the message
  ASSERT_EQ(probe.line(), "end");
  probe.send('s');  // and it computes
  ASSERT_TRUE(eventually([&] {
    a = monitor.sample("t", probe.pid(), area.name());
    return a.running == 1;
  }));
  EXPECT_EQ(a.waiting_message, 0);
  EXPECT_TRUE(a.from_runtime);
  Result<RuntimeArea> read = read_runtime_area(area.name());
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->slots.size(), 1u);
  EXPECT_EQ(read->slots[0].pid, probe.pid());
  EXPECT_EQ(read->slots[0].message_waits, 0);
  EXPECT_EQ(read->owner, ::geteuid());
}

// A monitor that found a task's area missing (it remembers that, daemon/absent_names.h) reads
// it once a process of the task has made it.
TEST(Runtime, AnAreaMadeAfterASampleFoundNoneIsReadAtTheNextSample) {
  AreaName area;
  ActivityMonitor monitor;
  Probe before("", /*attach=*/false);  // a process of the task, before any area exists
  EXPECT_FALSE(monitor.sample("t", before.pid(), area.name()).from_runtime);
  EXPECT_FALSE(monitor.sample("t", before.pid(), area.name()).from_runtime);  // known missing

  Probe probe(area.name());  // attaches: makes the area
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  probe.send('m');
  ASSERT_EQ(probe.line(), "begin");
  TaskActivity a = monitor.sample("u", probe.pid(), area.name());
  EXPECT_TRUE(a.from_runtime);
  EXPECT_EQ(a.waiting_message, 1);
}

TEST(Runtime, AnInputWaitIsIdleAtOnce) {
  AreaName area;
  Probe probe(area.name());
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  probe.send('i');
  ASSERT_EQ(probe.line(), "begin");
  ActivityMonitor monitor;
  TaskActivity a = monitor.sample("t", probe.pid(), area.name());
  EXPECT_EQ(a.waiting_input, 1);
  EXPECT_EQ(a.running, 0);
  EXPECT_TRUE(a.from_runtime);
  EXPECT_TRUE(a.idle());
  EXPECT_EQ(global_state({a}), GlobalState::kIdle);
}

TEST(Runtime, AnAttachedProcessWithNoWaitOpenIsJudgedFromProc) {
  AreaName area;
  Probe probe(area.name());  // blocks reading commands, announcing nothing
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  ActivityMonitor monitor;
  EXPECT_EQ(monitor.sample("t", probe.pid(), area.name()).running, 1);
  TaskActivity a;
  ASSERT_TRUE(eventually([&] {
    a = monitor.sample("t", probe.pid(), area.name());
    return a.waiting_input == 1;
  }));
  EXPECT_TRUE(a.from_runtime);
  EXPECT_EQ(a.waiting_message, 0);
}

TEST(Runtime, SlotsOfDeadProcessesAndReusedPidsAreIgnored) {
  AreaName area;
  {
    Probe dying(area.name());
    ASSERT_EQ(dying.line(), attach_answer(0, 0));
    dying.send('m');
    ASSERT_EQ(dying.line(), "begin");
  }  // killed while waiting: its slot stays, announcing a wait
  Result<RuntimeArea> read = read_runtime_area(area.name());
  ASSERT_TRUE(read);
  ASSERT_EQ(read->slots.size(), 1u);
  EXPECT_EQ(read->slots[0].message_waits, 1);

  // A process that is not in the area, whose pid a hand-made slot claims with another start
  // time (as if an earlier process with its pid had registered): judged from /proc.
  Pipe never;
  Child reader(read_then_spin(never.read));
  ASSERT_TRUE(eventually([&] { return state_of(reader.pid()) == 'S'; }));
  HandMadeArea hand(area.name(), TRELLIS_AREA_SIZE, false);  // the probe's, already initialized
  ASSERT_TRUE(hand.ok());
  Result<ProcStat> stat = read_proc_stat(reader.pid());
  ASSERT_TRUE(stat);
  hand.set_slot(200, reader.pid(), stat->start_time + 1, 1, 0);
  ActivityMonitor monitor;
  TaskActivity a;
  ASSERT_TRUE(eventually([&] {
    a = monitor.sample("t", reader.pid(), area.name());
    return a.waiting_input == 1;
  }));
  EXPECT_EQ(a.waiting_message, 0);
  EXPECT_FALSE(a.from_runtime);
  // The same slot with its real start time is believed (so the slot above was well formed).
  hand.set_slot(200, reader.pid(), stat->start_time, 1, 0);
  a = monitor.sample("t", reader.pid(), area.name());
  EXPECT_EQ(a.waiting_message, 1);
  EXPECT_TRUE(a.from_runtime);
}

TEST(Runtime, AttachReusesSlotsOfDeadProcessesAndFailsWhenAllAreLive) {
  AreaName area;
  HandMadeArea hand(area.name(), TRELLIS_AREA_SIZE, true);
  ASSERT_TRUE(hand.ok());
  pid_t dead = dead_pid();
  for (int i = 0; i < TRELLIS_AREA_SLOTS; ++i) hand.set_slot(i, dead, 1, 1, 0);
  {
    Probe probe(area.name());
    ASSERT_EQ(probe.line(), attach_answer(0, 0));
    probe.send('m');
    ASSERT_EQ(probe.line(), "begin");
    ActivityMonitor monitor;
    EXPECT_EQ(monitor.sample("t", probe.pid(), area.name()).waiting_message, 1);
    Result<RuntimeArea> read = read_runtime_area(area.name());
    ASSERT_TRUE(read);
    int own = 0;
    for (const RuntimeSlot& slot : read->slots) own += slot.pid == probe.pid();
    EXPECT_EQ(own, 1);
  }
  Result<ProcStat> self = read_proc_stat(::getpid());
  ASSERT_TRUE(self);
  for (int i = 0; i < TRELLIS_AREA_SLOTS; ++i) hand.set_slot(i, ::getpid(), self->start_time, 0, 0);
  Probe probe(area.name());
  EXPECT_EQ(probe.line(), attach_answer(-1, ENOSPC));
}

TEST(Runtime, ForeignOrDamagedSegmentsAreIgnored) {
  struct Case {
    const char* what;
    size_t size;
    bool initialize;
    std::function<void(HandMadeArea&)> damage;
  };
  std::vector<Case> cases{
      {"wrong magic", TRELLIS_AREA_SIZE, true, [](HandMadeArea& a) { a->magic = 0x12345678; }},
      {"wrong version", TRELLIS_AREA_SIZE, true, [](HandMadeArea& a) { a->version = 99; }},
      {"wrong slot count", TRELLIS_AREA_SIZE, true, [](HandMadeArea& a) { a->slot_count = 1; }},
      {"too small", 100, false, nullptr},
      {"too big", TRELLIS_AREA_SIZE + 4096, true, nullptr},
  };
  Pipe never;
  Child reader(read_then_spin(never.read));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    AreaName area;
    HandMadeArea hand(area.name(), c.size, c.initialize);
    if (c.damage) c.damage(hand);
    for (int i = 0; c.initialize && i < TRELLIS_AREA_SLOTS; ++i)
      hand.set_slot(i, reader.pid(), read_proc_stat(reader.pid())->start_time, 1, 0);
    Result<RuntimeArea> read = read_runtime_area(area.name());
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, Error::Code::kInvalidArgument);
    ActivityMonitor monitor;
    TaskActivity a;
    ASSERT_TRUE(eventually([&] {
      a = monitor.sample("t", reader.pid(), area.name());
      return a.waiting_input == 1;
    }));
    EXPECT_EQ(a.waiting_message, 0);
    EXPECT_FALSE(a.from_runtime);
    Probe probe(area.name());
    EXPECT_EQ(probe.line(), attach_answer(-1, EPROTO));
  }

  // A FIFO where the segment should be must not block the agent; a missing segment is kNotFound.
  AreaName fifo;
  ASSERT_EQ(::mkfifo(("/dev/shm" + fifo.name()).c_str(), 0600), 0);
  Result<RuntimeArea> read = read_runtime_area(fifo.name());
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, Error::Code::kInvalidArgument);
  AreaName missing;
  read = read_runtime_area(missing.name());
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, Error::Code::kNotFound);
  EXPECT_EQ(ActivityMonitor().sample("t", reader.pid(), missing.name()).processes, 1);
}

TEST(Runtime, AttachNeedsTheVariableAndWaitsWithoutItAreNoOps) {
  Probe probe("");
  EXPECT_EQ(probe.line(), attach_answer(-1, ENOENT));
  probe.send('m');
  EXPECT_EQ(probe.line(), "begin");
  probe.send('x');
  EXPECT_EQ(probe.line(), "end");

  // Called directly from C++ (the header's extern "C"), without the variable.
  ::unsetenv(TRELLIS_RUNTIME_AREA_ENV);
  errno = 0;
  EXPECT_EQ(trellis_runtime_attach(), -1);
  EXPECT_EQ(errno, ENOENT);
  trellis_wait_begin(TRELLIS_WAIT_MESSAGE);
  trellis_wait_end(TRELLIS_WAIT_MESSAGE);
  trellis_runtime_detach();
}

TEST(Runtime, AttachIsIdempotentAndDetachFreesTheSlot) {
  AreaName area;
  Probe probe(area.name());
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  probe.send('a');
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  Result<RuntimeArea> read = read_runtime_area(area.name());
  ASSERT_TRUE(read);
  ASSERT_EQ(read->slots.size(), 1u);
  EXPECT_EQ(read->slots[0].pid, probe.pid());
  Result<ProcStat> stat = read_proc_stat(probe.pid());
  ASSERT_TRUE(stat);
  EXPECT_EQ(read->slots[0].start_time, stat->start_time);

  probe.send('d');
  ASSERT_EQ(probe.line(), "detached");
  read = read_runtime_area(area.name());
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->slots.empty());
  probe.send('m');  // detached: announces nothing
  ASSERT_EQ(probe.line(), "begin");
  ActivityMonitor monitor;
  TaskActivity a = monitor.sample("t", probe.pid(), area.name());
  EXPECT_EQ(a.waiting_message, 0);
  EXPECT_FALSE(a.from_runtime);
  probe.send('x');
  ASSERT_EQ(probe.line(), "end");

  probe.send('a');
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  read = read_runtime_area(area.name());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->slots.size(), 1u);
}

// A forked child inherits the parent's mapping and slot pointer, but is not attached until it
// attaches itself: its waits must not land in the parent's slot.
TEST(Runtime, AForkedChildIsNotTheParent) {
  AreaName area;
  Probe probe(area.name());
  ASSERT_EQ(probe.line(), attach_answer(0, 0));
  probe.send('f');
  std::string first = probe.line(), second = probe.line();
  if (first.rfind("child", 0) == 0) std::swap(first, second);
  ASSERT_EQ(first.rfind("forked ", 0), 0u) << first;
  ASSERT_EQ(second, "child 0 0");
  pid_t child = std::stoi(first.substr(7));

  Result<RuntimeArea> read = read_runtime_area(area.name());
  ASSERT_TRUE(read);
  ASSERT_EQ(read->slots.size(), 2u);
  for (const RuntimeSlot& slot : read->slots) {
    if (slot.pid == probe.pid()) {
      EXPECT_EQ(slot.message_waits + slot.input_waits, 0);
    } else {
      EXPECT_EQ(slot.pid, child);
      EXPECT_EQ(slot.message_waits, 1);
      EXPECT_EQ(slot.input_waits, 0);
    }
  }
  ActivityMonitor monitor;
  TaskActivity a = monitor.sample("t", probe.pid(), area.name());
  EXPECT_EQ(a.processes, 2);
  EXPECT_EQ(a.waiting_message, 1);  // the child
  EXPECT_EQ(a.running, 1);          // the parent, seen for the first time
}

}  // namespace
}  // namespace trellis
