// Controller: the allocator daemon's logic (seed 003's CPA) with no transport and no clock. It
// drives the one SchedulingCore (sched/core.h), the same code `trellis sim` runs, with events that
// arrive as RPCs (submit, cancel, agent registrations, heartbeats and exit reports) and with
// time, and keeps the store the truth: every decision is committed before it is carried out, and
// open() rebuilds everything from the store after a crash.
//
// Several controllers may share one store (seed 003's distributed allocators). Every one takes
// every call: submissions, cancels, heartbeats and exit reports are each one transaction of the
// store, complete in themselves (submissions and exit reports that arrive together share one,
// daemon/group_commit.h). One of them at a time holds the scheduler lease (the store's
// `leases` table) and is the scheduler: it alone runs passes, enforces time limits and marks
// silent nodes down, so passes never race each other and decide as fast as with one controller.
// The scheduler's memory (its core) follows the store: its own changes are applied as it makes
// them, and before each pass and tick it reads the log's new events (LISTEN/NOTIFY wakes it) and
// replays the others' (a submission joins the queue, an end frees nodes, a cancel, a node coming
// up or going down); what it cannot replay, it rebuilds from the store. A controller that takes the
// lease over rebuilds and sends every running job's launch again (agents ignore one they have had);
// a pass commits only while its controller holds the lease, and the database refuses a node given
// twice.
//
//   TreeAgentLink agents(credentials, {});
//   Result<std::unique_ptr<Controller>> c = Controller::open(config, store, agents, now());
//   (*c)->submit(spec, caller, now());      // committed, then queued
//   (*c)->run_pass(now());                  // starts committed, then launched on the agents
//   (*c)->tick(now());                      // time limits, what the liveness pings found
//
// With a gang policy (DQT, Fair-DQT, slurm-gang, ...) the core is a GangCore, the one `trellis sim`
// runs for that policy: every slice a pass decides the next slot, and the jobs switched out and
// in go to the agents as one gang switch (AgentLink::gang_switch, through a tree of agents). A
// job's time limit then counts only the time it was not frozen. The switch's reply says what the
// outgoing jobs did: a job whose processes all waited for input is skipped (left thawed, since
// it uses no CPU, and probed at each switch until it runs again); one whose processes all waited
// for messages of each other is globally stopped (a deadlock: reported, or killed if so
// configured). The core's call log (CoreSnapshot::policy_calls) and each job's frozen time are
// committed with the passes as the store's core_state, so a restarted controller resumes the same
// schedule (controller_gang.cc).
//
// Under `[controller] allocation = "concurrent"` (queue policies only) the lease holder keeps
// time limits, liveness and node failures, but every controller runs passes: each places the
// pending jobs it owns (the ones it was given, StoredJob::owner) on its own view of the machine,
// in which the jobs the others started hold their nodes (replayed from the log as they commit).
// A pass commits partially (StateStore::apply_pass): a start whose node another controller took
// first is refused, the job waits again at its place, and the next pass (after reading the log)
// places it elsewhere. Each controller checks in with the store; the lease holder adopts the
// unfinished jobs of one that stopped checking in (and launches its started ones again). Queue
// order then holds per controller only: a job given to one controller may start before an earlier
// one given to another.
//
// trellisd (daemon/controller_service.h) calls it from gRPC threads with the wall clock; the
// simulator-equivalence test calls it with a virtual clock and fake agents. Thread-safe: one
// mutex orders every event, so the core sees them in the order the store committed them.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "alloc/allocator.h"
#include "alloc/home_region.h"
#include "daemon/account_limits.h"
#include "daemon/agent_link.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/group_commit.h"
#include "daemon/liveness.h"
#include "daemon/node_types.h"
#include "sched/batch_core.h"
#include "sched/gang/gang_scheduler.h"
#include "sched/gang_core.h"
#include "sched/policy.h"
#include "sched/priority_order.h"
#include "store/state_store.h"
#include "topology/machine.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class Controller {
 public:
  // Opens the cluster in `store` (initialising a new store with the config's machine) and
  // rebuilds the scheduling core from it: pending jobs queue in submission order, running jobs
  // keep their nodes, and each running job's launch is sent again (agents ignore a launch they
  // have already had, so reconciliation never runs a job twice). `store` and `agents` must
  // outlive the controller.
  // `identity` names this controller in the lease and the log ("" = host:pid); controllers
  // sharing a store need different ones.
  static Result<std::unique_ptr<Controller>> open(const ClusterConfig& config, StateStore& store,
                                                  AgentLink& agents, Seconds now,
                                                  std::string identity = "");

  // --- Client calls. `caller` is who made the call (MUNGE).
  // Checks and commits a job; it is queued for the next pass. The id is the acknowledgement. An
  // array (spec.array) is stored as one job per task, in one transaction; the id returned is the
  // array's (its first task's), and `task_ids` gets every task's job id in task order.
  // A job with a dependency, or an array task beyond its array's limit, waits outside the queue
  // until it may run (controller_waiting.cc); a dependency naming a job that does not exist is
  // refused.
  Result<JobId> submit(const v1::JobSpec& spec, const Caller& caller, Seconds now,
                       std::vector<JobId>* task_ids = nullptr);
  // Cancels each job: pending ones end at once (CA), running ones are signalled and end when
  // their processes are gone. `signal` 0 cancels; another number is only delivered. A caller may
  // act only on their own jobs unless they are an administrator.
  // An array's id names every task of the array, unless `exact_ids`.
  Result<std::vector<JobId>> cancel(const std::vector<JobId>& ids, int signal, const Caller& caller,
                                    Seconds now, bool exact_ids = false);
  // Time-shared jobs show S while frozen, and jobs suspended by an administrator under every
  // policy, with their frozen time (`now` counts the current freeze).
  Result<v1::ListJobsReply> list_jobs(const v1::ListJobsRequest& request, Seconds now);
  Result<v1::ListNodesReply> list_nodes(const v1::ListNodesRequest& request);
  Result<v1::DrainReply> drain(const v1::DrainRequest& request, const Caller& caller, Seconds now);
  // Administrators only (as Slurm's scontrol suspend/resume). A suspended job is frozen on its
  // nodes (a gang switch, under every policy) until it is resumed, and its time limit does not
  // count meanwhile. Under a queue policy it keeps its nodes; under a gang policy it leaves the
  // rotation, so that its slots go to other jobs, and it comes back on resume (thawed when its
  // slot comes). Stored as S, so that a restarted controller keeps it suspended. Every id is
  // checked first, and a refused call changes nothing: unknown jobs are NOT_FOUND; a job that
  // is not running (suspend) or not suspended (resume) is refused, except that a job already in
  // the asked state is left as it is. Returns the jobs suspended or resumed.
  Result<std::vector<JobId>> suspend(const std::vector<JobId>& ids, const Caller& caller,
                                     Seconds now);
  Result<std::vector<JobId>> resume(const std::vector<JobId>& ids, const Caller& caller,
                                    Seconds now);

  // Lets held jobs (requeued too often after node failures) be scheduled again; a caller may
  // release only their own jobs unless they are an administrator. Every id is checked first;
  // a job not held is left as it is. Returns the jobs released.
  Result<std::vector<JobId>> release(const std::vector<JobId>& ids, const Caller& caller,
                                     Seconds now);

  // --- Job steps (controller_steps.cc): `trellis run` inside a running job launches a step on
  // some of its nodes (the job's owner or an administrator); its nodes' exits end it, a failure
  // stops its other tasks, and the job's end ends (and kills) the steps still running.
  Result<v1::RunStepReply> run_step(const v1::RunStepRequest& request, const Caller& caller,
                                    Seconds now);
  Result<v1::ListStepsReply> list_steps(const v1::ListStepsRequest& request);
  // list_jobs() of at most this many ids lists each one's steps too.
  static constexpr int kMaxJobsShownWithSteps = 16;
  Status cancel_step(const v1::CancelStepRequest& request, const Caller& caller, Seconds now);
  // A step's launch that an agent refused or that never reached it: its nodes there end failed.
  Status step_launch_failed(const v1::LaunchRequest& request, const Error& error, Seconds now);

  // --- Accounts (controller_accounts.cc): the site's accounts, users and associations, kept in
  // the store (StateStore::change_accounts), changed by administrators (sacctmgr). Once a user
  // exists, every submission is charged to an account its user belongs to (-A, or the user's
  // default), and the queue is ordered by multifactor priority ([priority]: age and fair-share,
  // usage charged per association as node-seconds and decayed with a half-life). Usage is
  // derived from the jobs in the store (their runs within 10 half-lives), so it survives a
  // restart and is the same on every controller.
  Result<v1::AccountChangeReply> change_accounts(const v1::AccountChangeRequest& request,
                                                 const Caller& caller, Seconds now);
  // The book, with each account's and association's fair-share figures as of `now` when this
  // controller schedules.
  Result<v1::ListAccountsReply> list_accounts(Seconds now);

  // --- Agent calls (the caller must be the daemon user or an administrator).
  // An agent's nodes come up (or stay down while it runs processes of ended attempts, which are
  // killed); a node that is down comes back only through a registration, which says what the
  // agent still runs.
  Result<v1::RegisterReply> register_agent(const v1::RegisterRequest& request, const Caller& caller,
                                           Seconds now);
  // Processes of a job ended on some nodes; the job ends when all its nodes have reported.
  Status report_exits(const v1::ExitRequest& request, const Caller& caller, Seconds now);

  // A launch of `attempt` of job `id` that an agent refused or that never reached it (the
  // AgentLink's on_launch_failed). The attempt ends; the job's processes that did start are
  // killed. A refused request (kInvalidArgument, e.g. a user the agent cannot become) fails the
  // job; otherwise it is requeued, and fails after kLaunchAttempts attempts.
  Status launch_failed(JobId id, int attempt, const Error& error, Seconds now);
  static constexpr int kLaunchAttempts = 3;

  // --- Time.
  // Runs one scheduling pass: the core decides, the starts are committed in one transaction,
  // then launched. Returns the jobs started.
  Result<std::vector<JobId>> run_pass(Seconds now);
  // Whether a pass is due at `now`: an event since the last pass may let a job start, or the
  // policy asked to look again at this time (a promised start). Passes only when due keep the
  // schedule exactly the simulator's. Under a gang policy an event waits for the end of the
  // slot, unless nothing runs in the slot any more.
  bool pass_due(Seconds now) const;
  // Enforces time limits (signals jobs past their limit; they end as TO) and acts on what the
  // liveness pings found (liveness()): an unresponsive agent's nodes take no new job; a down
  // one's nodes are declared down and their jobs requeued (held after [controller] max_requeue
  // node failures) or failed, as configured; a node that failed [controller] node_failure_drain
  // jobs is drained. Every such decision is logged with what, where and why. Meant to be called
  // often (trellisd: every quarter second).
  Status tick(Seconds now);

  // --- Liveness (daemon/liveness.h): the agents to ping, and where each round's outcome goes.
  // Its own lock: the ping thread never waits for a pass. Only the scheduler pings.
  Liveness& liveness() { return liveness_; }
  // Writes when each agent was last heard to the store (what `show node` shows), one statement
  // per agent: called every few seconds, never per ping.
  void record_heard(Seconds now);
  // The next instant at which run_pass() or tick() has something to do with no event: a promised
  // start, a time limit.
  std::optional<Seconds> next_wakeup() const;

  // Whether this controller held the scheduler lease at its last look (tick() and run_pass()
  // take or renew it).
  bool is_scheduler() const;
  const std::string& identity() const { return identity_; }
  // Gives the lease up (a clean shutdown), so that another controller takes over at once; under
  // concurrent allocation it also checks out, so that its pending jobs are adopted at once.
  void resign();
  // Concurrent allocation: starts this controller's passes decided that the store refused
  // because another controller had taken a node (or the job) first; each was placed again.
  int64_t conflicts() const;
  // Concurrent allocation: a controller checks in this often; one silent for kCheckInTtl has its
  // unfinished jobs adopted by the lease holder, which looks every kAdoptEvery. The TTL is long
  // beside a pass or a stall under load (adoption makes every controller read the store again)
  // and short beside a user's patience.
  static constexpr Seconds kCheckInEvery = 0.5;
  static constexpr Seconds kCheckInTtl = 5;
  static constexpr Seconds kAdoptEvery = 1;

  const Machine& machine() const { return machine_; }

  // --- Gang scheduling
  // Whether the policy time-shares (a gang policy).
  bool time_shares() const { return gang_ != nullptr; }
  // A gang switch came back (AgentLink::on_switch_done): jobs found idle are skipped, idle ones
  // that run again are scheduled again, globally stopped ones are reported or killed.
  void switch_done(const SwitchOutcome& outcome, Seconds now);
  // Seconds a running job has spent frozen (0 for an unknown job).
  Seconds frozen_seconds(JobId id, Seconds now) const;

 private:
  // A running job as the scheduler tracks it beyond the core.
  struct LiveJob {
    int attempt = 0;
    Seconds start = 0;
    Seconds limit_at = 0;  // start + time limit (+ the time frozen)
    std::vector<NodeId> nodes;
    StopCause stop = StopCause::kNone;
    // Frozen by a switch (since when), skipped as idle (left thawed), and how long it was frozen
    // before (added to limit_at when it thaws). Gang scheduling, and an administrator's suspension
    // under every policy.
    JobId array_job = 0;  // the array it is a task of (0: none), for array limits
    bool frozen = false;
    bool idle = false;
    bool has_steps = false;  // it launched steps of its own (killed with it when it ends)
    Seconds frozen_since = 0;
    Seconds frozen_before = 0;
    int switch_outs = 0;  // times a switch froze it (activity_wanted())
    // A running job as the store has it (not frozen, no steps known).
    static LiveJob of(const StoredJob& job) {
      LiveJob live;
      live.array_job = job.array_job;
      live.attempt = job.attempt;
      live.start = job.start_time;
      live.limit_at = job.start_time + job.time_limit;
      live.nodes = job.nodes;
      live.stop = job.stop;
      return live;
    }
    // Thawed at `now`: its time limit moves on by the time it was frozen.
    void thaw(Seconds now) {
      frozen = false;
      frozen_before += now - frozen_since;
      limit_at += now - frozen_since;
    }
  };

  Controller(const ClusterConfig& config, StateStore& store, AgentLink& agents, Machine machine);
  // Takes or renews the scheduler lease, and brings the memory up to the store's version (a
  // rebuild) when this controller schedules and another one changed the store.
  Status sync(Seconds now);
  // The nodes were heard from and are up (as the store already says): updates what this
  // controller keeps of them. Called with mutex_ held.
  // Drains the nodes of a registering agent whose host has less than their [[nodetype]]
  // (RegisterRequest::found_resources), with the shortfall as the reason and a log line.
  Status drain_short_nodes(const v1::RegisterRequest& request, const std::vector<NodeId>& nodes,
                           Seconds now);
  void mark_heard(const std::vector<std::string>& names, Seconds now);
  // Up, not drained, and its agent answers the pings: new jobs may go there.
  bool in_service(NodeId id) const;
  // Applies one event of the store's log to the memory unless it is there already (this
  // controller's own changes are applied when made, and replayed as no-ops); false when the
  // memory cannot follow it (a start this controller did not make), and must be rebuilt.
  // `rows` holds the stored jobs that submissions and ends name (read once per catch-up).
  Result<bool> replay(const StoredEvent& event, const std::map<JobId, StoredJob>& rows,
                      Seconds now);
  // Whether the memory (core, running_, pending_) follows the store; changes are applied to it
  // only then, and a rebuild makes it follow again.
  bool tracking() const { return synced_version_ >= 0; }
  // Reads everything from the store into memory; with `relaunch`, sends every running job's
  // launch again (on open and when taking the lease over).
  Status rebuild(Seconds now, bool relaunch);
  // A job's attempt ended in the store (requeued when `state` is kPending): the memory follows.
  Status apply_end(JobId id, JobState state, Seconds now);
  Job core_job(const StoredJob& job) const;
  // The request the core places for a stored one: with an allocator that places only boxes on a
  // mesh/torus, a count that no box holds is rounded up to the smallest box that does, as
  // `trellis sim` does (sched/request_shaping.h: pad_to_box). The store keeps the count asked.
  Request placed_request(const Request& asked) const;
  // Whether this controller's passes place `job` while it is pending: always under lease
  // allocation (only the lease holder passes), only its own jobs under concurrent allocation.
  bool places(const StoredJob& job) const { return !concurrent_ || job.owner == identity_; }
  // Concurrent allocation: a job another controller started (its row, as the log's start
  // event left it) holds its nodes here too (one that has ended since, nothing); false when the
  // memory cannot follow (rebuild).
  Result<bool> follow_foreign_start(const StoredJob& job, Seconds now);
  // Concurrent allocation: checks in with the store now and then (StateStore::check_in), and, as
  // the lease holder, adopts the unfinished jobs of controllers that stopped (tick()): it places
  // the pending ones and launches the started ones again (a launch or kill may have been lost).
  Status check_in(Seconds now);
  Status adopt_orphans(Seconds now);
  bool is_admin(const Caller& caller) const;
  bool is_agent(const Caller& caller) const;
  // --- Accounts (controller_accounts.cc).
  // Sets the account `job` (of job.user, job.uid) is charged to and the QOS it runs in
  // (AccountBook::job_account, job_qos), checked against the book as read at most kBookAge ago;
  // a refusal is checked again against a fresh read, so that a user or QOS just added is never
  // refused. Then the limits a submission meets, in Slurm's order: the QOS's MaxWall (a job
  // that did not ask for a time limit, `asked_time` false, gets it) and, with DenyOnLimit, its
  // Max node limits; the QOS's MaxSubmitJobsPerUser and the association's MaxSubmitJobs against
  // the `adding` jobs (an array's tasks) submitted. Without mutex_.
  Status charge_job(StoredJob& job, const std::string& asked_account, const std::string& asked_qos,
                    bool asked_time, int adding, Seconds now);
  // A stable number for a QOS (Job::qos), kept for the controller's life; -1 for "".
  int qos_id(const std::string& name) const;
  static constexpr Seconds kBookAge = 1;
  // The book as read at most kBookAge ago (`fresh`: read now), shared: a submission copies nothing.
  Result<std::shared_ptr<const AccountBook>> current_book(Seconds now, bool fresh);
  // A stable number for a user's association with an account (Job::association), kept for the
  // controller's life; -1 for a job charged to no account.
  int association_id(const std::string& user, const std::string& account) const;
  // In rebuild(): the priority order's tree and the limits from the store's book, and the
  // order's usage from the jobs that ran within 10 half-lives; the running jobs are told by the
  // caller (the order) and by the core's restore() (the limits).
  Status reload_priority(Seconds now);
  // `book`'s tree for `order`, its associations numbered as their jobs carry them (returned:
  // "user/account" -> number); and the usage of the jobs that ended within 10 half-lives.
  std::map<std::string, int> give_tree(PriorityOrder& order, const AccountBook& book) const;
  Status charge_history(PriorityOrder& order, Seconds now);
  // The priority order's terms of `book`'s QOS (Priority, UsageFactor) by their numbers
  // (qos_id()), and those numbers by name in `ids`.
  std::vector<PriorityOrder::QosTerms> qos_terms(const AccountBook& book,
                                                 std::map<std::string, int>& ids) const;
  std::mutex book_mutex_;
  std::shared_ptr<const AccountBook> book_;  // book_mutex_; null until first read
  Seconds book_read_at_ = -1e9;              // book_mutex_
  mutable std::mutex association_mutex_;
  mutable std::map<std::string, int> association_ids_;  // "user/account"; association_mutex_
  mutable std::map<std::string, int> qos_ids_;          // QOS name; association_mutex_
  std::unique_ptr<PriorityOrder> priority_;             // queue policies; null under a gang policy
  std::unique_ptr<AccountLimits> limits_;               // queue policies; null under a gang policy
  bool priority_has_users_ = false;  // the order's tree has users (figures to show)
  v1::LaunchRequest launch_request(const StoredJob& job, int attempt,
                                   const std::vector<NodeId>& nodes) const;
  // Whether `job` holds some node only in part (fewer cores than it has): other jobs may run
  // there beside it, so its launch must leave their tasks alone.
  bool shares_its_nodes(const StoredJob& job) const;
  // Why a job's launch is sent: its nodes were just given to it, or it is sent again to reconcile
  // (after a registration, a takeover or an adoption: the agent may never have had it). A copy
  // sent again can arrive after its attempt ended and its nodes went on, so it never takes them
  // from another job (LaunchRequest.reconcile).
  enum class Launching { kStart, kAgain };
  // Sends the launch to the agents of `nodes`, or only to `only_agent` when it is given.
  void send_launch(const StoredJob& job, int attempt, const std::vector<NodeId>& nodes,
                   Launching why, const std::string& only_agent = "");
  void send_signal(JobId id, int attempt, const std::vector<NodeId>& nodes, int signal);
  // The agents serving `nodes`, in node order (the control tree's order), reading the store for
  // nodes registered elsewhere.
  std::vector<std::string> agents_of(const std::vector<NodeId>& nodes);
  // Ends attempt `attempt` of a running job with `state` (kPending: requeue) in the store and
  // the memory; nothing when that attempt is over already.
  Status finish(JobId id, int attempt, JobState state, std::string reason, Seconds now);
  Status finish(const JobEnd& end, Seconds now);
  // The running jobs on `nodes`, which failed (`why`), are requeued, held or failed.
  Status requeue_or_fail_jobs_on(const std::vector<NodeId>& nodes, const std::string& why,
                                 Seconds now);
  // Steps (controller_steps.cc): signals a step's tasks; records step tasks' exits (a failure
  // stops the step); ends a finished job's steps that still run and kills them.
  void send_step_signal(const StoredStep& step, int signal);
  // The job, when the caller may act on it (its owner or an administrator); else kNotFound or
  // kPermissionDenied naming it. With mutex_ held.
  Result<StoredJob> job_for(JobId id, const Caller& caller);
  // Why a task that ended badly failed: its own reason, else its node and exit status.
  static std::string failure_reason(const v1::TaskStatus& task);
  Status record_step_exits(const std::vector<const v1::TaskStatus*>& tasks, Seconds now);
  void end_job_steps(JobId id, int attempt, const std::vector<NodeId>& nodes, Seconds now);
  std::vector<PendingNote> pending_notes(Seconds now);
  // A queue policy's core_state: its reservations, and the frozen times of the running jobs that
  // have been suspended (so that a restarted controller keeps their time limits).
  std::string batch_state_text() const;
  Result<std::vector<JobId>> set_suspended(const std::vector<JobId>& ids, bool suspend,
                                           const Caller& caller, Seconds now);
  // Nodes are named n0, n1, ... in the machine's order.
  static constexpr std::string_view kNodePrefix = "n";
  std::string node_name(NodeId node) const;
  Result<NodeId> node_id(std::string_view name) const;

  // Submissions and exit reports that arrive together are committed in one transaction
  // (group_commit.h). The leader commits a batch without mutex_ and answers its callers once the
  // batch is durable; the batch joins memory through an inbox (below) that whoever takes mutex_
  // next through lock_memory() applies first, the leader itself if mutex_ is free. So a pass, a
  // batch of submissions and a batch of exit reports reach the store side by side, and none
  // waits for a pass to let go of the memory. Meanwhile a sync() may have replayed a batch's
  // events already (replaying is the same change), so applying skips what memory has: an end
  // whose attempt no longer runs, a submission that entered memory since its batch began
  // (entered_), and after a rebuild in that time, one the store no longer has pending.
  struct Submission {
    StoredJob job;
    Seconds now = 0;
  };
  struct ExitReport {
    std::vector<TaskExit> exits;
    Seconds now = 0;
  };
  std::vector<Result<JobId>> commit_submissions(std::vector<Submission>& batch);
  std::vector<Result<Ok>> commit_exit_reports(std::vector<ExitReport>& batch);
  // A committed submission joins the memory (mutex_ held).
  Result<JobId> apply_submitted(StoredJob job, JobId id, Seconds now);
  // Whether a job of a committed batch begun at `epoch` is still to join memory (mutex_ held).
  bool apply_wanted(JobId id, int64_t epoch) const;
  // Commits an array (one job per task id of `tasks`) or a job with a dependency in a
  // transaction of its own, then applies each job as apply_submitted() does.
  Result<JobId> submit_apart(StoredJob job, const std::vector<int>& tasks, Seconds now,
                             std::vector<JobId>* task_ids);
  // A batch committed and not yet applied to memory.
  struct CommittedSubmissions {
    int64_t epoch = 0;  // when the batch began (submission_epoch_)
    std::vector<StoredJob> jobs;
    std::vector<JobId> ids;
    std::vector<Seconds> at;
  };
  struct CommittedEnds {
    std::vector<JobEnd> ends;
    Seconds now = 0;
  };
  // mutex_ held, then the memory applies the inboxes (apply_committed()). Every entry point
  // that reads or changes memory takes mutex_ through it; const accessors may read a memory
  // a batch behind.
  std::unique_lock<std::mutex> lock_memory();
  void apply_committed();
  // Guards the inboxes, the epochs and latest_now_; taken after mutex_, never before it.
  mutable std::mutex committed_mutex_;
  std::vector<CommittedSubmissions> submitted_inbox_;
  std::vector<CommittedEnds> ended_inbox_;
  int64_t submission_epoch_ = 0;          // batches of submissions begun so far
  std::set<int64_t> outstanding_epochs_;  // the batches begun and not applied yet
  // With mutex_ held: the jobs that entered memory by another way (a replayed submit, a rebuild)
  // while a batch was outstanding, with the epoch then; and the epoch of the last rebuild done
  // while one was (-1: none).
  std::map<JobId, int64_t> entered_;
  int64_t rebuilt_at_epoch_ = -1;
  // The latest epoch begun if a batch is outstanding, else -1 (takes committed_mutex_).
  int64_t outstanding_epoch() const;
  GroupCommit<Submission, JobId> submissions_{
      [this](std::vector<Submission>& batch) { return commit_submissions(batch); }};
  GroupCommit<ExitReport, Ok> exit_reports_{
      [this](std::vector<ExitReport>& batch) { return commit_exit_reports(batch); }};

  mutable std::mutex mutex_;
  ClusterConfig config_;
  StateStore& store_;
  AgentLink& agents_;
  Machine machine_;
  std::unique_ptr<Allocator> allocator_;
  // Concurrent allocation: the allocator_ layer that prefers this controller's share of the
  // machine (alloc/home_region.h); owned by allocator_, null in lease allocation.
  HomeRegion* home_region_ = nullptr;
  std::string allocator_name_;
  bool pads_counts_ = false;  // the allocator places only boxes (see placed_request())
  std::unique_ptr<QueuePolicy> policy_;
  std::unique_ptr<SchedulingCore> core_;
  BatchCore* batch_ = nullptr;  // core_ with a queue policy
  std::unique_ptr<gang::GangScheduler> gang_policy_;
  GangCore* gang_ = nullptr;  // core_ with a gang policy
  std::map<JobId, LiveJob> running_;
  std::map<JobId, StoredJob> pending_;  // the stored rows of the core's queue (for launches)
  std::map<JobId, PendingNote> notes_;  // the last note committed for each pending job
  // Jobs that joined the core's queue since the last pass's notes (pending_notes() notes those
  // behind the head that passes look at once, then leaves them until they reach it).
  std::vector<JobId> queued_since_pass_;
  std::vector<std::string> agent_of_;  // node id -> address of its agent ("" = none yet)
  std::vector<bool> up_;
  std::vector<bool> drained_;
  std::vector<bool> responsive_;  // its agent answers the pings (else: no new job there)
  Liveness liveness_;
  // The jobs each node failed (it went down under them) since it was last put back in service;
  // in memory only (a restarted controller starts counting again).
  struct NodeFailures {
    std::vector<JobId> jobs;
  };
  std::map<NodeId, NodeFailures> node_failures_;
  bool pass_wanted_ = true;
  std::string reservations_text_;  // the core_state last committed

  // The latest time a state change was recorded with (mutex_ held): callers take `now` before
  // they get the lock, so a pass whose `now` was taken before an exit report committed could
  // otherwise start a dependent job at a time before its dependency's end.
  Seconds latest_now_ = 0;  // committed_mutex_
  Seconds not_before_latest(Seconds now) {
    std::lock_guard lock(committed_mutex_);
    latest_now_ = std::max(latest_now_, now);
    return latest_now_;
  }

  std::string identity_;
  bool concurrent_ = false;    // [controller] allocation = "concurrent"
  int64_t conflicts_ = 0;      // see conflicts()
  Seconds next_check_in_ = 0;  // concurrent allocation: when to check in again
  Seconds next_adoption_ = 0;  // concurrent allocation, lease holder: when to adopt again
  bool scheduler_ = false;
  Seconds lease_until_ = 0;      // when the lease this controller holds runs out
  Seconds next_lease_try_ = 0;   // when to seek the lease again while another holds it
  int64_t synced_version_ = -1;  // the store version the memory reflects; -1: none kept
  int64_t synced_event_ = 0;     // the last event of the log the memory reflects
  // The `now` of the last sync() that left the memory following the store; a pass at that same
  // instant (the scheduler loop's tick() and pass share one) does not read the store again.
  Seconds synced_at_ = -1;
  std::set<JobId> finished_;  // jobs that left memory since the last sync (replay skips them)

  // --- Jobs that wait outside the core (controller_waiting.cc; not `hold`, which is a job held
  // until `trellis release`): a dependency not satisfied yet (or
  // never to be), or an array with as many tasks in the core as its limit allows. No policy sees
  // them, so every policy honours dependencies and array limits; a pass lets them into the queue
  // when they may run.
  // A pending job joins the core's queue (pending_), or waits in waiting_.
  Status enqueue(const StoredJob& job, Seconds now);
  // Whether another task of `array_job` may enter the core (its limit is not reached).
  bool array_has_room(JobId array_job, int limit) const;
  // Evaluates the waiting jobs' dependencies against the store and lets in those that may run
  // (clearing their satisfied dependency in the store), cancels those that never can when they
  // asked for it, and records why the others wait (waiting_reason_).
  Status admit_waiting(Seconds now);
  // Checks at submission that every job a dependency names exists.
  Status check_dependency_targets(const std::string& dependency);
  std::map<JobId, StoredJob> waiting_;
  std::map<JobId, std::string> waiting_reason_;  // Dependency, DependencyNeverSatisfied, ...
  // The node count of a job that gives tasks but no nodes, on a partition of shared nodes: the
  // fewest of its nodes that hold the tasks (NodeTypes::fewest_nodes). nullopt elsewhere, or
  // when it gives a node count, a shape or tasks per node, or asks for --exclusive.
  std::optional<int> packed_node_count(const v1::JobSpec& spec) const;
  // Puts `job` in the partition it asks for ("" = the default), with the partition's time limits
  // (`limit_given`: the job asked for one), or an error naming the partitions there are.
  Result<std::string> partition_of(const std::string& asked, bool limit_given,
                                   StoredJob& job) const;
  std::vector<PartitionConfig> partitions_;
  // Each partition's nodes; null for a partition of every node.
  std::map<std::string, std::shared_ptr<const NodeSet>> partition_nodes_;
  // What each node has ([[nodetype]]): a request none of its partition's nodes can hold is
  // refused at submission.
  NodeTypes node_types_;
  // Some partition shares its nodes (PartitionConfig::shared): the scheduling core keeps what
  // each node has left (alloc/node_pool.h), every start carries its grants, and each job's
  // Request::demand says what it takes of a node (core_job()).
  bool shares_nodes_ = false;

  // --- Gang scheduling (controller_gang.cc)
  // Builds the gang core for the configured policy, if it is one; false when it is a queue
  // policy.
  Result<bool> open_gang();
  // Sends the switch of a pass's kSuspend and kResume decisions (with the idle jobs as probes),
  // and updates the jobs' frozen times.
  void switch_jobs(const PassResult& decided, Seconds now);
  // The order's id, or 0 when there was nothing to send.
  int64_t send_switch(std::vector<JobId> freeze, std::vector<JobId> thaw, Seconds now);
  // The gang core's call log and the jobs' frozen times as core_state text, and back into a
  // snapshot whose jobs and running_ come from the store (the log is fixed up where the store
  // moved on after it was committed).
  std::string gang_state_text(Seconds now) const;
  Status restore_gang(CoreSnapshot& snapshot, const std::string& text, Seconds now);
  bool gang_log_dirty_ = false;        // the core's log gained calls that are not slots
  std::set<JobId> found_idle_;         // waited for input in their last slot (see switch_jobs)
  std::set<int64_t> refreezes_;        // switches that froze woken jobs again (see switch_done)
  std::set<JobId> suspected_stopped_;  // seen globally stopped once (confirmed at the next)
  std::set<JobId> deadlocked_;         // reported as globally stopped

  // --- Suspension by an administrator (controller_gang.cc): the job is frozen and never thawed
  // by the gang schedule until resumed. Both are idempotent, so that replay() applies a change
  // committed by another controller the same way.
  void apply_suspend(JobId id, Seconds now);
  void apply_resume(JobId id, Seconds now);
  // Under a gang policy, the core skips a suspended job (GangCore::idle, which wants a job of
  // the current slot) at once, or when its slot next comes.
  void skip_suspended(JobId id, Seconds now);
  bool in_current_slot(JobId id) const;
  std::set<JobId> admin_suspended_;   // running jobs stored as S
  std::set<JobId> leaving_rotation_;  // suspended, not yet skipped by the gang core

  // How often the gang state is committed when nothing else makes it so: what a restarted
  // controller may lose of the slots and frozen times (a job's limit then comes that much early).
  static constexpr Seconds kGangStateInterval = 2;
  Seconds gang_state_saved_ = 0;
  int64_t switches_sent_ = 0;
};

}  // namespace trellis
