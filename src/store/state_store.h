// StateStore: everything the live system knows, kept in one transactional database (seed 003's
// allocator database). Controllers keep no state that is not here, so any controller can replace
// another after a crash, and the read path (showmesh, queue --store, the dashboard) reads it with
// no daemon running.
//
// Each method is one transaction: it happens whole or not at all. A submission is acknowledged
// only after add_job() returned its id. A node can hold at most one exclusive allocation; the
// database refuses a second one with a constraint, not only this code.
//
//   Result<std::unique_ptr<StateStore>> store = open_store("sqlite:/var/lib/trellis/state.db");
//   (*store)->init_cluster("torus:4x4x4", names);
//   Result<JobId> id = (*store)->add_job(job, now);
//
// Backends (store/sql_store.h): SQLite, the embedded default, and PostgreSQL, which several
// controllers share.
// open_store() picks one from the URL. All methods may be called from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounts.h"
#include "core/job.h"
#include "core/node_grant.h"
#include "core/node_set.h"
#include "core/request.h"
#include "core/resource_request.h"
#include "core/result.h"
#include "core/task_request.h"
#include "core/task_usage.h"

namespace trellis {

// Slurm's job states and letters (peers-and-conventions.md).
enum class JobState {
  kPending,      // PD
  kRunning,      // R
  kSuspended,    // S
  kCompleting,   // CG: asked to stop; its processes are not all gone yet
  kCompleted,    // CD
  kFailed,       // F
  kCancelled,    // CA
  kTimeout,      // TO
  kNodeFail,     // NF
  kOutOfMemory,  // OOM: a task went over its memory limit and the kernel killed it
};
std::string_view state_letter(JobState state);  // "PD"
std::string_view state_name(JobState state);    // "PENDING"
// Accepts a letter or a name, any case ("pd", "Running").
Result<JobState> parse_job_state(std::string_view text);
// True for the states a job never leaves (CD F CA TO NF OOM).
bool is_final(JobState state);
// True for the states in which a job's attempt holds its nodes (R S CG).
inline bool holds_nodes(JobState state) {
  return state == JobState::kRunning || state == JobState::kSuspended ||
         state == JobState::kCompleting;
}

// Why a job that holds nodes is being stopped (stop_job()); it ends when its processes are gone.
// kFailed: one of its tasks failed (a rank exited non-zero, was killed, or aborted), and the
// others are being killed; the job's reason, set when it was stopped, names that task.
// kOutOfMemory: the same for a task whose job went over its memory limit on a node (the kernel's
// OOM killer ended a process of it there); it ends OUT_OF_MEMORY.
enum class StopCause { kNone, kCancel, kTimeout, kFailed, kOutOfMemory };

// A job as the store keeps it: what was asked, and what has happened to it.
struct StoredJob {
  JobId id = 0;  // given by add_job()
  int uid = -1;
  int gid = -1;
  std::string user;  // the uid's name when it was submitted
  std::string name;
  Request request;
  bool share = false;
  Seconds time_limit = 0;
  std::vector<std::string> argv;
  std::string cwd;
  std::string output;  // stdout path; "%j" stands for the job id (replaced at launch)
  std::string error;   // stderr path; empty = the output file
  std::map<std::string, std::string> env;
  TaskRequest tasks;          // its tasks (ranks): how many, where, how they wire up
  ResourceRequest resources;  // cores per task, memory, GPUs, sharing, features

  JobState state = JobState::kPending;
  std::string reason;  // why it waits, or why it ended
  Seconds submit_time = 0;
  Seconds start_time = 0;       // of the current attempt; 0 until started
  Seconds end_time = 0;         // 0 until final
  Seconds expected_start = 0;   // a pending job's promised start (0: none)
  int attempt = 0;              // starts so far; a requeue makes the next start attempt + 1
  std::vector<NodeId> nodes;    // while running (and after, for the record), ascending
  std::vector<int> box_anchor;  // when the allocator placed a box: its anchor and extents
  Shape box_extents;            // (both empty otherwise)
  // On nodes with an inventory: what it holds on each of its nodes (core/node_grant.h), while
  // it runs; empty on featureless nodes.
  std::vector<NodeGrant> grants;
  int exit_code = 0;
  int signal = 0;
  StopCause stop = StopCause::kNone;  // of the current attempt
  // Time frozen (switched out by a gang policy, or suspended), as recorded at its end; while it
  // runs the controller keeps the count.
  Seconds seconds_frozen = 0;
  // A pending job that is held (not scheduled until released) says why; "" when it is not.
  std::string hold;
  int node_failures = 0;  // requeues after a node it ran on failed

  // Slurm's job model (sbatch).
  std::string partition;   // the partition's name
  JobId array_job = 0;     // an array task: the array's job id (its first task's id); 0 = none
  int array_task = -1;     // the task's id in its array; -1 = not an array task
  int array_limit = 0;     // at most this many tasks of the array at once; 0 = no limit
  std::string dependency;  // core/dependency.h's text; "" = none
  bool kill_on_invalid_dep = false;  // cancel it when the dependency can never be satisfied
  JobId script_id = 0;  // the stored batch script it runs (job_script()); 0 = not a batch job
  // The controller that places it while it is pending, under concurrent allocation (the one that
  // took the submission, or one that adopted it: adopt_jobs()); "" = whichever schedules.
  std::string owner;
  // The account it is charged to (core/accounts.h; "" = none: a site without accounts) and its
  // QOS ("" = none).
  std::string account;
  std::string qos;
  // add_job() and add_array() only: the batch script to store with the job (script_id is then
  // set by the store). Listings leave it empty: job_script() reads it.
  std::string script;
};

// A node as the store keeps it. Whether it is allocated follows from the allocations.
struct StoredNode {
  NodeId id = 0;
  std::string name;
  bool up = false;       // its agent registered and keeps heartbeating
  bool drained = false;  // taken out of service by an administrator
  std::string agent;     // host:port of the agent serving it
  Seconds last_heartbeat = 0;
  std::string reason;       // why it is down or drained
  std::vector<JobId> jobs;  // the jobs holding it now
};

// One line of the append-only event log.
struct StoredEvent {
  int64_t seq = 0;  // increasing, gap-free within one store
  Seconds time = 0;
  std::string kind;  // submit, start, end, requeue, cancel, node_up, node_down, drain, resume, ...
  JobId job = 0;     // 0 when not about a job
  // "" when not about nodes; else the nodes as a hostlist ("n5", "n[0-63]"): a change to many
  // nodes at once is one event.
  std::string node;
  std::string detail;
};

// Which jobs list_jobs() returns. Empty lists mean "any".
struct JobQuery {
  // Jobs by id; the id of an array (its first task's) names every task of the array, unless
  // exact_ids.
  std::vector<JobId> ids;
  bool exact_ids = false;
  std::vector<JobState> states;
  std::optional<int> uid;
  bool only_active = false;  // only PD, R, S, CG
  // Accounting windows: jobs submitted by `submitted_by` and not ended before `not_ended_before`
  // (a job that has not ended counts as ending later).
  std::optional<Seconds> submitted_by;
  std::optional<Seconds> not_ended_before;
  std::vector<std::string> names;
  std::vector<std::string> partitions;
};

// A start decided by a pass: the job runs (again) on `nodes` as attempt `attempt`.
struct JobStart {
  JobId job = 0;
  int attempt = 0;  // must be the stored attempt + 1
  std::vector<NodeId> nodes;
  // On nodes with an inventory: what it takes on each (one grant per node, any order). A job
  // that shares its nodes (`shares_nodes`) holds them beside other such jobs: its allocations are
  // not exclusive, and the scheduler, not the store, keeps its cores and GPUs apart.
  std::vector<NodeGrant> grants;
  bool shares_nodes = false;
  std::vector<int> box_anchor;  // empty when no box
  Shape box_extents;
};

// What a pending job waits for, as the last pass saw it.
struct PendingNote {
  JobId job = 0;
  std::string reason;
  Seconds expected_start = 0;
};

// Everything one scheduling pass decided, committed in one transaction.
struct PassCommit {
  std::vector<JobStart> starts;
  std::vector<PendingNote> notes;  // only the pending jobs whose note changed
  // The scheduling core's own state that the jobs and allocations do not hold (a batch
  // policy's reservations), as an opaque text; kept in one slot, replaced by each pass.
  std::optional<std::string> core_state;
  // When set, the pass is refused whole (kDoesNotFitNow) unless this holder has the scheduler
  // lease (hold_lease()): a controller that lost the lease while it decided commits nothing.
  std::string scheduler;
  // false: any start that cannot be made (a node held, the job no longer pending on that
  // attempt) refuses the whole pass (kDoesNotFitNow). true (concurrent allocators, each deciding
  // on its own snapshot): such starts are left out and named in the outcome, the others made.
  bool partial = false;
};

// What apply_pass() did not do.
struct PassOutcome {
  std::vector<JobId> refused;        // starts left out (partial passes only), in the pass's order
  std::vector<std::string> reasons;  // why, one per refused start ("node 5 (n5) is held by job 3")
};

// How a job ended (or stopped for a requeue).
struct JobEnd {
  JobId job = 0;
  int attempt = 0;  // the attempt that ended; a report for another attempt changes nothing
  JobState state = JobState::kCompleted;  // a final state, or kPending for a requeue
  int exit_code = 0;
  int signal = 0;
  std::string reason;
  // A requeue (state kPending) because a node failed: counted in the job's node_failures.
  bool node_failure = false;
  // A requeue that also holds the job (it is not scheduled until released): why. "" = not held.
  std::string hold;
};

// Where the store is: its version() and the seq of its last event (0: none).
struct StoreHead {
  int64_t version = 0;
  int64_t last_event = 0;
};

// What a cache at a given event must read to catch up: where the store is now, and the events
// after that one (at most the limit asked for, oldest first).
struct StoreChanges {
  StoreHead head;
  std::vector<StoredEvent> events;
};

// The jobs adopt_jobs() moved to a controller: sorted, each list by id.
struct AdoptedJobs {
  std::vector<JobId> pending;  // to place
  std::vector<JobId> holding;  // started (R, S or CG): to launch again, a no-op where it runs
};

// One node's processes of a job attempt ended (an agent's report).
// A process that an agent says is running, when it registers.
struct RunningTask {
  JobId job = 0;
  int attempt = 0;
  std::string node;
  bool operator==(const RunningTask&) const = default;
};

struct TaskExit {
  JobId job = 0;
  int attempt = 0;
  NodeId node = 0;
  int exit_code = 0;
  int signal = 0;
  std::optional<TaskUsage> usage;  // what its processes used there, when the agent knows
};

// A job step: a command run on some of a running job's nodes, with its own tasks (`trellis run`
// / srun inside the job). A command job's own command is its step 0, which the job's row holds;
// the steps table holds the steps a job launches itself (1, 2, ... in a command job; 0, 1, ... in
// a batch job, whose script is the "batch" step). Each runs while its job's attempt runs.
struct StoredStep {
  JobId job = 0;
  int attempt = 0;
  int step = 0;  // given by add_step()
  std::vector<std::string> argv;
  std::vector<NodeId> nodes;  // a subset of the job's, ascending
  TaskRequest tasks;
  int ntasks = 0;
  JobState state = JobState::kRunning;  // R, CG; then CD, F or CA
  StopCause stop = StopCause::kNone;
  std::string reason;
  int exit_code = 0;
  int signal = 0;
  Seconds start_time = 0;
  Seconds end_time = 0;
};

// One node's tasks of a step ended (an agent's report).
struct StepExit {
  JobId job = 0;
  int attempt = 0;
  int step = 0;
  NodeId node = 0;
  int exit_code = 0;
  int signal = 0;
  std::string reason;  // why it failed there, as its job shell said ("" = it did not say)
  std::optional<TaskUsage> usage;  // what its processes used there, when the agent knows
};

// How a step ended: CD (every node 0), F (a failure: the first one's reason), CA (cancelled, or
// its job ended first).
struct StepEnd {
  JobId job = 0;
  int attempt = 0;
  int step = 0;
  JobState state = JobState::kCompleted;
  int exit_code = 0;
  int signal = 0;
  std::string reason;
};

// How a job whose processes are all gone ends (the end rule), from why it was stopped and what its
// processes returned (the highest exit code; a signal if one was killed by one), and the reason it
// was given when it was stopped (`stopped_reason`, "" when it was not):
//   failed -> F with that reason; cancel -> CA "cancelled"; timeout -> TO "time limit reached";
//   not stopped -> F "killed by signal N" or "exit code N" when either is not 0, else CD.
// It never requeues. record_exits() applies it in the transaction that records the last exit;
// PostgreSQL's one-exchange path computes the same in SQL (SqlStore::record_exits_logged, for
// speed only), and EndRuleStoreTest checks both against this.
JobEnd end_by_rule(JobId job, int attempt, StopCause stop, int exit_code, int signal,
                   const std::string& stopped_reason);

class StateStore {
 public:
  virtual ~StateStore() = default;

  // --- The cluster
  // Records the machine and its node names on a new store; on a store that has them already,
  // an error unless they are the same (a controller pointed at another cluster's store).
  virtual Status init_cluster(std::string_view machine_spec,
                              const std::vector<std::string>& node_names) = 0;
  // The machine spec given to init_cluster(); not found on a store never initialised.
  virtual Result<std::string> machine_spec() = 0;
  // A number that grows with every committed change (by any process): a cache of the store is
  // current while this has not changed. Heartbeat times and the scheduler lease do not count.
  virtual Result<int64_t> version() = 0;
  // The version and the last event's seq, read together: a cache that reflects the store up to
  // `last_event` catches up by reading the events after it.
  virtual Result<StoreHead> head() = 0;
  // head() and events(after, limit) read together, in one statement (one round trip): how a
  // controller's memory follows the store.
  virtual Result<StoreChanges> changes(int64_t after, int limit) = 0;

  // --- Jobs
  // Stores a new pending job (its id, state, attempt and times are set here, and what a run
  // leaves is cleared: nodes, box, exit code, signal; its reason is kept) and logs "submit".
  virtual Result<JobId> add_job(const StoredJob& job, Seconds now) = 0;
  // Several submissions in one transaction (a controller groups those that arrive together): the
  // ids, in the order of `jobs`. A job that add_job() would refuse refuses them all, naming it.
  virtual Result<std::vector<JobId>> add_jobs(const std::vector<StoredJob>& jobs, Seconds now) = 0;
  // Stores the tasks of a job array in one transaction: one job per id of `tasks` (ascending),
  // each as add_job() stores `job` with array_task set, all with array_job = the first task's job
  // id (the array's id). Returns the job ids in task order.
  virtual Result<std::vector<JobId>> add_array(const StoredJob& job, const std::vector<int>& tasks,
                                               Seconds now) = 0;
  // The batch script stored as `script_id` (a job's script_id). Not found when there is none.
  virtual Result<std::string> job_script(JobId script_id) = 0;
  // The dependencies of these pending jobs are satisfied: they are cleared (as Slurm clears them),
  // so that any controller sees the jobs free to run. Jobs no longer pending are left alone.
  virtual Status clear_dependencies(const std::vector<JobId>& jobs) = 0;
  virtual Result<std::vector<StoredJob>> list_jobs(const JobQuery& query) = 0;
  // Not found when there is no such job.
  virtual Result<StoredJob> job(JobId id) = 0;
  // Applies a pass: each start sets the job running with its nodes (refused whole, with
  // kDoesNotFitNow, if any node is already held or the job is not pending with that attempt - 1;
  // with `partial`, only that start is left out), and the pending notes and core state are
  // recorded. The nodes a start takes are checked and locked node by node, so passes of several
  // controllers commit side by side unless they take the same nodes.
  virtual Result<PassOutcome> apply_pass(const PassCommit& pass, Seconds now) = 0;
  // apply_pass() of a pass that is all or nothing.
  Status commit_pass(PassCommit pass, Seconds now) {
    pass.partial = false;
    Result<PassOutcome> done = apply_pass(pass, now);
    if (!done) return done.error();
    return Ok{};
  }
  // A job's current attempt ended: its allocation is freed and its state set (a final state, or
  // kPending to requeue it). Returns false, changing nothing, when the job holds no nodes (final,
  // or pending after a requeue) or is on another attempt (a late or repeated report).
  virtual Result<bool> end_job(const JobEnd& end, Seconds now) = 0;
  // kCompleting while its processes are being stopped, kSuspended/kRunning for gang switches
  // (only for a job that holds nodes: R, S or CG). A final state ends the job at once (a pending
  // job cancelled, an administrator's override), freeing any allocation and setting its end
  // time; kPending only for a pending job (end_job() requeues). Refused for a final job.
  virtual Status set_job_state(JobId job, JobState state, std::string_view reason, Seconds now) = 0;
  // Records the time the job's `attempt` spent frozen, once that attempt has ended (the controller
  // counts it while the job runs). Changes nothing when another attempt has started since.
  virtual Status record_frozen_time(JobId job, int attempt, Seconds seconds) = 0;
  // Asks a job to stop. A pending job is cancelled at once (CA) when `cause` is kCancel; a job
  // that holds nodes on `attempt` (0: whichever) and is not stopping yet becomes CG with `cause`
  // and `reason`. Anything else (final, stopping already, another attempt) is left as it is.
  // Returns the job's state afterwards; not found when there is no such job.
  virtual Result<JobState> stop_job(JobId job, int attempt, StopCause cause,
                                    std::string_view reason, Seconds now) = 0;
  // Records that tasks ended. A report for a node that the job does not hold on that attempt, or
  // one already recorded, changes nothing. When a job's last node has reported, its attempt ends
  // (as end_job()) in the same transaction, as end_by_rule() says. Returns the ends applied.
  virtual Result<std::vector<JobEnd>> record_exits(const std::vector<TaskExit>& exits,
                                                   Seconds now) = 0;
  // The last core_state committed by commit_pass(), if any.
  virtual Result<std::optional<std::string>> core_state() = 0;
  // Lets a held pending job be scheduled again (logs "release"). False, changing nothing, when
  // the job is not held; not found when there is no such job.
  virtual Result<bool> release_job(JobId job, Seconds now) = 0;

  // --- Steps (StoredStep)
  // Records a new step of a running job's current attempt (`step.attempt`) on some of its
  // nodes, and returns its id: one more than the job's last step, or `first_id` for its first.
  // Refused (kDoesNotFitNow) when the job does not run that attempt; kInvalidArgument when a node
  // is not the job's. Logs "step".
  virtual Result<int> add_step(const StoredStep& step, int first_id, Seconds now) = 0;
  // The steps of a job (every attempt), by attempt then id.
  virtual Result<std::vector<StoredStep>> list_steps(JobId job) = 0;
  // The jobs among `ids` that have launched steps of their own (in any attempt), in one read.
  virtual Result<std::set<JobId>> jobs_with_steps(const std::vector<JobId>& ids) = 0;
  // Asks a running step to stop (CG) for `cause` with `reason`; anything else is left as it is.
  // Returns its state afterwards; not found when there is no such step.
  virtual Result<JobState> stop_step(JobId job, int attempt, int step, StopCause cause,
                                     std::string_view reason, Seconds now) = 0;
  // Records that steps' tasks ended on nodes; a step whose last node reported ends (CD, or F
  // with the reason it was stopped for or its first failure, or CA when cancelled), in the same
  // transaction. Reports for a step that is over, or a node not its own, change nothing. Logs
  // "step_end" for each step that ended; returns them.
  virtual Result<std::vector<StepEnd>> record_step_exits(const std::vector<StepExit>& exits,
                                                         Seconds now) = 0;
  // What the steps of each of `jobs` used (core/task_usage.h), step 0 being the job's own
  // command, from the usage its exit reports carried (record_exits(), record_step_exits(): each
  // node's first report of a step counts). Per job, by attempt then step; a job with no usage
  // recorded is absent.
  virtual Result<std::map<JobId, std::vector<StepUsage>>> step_usage(
      const std::vector<JobId>& jobs) = 0;
  // Ends the steps of attempt `attempt` of `job` that still run (CA with `reason`): its job has
  // ended. Returns them.
  virtual Result<std::vector<StepEnd>> end_steps(JobId job, int attempt, std::string_view reason,
                                                 Seconds now) = 0;

  // --- Nodes
  virtual Result<std::vector<StoredNode>> list_nodes() = 0;
  // An agent at `agent` registers for these nodes, listing the processes it runs there: marks them
  // up (logging one node_up naming those that were down) and records the heartbeat time, except a
  // node where a process of an attempt that is no longer running still runs. Such a node does not
  // come up, so no job is given it while that process lives; returns those processes, for the
  // caller to kill, after which the agent registers again. The check and the change are one
  // transaction, so a controller that requeues the job at the same moment cannot slip between them.
  // Not found if a name is not the cluster's.
  virtual Result<std::vector<RunningTask>> register_nodes(const std::vector<std::string>& names,
                                                          std::string_view agent,
                                                          const std::vector<RunningTask>& running,
                                                          Seconds now) = 0;
  // A heartbeat of an agent at `agent`: records the time. It never brings a node up, since it does
  // not say what runs there: a node that is down, or registered to another agent, is Not found,
  // and the agent registers again.
  virtual Status nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                            Seconds now) = 0;
  // Marks nodes down (missed heartbeats), logging one node_down, with the reason, naming those
  // that were up. Not found if an id is not the cluster's. set_drained() logs one drain/resume
  // naming the nodes that changed.
  virtual Status nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                            Seconds now) = 0;
  virtual Status set_drained(const std::vector<NodeId>& nodes, bool drained,
                             std::string_view reason, Seconds now) = 0;

  // --- The scheduler lease: one controller at a time runs passes, enforces time limits and
  // watches heartbeats. Takes or renews it for `holder` until now + ttl; false when another holder
  // has it unexpired. A change of holder is logged ("scheduler"). release_lease() gives it up at
  // once (a clean shutdown) if `holder` has it.
  virtual Result<bool> hold_lease(std::string_view holder, Seconds now, Seconds ttl) = 0;
  virtual Status release_lease(std::string_view holder) = 0;

  // --- Concurrent allocation ([controller] allocation = "concurrent"): every controller places
  // the pending jobs it owns (StoredJob::owner). Each says it is alive until now + ttl
  // (check_in(); ttl 0 says it leaves, so that its jobs are adopted at once), which returns the
  // controllers checked in at `now`, sorted by name (it among them unless it left). One of them
  // (the scheduler-lease holder) adopts the unfinished jobs of controllers that stopped checking
  // in, or of none: they become `controller`'s, logged as one "adopt" event naming them. The
  // pending ones are its to place; the ones holding nodes (R, S, CG) it launches again, since
  // their controller may have stopped between committing a start and sending it to the agents.
  virtual Result<std::vector<std::string>> check_in(std::string_view controller, Seconds now,
                                                    Seconds ttl) = 0;
  virtual Result<AdoptedJobs> adopt_jobs(std::string_view controller, Seconds now) = 0;

  // --- Accounts (core/accounts.h): the site's tree of accounts, users and associations.
  virtual Result<AccountBook> account_book() = 0;
  // Applies one sacctmgr change in one transaction (read, AccountBook::apply, write), logging an
  // "accounts" event that describes it; a change the book refuses changes nothing. Returns what
  // apply() said it did.
  virtual Result<std::string> change_accounts(const AccountChange& change, Seconds now) = 0;

  // --- The event log, oldest first: at most `limit` events with seq > `after`.
  virtual Result<std::vector<StoredEvent>> events(int64_t after, int limit) = 0;

  // Round trips to the database server so far (0 for an embedded engine), for benchmarks.
  virtual int64_t round_trips() const { return 0; }
  // Per kind of call ("submit", "commit_pass", "record_exits", "changes", ...): calls, round trips
  // and statements sent so far (an embedded engine counts calls only), for benchmarks.
  struct OperationCounts {
    int64_t calls = 0, round_trips = 0, statements = 0;
  };
  virtual std::map<std::string, OperationCounts> operation_counts() const { return {}; }
};

struct StoreOptions {
  bool read_only = false;  // the read path: showmesh, queue --store, the dashboard
};

// Opens (creating and migrating if needed, unless read-only) the store at `url`:
// "sqlite:PATH" (or a bare path ending in .db) or "postgresql://..." (or postgres://). An
// invalid-argument error names an unknown scheme.
Result<std::unique_ptr<StateStore>> open_store(std::string_view url, StoreOptions options = {});

}  // namespace trellis
