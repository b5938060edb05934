// AccountLimits: the limits of the accounts and QOS on running work as the scheduling core's
// StartLimits (sched/start_limits.h). Of the job's QOS (core/qos.h) first, as Slurm checks them:
// MaxWall (a job whose time limit is longer waits), GrpTRES=node=N (all of its jobs),
// MaxTRESPerUser=node=N and MaxJobsPerUser (one user's jobs in it); then of its association:
// GrpTRES=node=N of an account (every job charged to it or to an account below it) or of an
// association, and an association's MaxJobs and MaxWall (its own, else the nearest of its
// accounts'; MaxWall only when the job's QOS has none, Slurm's precedence). A job
// that would pass one waits, with Slurm's reason code and the limit in words:
// "AssocGrpNodeLimit (account physics holds 3 of its 4 nodes, GrpTRES=node=4; the job asks for
// 2)". Nodes are counted per job (two jobs sharing a node count it twice: stricter than Slurm,
// which counts distinct nodes). Other TRES of GrpTRES (cpu, mem, gres/gpu) are kept and shown but
// not yet enforced.
//
//   AccountLimits limits;
//   limits.set_book(book, association_ids, qos_ids);  // "user/account" -> Job::association,
//                                                      // QOS name -> Job::qos
//   options.limits = &limits;                  // BatchOptions
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/accounts.h"
#include "sched/start_limits.h"

namespace trellis {

class AccountLimits final : public StartLimits {
 public:
  // The limits of `book`; `association_ids` numbers its associations ("user/account" -> the
  // Job::association of their jobs). Forgets what runs (the core's restore() tells it again).
  void set_book(const AccountBook& book, const std::map<std::string, int>& association_ids,
                const std::map<std::string, int>& qos_ids);

  std::string held_back(const Job& job) const override;
  void started(const Job& job, int nodes) override;
  void ended(const Job& job) override;
  void clear() override;

  // Whether any limit is set (a site without limits pays nothing per job).
  bool any() const { return any_; }

 private:
  struct Group {
    std::string what;  // "account physics", "user alice in account physics"
    std::optional<int64_t> node_limit;
    int64_t held = 0;
  };
  struct Assoc {
    std::vector<int> groups;  // its own group, then its account's and theirs up to root
    std::optional<int64_t> max_jobs;
    std::string max_jobs_of;  // whose MaxJobs it is
    std::optional<int64_t> max_wall;
    std::string max_wall_of;
    int64_t running = 0;
  };
  struct QosLimits {
    std::string name;
    std::optional<int64_t> max_wall, grp_nodes, max_nodes_per_user, max_jobs_per_user;
    int64_t held = 0;  // nodes of all its running jobs
    struct PerUser {
      int64_t jobs = 0, nodes = 0;
    };
    std::unordered_map<int, PerUser> by_user;  // Job::user
  };
  // The job's association's index in assocs_, or -1 (none, or not in the book).
  int assoc_index(const Job& job) const;
  // The job's QOS's limits, or nullptr (none, not in the book, or no limit).
  const QosLimits* qos_of(const Job& job) const;
  std::string qos_held_back(const Job& job, const QosLimits& q) const;

  std::vector<Group> groups_;
  std::vector<Assoc> assocs_;   // by association number
  std::vector<QosLimits> qos_;  // by QOS number
  std::unordered_map<JobId, int> running_nodes_;
  bool any_ = false;
};

}  // namespace trellis
