// BatchCore: the SchedulingCore of queue policies (FCFS, EASY, conservative, Scan, fat-tree
// batch). It owns the queue, the running jobs, the free and down nodes and the policy's
// reservations; a pass hands them to the policy (which keeps no state of its own) and applies
// what it decides: started jobs leave the queue and take their nodes, the reservations are kept
// for the next pass.
//
// A pass shows the policy at most `max_job_test` jobs from the head of the queue (Slurm's
// bf_max_job_test): the pass's cost is then bounded however deep the queue grows; the jobs behind
// neither start nor hold reservations until they move up. 0 shows the policy every queued job
// (the textbook policies, `trellis sim`'s default); trellisd's default bounds it (daemon/config.h).
//
//   BatchCore core(machine, allocator, policy);
//   core.submit(job, 0);
//   for (const CoreDecision& d : core.pass(0).decisions) launch(d.job, d.nodes);
//   core.ended(job.id, 600);
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "alloc/node_pool.h"
#include "alloc/node_sharing.h"
#include "sched/core.h"
#include "sched/queue_order.h"
#include "sched/start_limits.h"

namespace trellis {

struct BatchOptions {
  size_t max_job_test = 0;  // queued jobs a pass looks at, from the head; 0 = all
  // The nodes' inventory (core/node_inventory.h): node i is of type node_types[type_of[i]] (all
  // of node_types[0] when type_of is empty). Empty: featureless nodes, every job takes whole
  // nodes. Given, the core keeps what each node has left (alloc/node_pool.h) and places through
  // alloc/node_sharing.h: jobs with a Request::demand share nodes, the others take them whole.
  std::vector<NodeInventory> node_types;
  std::vector<uint16_t> type_of;
  // Sorts the queue before each pass and hears of every end (sched/queue_order.h); not owned.
  // Null: arrival order.
  QueueOrder* order = nullptr;
  // Limits on what groups of jobs hold at once (sched/start_limits.h); not owned. Null: none.
  StartLimits* limits = nullptr;
};

class BatchCore final : public SchedulingCore {
 public:
  // The allocator and policy must outlive the core.
  BatchCore(const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
            BatchOptions options = {});

  Status submit(const Job& job, Seconds now) override;
  Status ended(JobId job, Seconds now) override;
  Status cancel(JobId job, Seconds now) override;
  Status node_down(NodeId node, Seconds now) override;
  Status node_up(NodeId node, Seconds now) override;
  // Batch jobs keep their nodes while they wait for input.
  bool idle(JobId, Seconds) override { return false; }
  Status busy(JobId job, Seconds now) override;
  const PassResult& pass(Seconds now) override;
  const std::vector<Reservation>& reservations() const override { return reservations_; }
  std::optional<Seconds> next_wakeup() const override;
  CoreSnapshot snapshot() const override;
  Status restore(const CoreSnapshot& snapshot) override;

  // --- Concurrent allocators (several controllers, each with a core of its own jobs, placing on
  // one machine; daemon/controller.h).
  // A job another allocator started: it holds `running.nodes` here as a running job until
  // ended(), so that this core neither places on them nor promises them before it ends. Refused
  // (changing nothing) when the id is in the core or a node is held by one of its running jobs.
  Status add_running(const Job& job, const RunningJob& running);
  // A job this core started in a pass whose start was then not made (another allocator took a
  // node first, or started the job itself): it waits again, at its place in the queue by
  // submission time and id, and its nodes are free again.
  Status unstart(JobId job);

  // Read-only views, for observers (metrics, tests).
  const std::vector<const Job*>& queue() const { return queue_; }
  // How many jobs from the head of the queue a pass looks at (BatchOptions::max_job_test).
  size_t jobs_tested() const {
    return options_.max_job_test == 0 ? queue_.size()
                                      : std::min(queue_.size(), options_.max_job_test);
  }
  const std::vector<RunningJob>& running() const { return running_; }
  const NodeSet& free() const { return free_; }
  // What every node has left, when the machine's nodes have an inventory; else null.
  const NodePool* pool() const { return pool_.get(); }
  // The queued or running job `id`, or nullptr.
  const Job* find(JobId id) const;

 private:
  // A job in the core, and where it is in running_ while it runs.
  struct Stored {
    static constexpr size_t kWaiting = std::numeric_limits<size_t>::max();
    Job job;
    size_t running_at = kWaiting;
  };

  void remove_running(Stored& stored);
  // The pool's part of a start and an end: the grants taken or given back (whole nodes for a job
  // without them), and the free set made again from what is left.
  Status take_grants(const Job& job, RunningJob& running);
  void give_back_grants(const Job& job, const RunningJob& running);
  void refresh_free();
  // One call of the policy, its starts applied; how many started on shared nodes.
  int schedule_once(Seconds now);
  // The head of the queue the policy is shown: the first jobs_tested(), less those the limits
  // hold back (visible_; visible_at_ maps each back to its place in queue_).
  size_t show_head(size_t tested);
  std::vector<const Job*> visible_;
  std::vector<size_t> visible_at_;
  // Keeps a copy of `job` in a free slot of job_store_ and indexes it; the job's id must be new.
  Stored& store(const Job& job);
  void forget(Stored& stored);  // frees the job's slot
  // The running job `id`, or nullptr.
  Stored* running(JobId id) const;
  // An error unless `node` is one of the machine's.
  Status on_machine(NodeId node) const;

  const Machine& machine_;
  std::unique_ptr<NodePool> pool_;                 // with an inventory (BatchOptions)
  std::unique_ptr<NodeSharingAllocator> sharing_;  // over the allocator given, with pool_
  const Allocator& allocator_;                     // what policies place with
  const QueuePolicy& policy_;
  BatchOptions options_;
  // Every job in the core, each copied once into a slot of job_store_: a deque never moves its
  // elements, so the pointers in queue_ and jobs_ stay valid, and the slot of an ended job is
  // reused (assigning a Job over an old one reuses its strings: no allocation per job). The
  // index is a hash map, sized by the jobs in the core: a table by id (core/job_table.h) spans
  // the largest id, and touching its fresh pages cost a cold run more than the hashing.
  std::deque<Stored> job_store_;
  std::vector<Stored*> free_slots_;
  std::unordered_map<JobId, Stored*> jobs_;  // id -> its slot
  std::vector<const Job*> queue_;            // waiting, in priority (arrival) order
  std::vector<RunningJob> running_;
  NodeSet free_;  // up and not held by a running job
  NodeSet down_;
  std::vector<Reservation> reservations_;
  Seconds last_pass_ = 0;
  PassResult result_;          // the last pass's, reused (see SchedulingCore::pass)
  std::vector<char> started_;  // pass() scratch: which queue positions started
};

}  // namespace trellis
