#include "daemon/account_limits.h"

#include "core/qos.h"

namespace trellis {
namespace {

int nodes_asked(const Job& job) {
  if (!job.request.has_shape()) return job.request.nodes;
  int product = 1;
  for (int extent : job.request.shape) product *= extent;
  return product;
}

// `code` and why, when the job's time limit is longer than MaxWall=`most` of `whose` (or it has
// none); else "".
std::string over_wall(const Job& job, int64_t most, const std::string& code,
                      const std::string& whose) {
  if (job.time_limit > 0 && job.time_limit <= static_cast<Seconds>(most)) return "";
  return code + " (the job's time limit " +
         (job.time_limit <= 0 ? std::string("UNLIMITED")
                              : format_wall(static_cast<int64_t>(job.time_limit))) +
         " is longer than MaxWall=" + format_wall(most) + " of " + whose + ")";
}

}  // namespace

void AccountLimits::set_book(const AccountBook& book,
                             const std::map<std::string, int>& association_ids,
                             const std::map<std::string, int>& qos_ids) {
  groups_.clear();
  assocs_.clear();
  qos_.clear();
  running_nodes_.clear();
  any_ = false;
  for (const auto& [name, id] : qos_ids) {
    const Qos* qos = book.find_qos(name);
    if (!qos || id < 0) continue;
    if (static_cast<int>(qos_.size()) <= id) qos_.resize(static_cast<size_t>(id) + 1);
    QosLimits& out = qos_[static_cast<size_t>(id)];
    out = QosLimits();
    out.name = name;
    out.max_wall = qos->max_wall;
    out.grp_nodes = qos->grp_tres.count("node");
    out.max_nodes_per_user = qos->max_tres_per_user.count("node");
    out.max_jobs_per_user = qos->max_jobs_per_user;
    any_ = any_ || out.max_wall || out.grp_nodes || out.max_nodes_per_user || out.max_jobs_per_user;
  }
  std::map<std::string, int> account_group;
  for (const Account& a : book.accounts()) {
    account_group[a.name] = static_cast<int>(groups_.size());
    groups_.push_back(Group{"account " + a.name, a.limits.grp_tres.count("node")});
    any_ = any_ || a.limits.grp_tres.count("node") || a.limits.max_jobs || a.limits.max_wall;
  }
  for (const auto& [key, id] : association_ids) {
    const size_t slash = key.find('/');
    const std::string user = key.substr(0, slash), account = key.substr(slash + 1);
    const Association* association = book.find_association(user, account);
    if (!association || id < 0) continue;
    if (static_cast<int>(assocs_.size()) <= id) assocs_.resize(static_cast<size_t>(id) + 1);
    Assoc& out = assocs_[static_cast<size_t>(id)];
    out.groups.push_back(static_cast<int>(groups_.size()));
    groups_.push_back(Group{"user " + user + " in account " + account,
                            association->limits.grp_tres.count("node")});
    any_ = any_ || association->limits.grp_tres.count("node") || association->limits.max_jobs ||
           association->limits.max_wall;
    if (association->limits.max_jobs) {
      out.max_jobs = association->limits.max_jobs;
      out.max_jobs_of = "user " + user + " in account " + account;
    }
    if (association->limits.max_wall) {
      out.max_wall = association->limits.max_wall;
      out.max_wall_of = "user " + user + " in account " + account;
    }
    // Its account and every account above it (check() keeps the parents acyclic).
    for (const Account* at = book.find_account(account); at; at = book.find_account(at->parent)) {
      out.groups.push_back(account_group.at(at->name));
      if (!out.max_jobs && at->limits.max_jobs) {
        out.max_jobs = at->limits.max_jobs;
        out.max_jobs_of = "account " + at->name;
      }
      if (!out.max_wall && at->limits.max_wall) {
        out.max_wall = at->limits.max_wall;
        out.max_wall_of = "account " + at->name;
        any_ = true;
      }
      if (at->name == "root") break;
    }
  }
}

int AccountLimits::assoc_index(const Job& job) const {
  if (job.association < 0 || job.association >= static_cast<int>(assocs_.size())) return -1;
  return assocs_[static_cast<size_t>(job.association)].groups.empty() ? -1 : job.association;
}

const AccountLimits::QosLimits* AccountLimits::qos_of(const Job& job) const {
  if (job.qos < 0 || job.qos >= static_cast<int>(qos_.size())) return nullptr;
  const QosLimits& q = qos_[static_cast<size_t>(job.qos)];
  return q.name.empty() ? nullptr : &q;
}

std::string AccountLimits::qos_held_back(const Job& job, const QosLimits& q) const {
  const int64_t asked = nodes_asked(job);
  if (q.max_wall)
    if (std::string why =
            over_wall(job, *q.max_wall, "QOSMaxWallDurationPerJobLimit", "qos " + q.name);
        !why.empty())
      return why;
  if (q.grp_nodes && q.held + asked > *q.grp_nodes)
    return "QOSGrpNodeLimit (qos " + q.name + " holds " + std::to_string(q.held) + " of its " +
           std::to_string(*q.grp_nodes) + " nodes, GrpTRES=node=" + std::to_string(*q.grp_nodes) +
           "; the job asks for " + std::to_string(asked) + ")";
  QosLimits::PerUser mine;
  if (auto at = q.by_user.find(job.user); at != q.by_user.end()) mine = at->second;
  if (q.max_nodes_per_user && mine.nodes + asked > *q.max_nodes_per_user)
    return "QOSMaxNodePerUserLimit (the user's jobs in qos " + q.name + " hold " +
           std::to_string(mine.nodes) + " of " + std::to_string(*q.max_nodes_per_user) +
           " nodes, MaxTRESPerUser=node=" + std::to_string(*q.max_nodes_per_user) +
           "; the job asks for " + std::to_string(asked) + ")";
  if (q.max_jobs_per_user && mine.jobs >= *q.max_jobs_per_user)
    return "QOSMaxJobsPerUserLimit (" + std::to_string(mine.jobs) +
           " jobs of the user run in qos " + q.name +
           ", MaxJobsPerUser=" + std::to_string(*q.max_jobs_per_user) + ")";
  return "";
}

std::string AccountLimits::held_back(const Job& job) const {
  if (!any_) return "";
  const QosLimits* q = qos_of(job);
  if (q)
    if (std::string reason = qos_held_back(job, *q); !reason.empty()) return reason;
  const int index = assoc_index(job);
  if (index < 0) return "";
  const Assoc* a = &assocs_[static_cast<size_t>(index)];
  if (a->max_wall && !(q && q->max_wall))  // the QOS's MaxWall comes first, when it has one
    if (std::string why =
            over_wall(job, *a->max_wall, "AssocMaxWallDurationPerJobLimit", a->max_wall_of);
        !why.empty())
      return why;
  const int64_t asked = nodes_asked(job);
  for (int g : a->groups) {
    const Group& group = groups_[static_cast<size_t>(g)];
    if (group.node_limit && group.held + asked > *group.node_limit)
      return "AssocGrpNodeLimit (" + group.what + " holds " + std::to_string(group.held) +
             " of its " + std::to_string(*group.node_limit) +
             " nodes, GrpTRES=node=" + std::to_string(*group.node_limit) + "; the job asks for " +
             std::to_string(asked) + ")";
  }
  if (a->max_jobs && a->running >= *a->max_jobs)
    return "AssocMaxJobsLimit (" + std::to_string(a->running) + " jobs of " + a->max_jobs_of +
           " run, MaxJobs=" + std::to_string(*a->max_jobs) + ")";
  return "";
}

void AccountLimits::started(const Job& job, int nodes) {
  const int index = assoc_index(job);
  const QosLimits* qos = qos_of(job);
  if ((index < 0 && !qos) || running_nodes_.count(job.id)) return;
  running_nodes_[job.id] = nodes;
  if (qos) {
    QosLimits& q = qos_[static_cast<size_t>(job.qos)];
    q.held += nodes;
    QosLimits::PerUser& mine = q.by_user[job.user];
    mine.nodes += nodes;
    ++mine.jobs;
  }
  if (index < 0) return;
  Assoc& a = assocs_[static_cast<size_t>(index)];
  for (int g : a.groups) groups_[static_cast<size_t>(g)].held += nodes;
  ++a.running;
}

void AccountLimits::ended(const Job& job) {
  auto at = running_nodes_.find(job.id);
  if (at == running_nodes_.end()) return;
  if (qos_of(job)) {
    QosLimits& q = qos_[static_cast<size_t>(job.qos)];
    q.held -= at->second;
    QosLimits::PerUser& mine = q.by_user[job.user];
    mine.nodes -= at->second;
    --mine.jobs;
    if (mine.jobs <= 0) q.by_user.erase(job.user);
  }
  if (const int index = assoc_index(job); index >= 0) {
    Assoc& a = assocs_[static_cast<size_t>(index)];
    for (int g : a.groups) groups_[static_cast<size_t>(g)].held -= at->second;
    --a.running;
  }
  running_nodes_.erase(at);
}

void AccountLimits::clear() {
  running_nodes_.clear();
  for (Group& g : groups_) g.held = 0;
  for (Assoc& a : assocs_) a.running = 0;
  for (QosLimits& q : qos_) {
    q.held = 0;
    q.by_user.clear();
  }
}

}  // namespace trellis
