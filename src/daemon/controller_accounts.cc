// The controller's accounts (controller.h, "Accounts"): changes through the store, the account
// each submission is charged to, and the priority order's tree and usage, rebuilt from the store.
#include <algorithm>
#include <cmath>

#include "daemon/controller.h"
#include "daemon/log.h"
#include "daemon/user_names.h"

namespace trellis {
namespace {

// How far back usage is read: older runs have decayed to under a thousandth.
constexpr double kHalfLivesKept = 10;

v1::ShareFigures figures_of(const ShareResult& result, double usage) {
  v1::ShareFigures out;
  out.set_norm_shares(result.norm_shares);
  out.set_raw_usage(usage);
  out.set_effective_usage(result.effective_usage);
  out.set_fair_share(result.factor);
  out.set_level_fs(std::isinf(result.level_fs) ? -1 : result.level_fs);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

Result<AccountChange> change_of(const v1::AccountChangeRequest& request) {
  AccountChange change;
  if (request.verb() == "add") {
    change.verb = AccountChange::kAdd;
  } else if (request.verb() == "modify") {
    change.verb = AccountChange::kModify;
  } else if (request.verb() == "delete") {
    change.verb = AccountChange::kDelete;
  } else {
    return fail("verb: '" + request.verb() + "' is not add, modify or delete");
  }
  if (request.entity() == "account") {
    change.entity = AccountChange::kAccount;
  } else if (request.entity() == "user") {
    change.entity = AccountChange::kUser;
  } else if (request.entity() == "qos") {
    change.entity = AccountChange::kQos;
  } else {
    return fail("entity: '" + request.entity() + "' is not account, user or qos");
  }
  // Bounds, so that a request cannot fill the store.
  constexpr int kMostNames = 1000;
  constexpr size_t kMostBytes = 4096;
  if (request.names_size() > kMostNames)
    return fail("names: more than " + std::to_string(kMostNames));
  for (const std::string& name : request.names()) {
    if (name.size() > kMostBytes) return fail("names: a name longer than 4096 bytes");
    change.names.push_back(name);
  }
  for (const auto* map : {&request.where(), &request.set()}) {
    for (const auto& [key, value] : *map) {
      if (key.size() > 64 || value.size() > kMostBytes)
        return fail("'" + key.substr(0, 64) + "': too long");
      std::string lower = key;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      (map == &request.where() ? change.where : change.set)[lower] = value;
    }
  }
  return change;
}

}  // namespace

Result<std::shared_ptr<const AccountBook>> Controller::current_book(Seconds now, bool fresh) {
  {
    std::lock_guard lock(book_mutex_);
    if (!fresh && book_ && now - book_read_at_ < kBookAge) return book_;
  }
  Result<AccountBook> book = store_.account_book();
  if (!book) return book.error();
  auto shared = std::make_shared<const AccountBook>(std::move(*book));
  std::lock_guard lock(book_mutex_);
  book_ = shared;
  book_read_at_ = now;
  return shared;
}

Status Controller::charge_job(StoredJob& job, const std::string& asked_account,
                              const std::string& asked_qos, bool asked_time, int adding,
                              Seconds now) {
  Result<std::shared_ptr<const AccountBook>> book = current_book(now, false);
  if (!book) return book.error();
  auto charge = [&](const AccountBook& b) -> Result<std::pair<std::string, std::string>> {
    Result<std::string> account = b.job_account(job.user, asked_account);
    if (!account) return account.error();
    Result<std::string> qos = b.job_qos(job.user, *account, asked_qos);
    if (!qos) return qos.error();
    return std::make_pair(*account, *qos);
  };
  Result<std::pair<std::string, std::string>> charged = charge(**book);
  if (!charged) {
    // A user, association or QOS added a moment ago, perhaps through another controller.
    book = current_book(now, true);
    if (!book) return book.error();
    charged = charge(**book);
  }
  if (!charged) return charged.error();
  const AccountBook& accounts = **book;
  job.account = charged->first;
  job.qos = charged->second;
  const Qos* qos = accounts.find_qos(job.qos);
  if (!qos) return Ok{};  // job_qos() found it; unreachable
  const std::string violates =
      "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits): ";
  // MaxWall (the QOS's, else the association's, else the nearest account's: Slurm's order): a
  // job that names no time limit gets it; a longer one waits (or, with the QOS's DenyOnLimit, is
  // refused), as Slurm's.
  std::optional<int64_t> wall = qos->max_wall;
  if (const Association* a = accounts.find_association(job.user, job.account); !wall && a)
    wall = a->limits.max_wall;
  for (const Account* at = accounts.find_account(job.account); !wall && at;
       at = at->name == "root" ? nullptr : accounts.find_account(at->parent))
    wall = at->limits.max_wall;
  if (wall && !asked_time) {
    const Seconds most = static_cast<Seconds>(*wall);
    job.time_limit = job.time_limit > 0 ? std::min(job.time_limit, most) : most;
  }
  if (qos->max_wall && asked_time) {
    const Seconds most = static_cast<Seconds>(*qos->max_wall);
    if (qos->deny_on_limit && (job.time_limit <= 0 || job.time_limit > most))
      return fail(Error::Code::kDoesNotFitNow, violates + "the time limit is longer than MaxWall=" +
                                                   format_wall(*qos->max_wall) + " of qos " +
                                                   qos->name + " (QOSMaxWallDurationPerJobLimit)");
  }
  if (qos->deny_on_limit) {
    const int64_t nodes = job.request.nodes;  // a shape's volume when it asks for one
    for (const auto& [tres, limit] : {std::pair{&qos->max_tres_per_user, "MaxTRESPerUser"},
                                      std::pair{&qos->grp_tres, "GrpTRES"}}) {
      std::optional<int64_t> most = tres->count("node");
      if (most && nodes > *most)
        return fail(Error::Code::kDoesNotFitNow,
                    violates + "the job asks for " + std::to_string(nodes) + " nodes and " + limit +
                        " of qos " + qos->name + " is node=" + std::to_string(*most) +
                        (std::string(limit) == "GrpTRES" ? " (QOSGrpNodeLimit)"
                                                         : " (QOSMaxNodePerUserLimit)"));
    }
  }
  if (job.account.empty() && !qos->max_submit_per_user) return Ok{};
  // MaxSubmitJobs: the association's own, else the nearest of its accounts' (Slurm's order);
  // MaxSubmitJobsPerUser of the QOS, checked first (the QOS's limits come first in Slurm's).
  std::optional<int64_t> most;
  std::string whose;
  if (const Association* a = accounts.find_association(job.user, job.account);
      a && a->limits.max_submit) {
    most = a->limits.max_submit;
    whose = "user " + job.user + " in account " + job.account;
  }
  for (const Account* at = accounts.find_account(job.account); at && !most;
       at = accounts.find_account(at->parent)) {
    if (at->limits.max_submit) {
      most = at->limits.max_submit;
      whose = "account " + at->name;
    }
    if (at->name == "root") break;
  }
  if (!most && !qos->max_submit_per_user) return Ok{};
  JobQuery active;
  active.only_active = true;
  active.uid = job.uid;
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(active);
  if (!jobs) return jobs.error();
  if (qos->max_submit_per_user) {
    const int64_t held = std::count_if(jobs->begin(), jobs->end(),
                                       [&](const StoredJob& j) { return j.qos == job.qos; });
    if (held + adding > *qos->max_submit_per_user)
      return fail(Error::Code::kDoesNotFitNow,
                  violates + "user " + job.user + " has " + std::to_string(held) +
                      " job(s) pending or running in qos " + qos->name +
                      ", and its MaxSubmitJobsPerUser is " +
                      std::to_string(*qos->max_submit_per_user) + " (QOSMaxSubmitJobPerUserLimit)");
  }
  if (!most) return Ok{};
  const int64_t held = std::count_if(jobs->begin(), jobs->end(),
                                     [&](const StoredJob& j) { return j.account == job.account; });
  if (held + adding > *most)
    return fail(Error::Code::kDoesNotFitNow,
                violates + "user " + job.user + " has " + std::to_string(held) +
                    " job(s) pending or running in account " + job.account +
                    ", and MaxSubmitJobs of " + whose + " is " + std::to_string(*most) +
                    " (AssocMaxSubmitJobLimit)");
  return Ok{};
}

int Controller::qos_id(const std::string& name) const {
  if (name.empty()) return -1;
  std::lock_guard lock(association_mutex_);
  auto [at, added] = qos_ids_.emplace(name, static_cast<int>(qos_ids_.size()));
  return at->second;
}

int Controller::association_id(const std::string& user, const std::string& account) const {
  if (account.empty()) return -1;
  std::lock_guard lock(association_mutex_);
  auto [at, added] =
      association_ids_.emplace(user + "/" + account, static_cast<int>(association_ids_.size()));
  return at->second;
}

std::map<std::string, int> Controller::give_tree(PriorityOrder& order,
                                                 const AccountBook& book) const {
  std::map<std::string, int> user_node;
  ShareTree tree = book.share_tree(&user_node);
  std::vector<int> node_of_association;
  std::map<std::string, int> ids;
  for (const auto& [key, node] : user_node) {
    size_t slash = key.find('/');
    const int id = association_id(key.substr(0, slash), key.substr(slash + 1));
    ids[key] = id;
    if (static_cast<int>(node_of_association.size()) <= id)
      node_of_association.resize(static_cast<size_t>(id) + 1, -1);
    node_of_association[static_cast<size_t>(id)] = node;
  }
  order.replace_tree(std::move(tree), std::move(node_of_association), false);
  return ids;
}

std::vector<PriorityOrder::QosTerms> Controller::qos_terms(const AccountBook& book,
                                                           std::map<std::string, int>& ids) const {
  std::vector<PriorityOrder::QosTerms> terms;
  for (const Qos& q : book.qos()) {
    const int id = qos_id(q.name);
    ids[q.name] = id;
    if (static_cast<int>(terms.size()) <= id) terms.resize(static_cast<size_t>(id) + 1);
    terms[static_cast<size_t>(id)] = {static_cast<double>(q.priority), q.usage_factor};
  }
  return terms;
}

Status Controller::charge_history(PriorityOrder& order, Seconds now) {
  // What the jobs that ended within the window ran, charged in the order they ended.
  JobQuery ran;
  const Seconds half_life = config_.priority.half_life;
  if (half_life > 0) ran.not_ended_before = now - kHalfLivesKept * half_life;
  ran.states = {JobState::kCompleted, JobState::kFailed,   JobState::kCancelled,
                JobState::kTimeout,   JobState::kNodeFail, JobState::kOutOfMemory};
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(ran);
  if (!jobs) return jobs.error();
  std::vector<const StoredJob*> charged;
  for (const StoredJob& job : *jobs)
    if (!job.account.empty() && job.start_time > 0 && job.end_time >= job.start_time)
      charged.push_back(&job);
  std::sort(charged.begin(), charged.end(), [](const StoredJob* a, const StoredJob* b) {
    return a->end_time != b->end_time ? a->end_time < b->end_time : a->id < b->id;
  });
  for (const StoredJob* job : charged) order.ended(core_job(*job), job->start_time, job->end_time);
  return Ok{};
}

Status Controller::reload_priority(Seconds now) {
  if (!priority_ && !limits_) return Ok{};
  Result<std::shared_ptr<const AccountBook>> read = current_book(now, true);
  if (!read) return read.error();
  const AccountBook* book = read->get();
  // The limits need the associations numbered; a throwaway order numbers them without fair-share.
  PriorityOrder numbering(ShareTree(), machine_.node_count());
  std::map<std::string, int> ids = give_tree(priority_ ? *priority_ : numbering, *book);
  std::map<std::string, int> qos_ids;
  std::vector<PriorityOrder::QosTerms> terms = qos_terms(*book, qos_ids);
  if (limits_) limits_->set_book(*book, ids, qos_ids);
  if (!priority_) return Ok{};
  priority_->set_qos(std::move(terms));
  priority_has_users_ = book->enforced();
  if (!priority_has_users_) return Ok{};
  return charge_history(*priority_, now);
}

Result<v1::AccountChangeReply> Controller::change_accounts(const v1::AccountChangeRequest& request,
                                                           const Caller& caller, Seconds now) {
  const std::string who = user_name(caller.uid);
  if (!is_admin(caller)) {
    Result<std::shared_ptr<const AccountBook>> book = current_book(now, true);
    if (!book) return book.error();
    const AccountUser* user = (*book)->find_user(who);
    if (!user || user->admin != AdminLevel::kAdministrator)
      return fail(Error::Code::kPermissionDenied,
                  "user " + who +
                      " may not change accounts (an administrator's: [controller] "
                      "admins, or AdminLevel=Administrator)");
  }
  Result<AccountChange> change = change_of(request);
  if (!change) return change.error();
  Result<std::string> done = store_.change_accounts(*change, now);
  if (!done) return done.error();
  log_line("accounts: " + describe(*change) + " (by " + who + ")");
  {
    std::lock_guard lock(book_mutex_);
    book_read_at_ = -1e9;  // read again at the next submission
  }
  v1::AccountChangeReply reply;
  reply.set_done(*done);
  return reply;
}

Result<v1::ListAccountsReply> Controller::list_accounts(Seconds now) {
  Result<AccountBook> book = store_.account_book();
  if (!book) return book.error();
  v1::ListAccountsReply reply;
  // The figures of the usage now (running jobs' so far included): the scheduler's own, or, on
  // a controller that does not schedule, made from the store the same way (its ended jobs and
  // the running ones), so that every controller answers alike.
  std::vector<ShareResult> results;
  ShareTree tree;
  {
    auto lock = lock_memory();
    if (priority_ && scheduler_ && priority_has_users_) tree = priority_->tree_at(now);
  }
  if (tree.user_count() == 0 && priority_ && book->enforced()) {
    PriorityOrder order(ShareTree(), machine_.node_count(), priority_->weights());
    give_tree(order, *book);
    std::map<std::string, int> qos_ids;
    order.set_qos(qos_terms(*book, qos_ids));
    if (Status charged = charge_history(order, now); !charged) return charged.error();
    JobQuery holding;
    holding.states = {JobState::kRunning, JobState::kSuspended, JobState::kCompleting};
    Result<std::vector<StoredJob>> running = store_.list_jobs(holding);
    if (!running) return running.error();
    for (const StoredJob& job : *running) order.started(core_job(job), job.start_time);
    tree = order.tree_at(now);
  }
  if (tree.user_count() > 0)
    results = config_.priority.fair_share == "classic" ? classic_fair_share(tree) : fair_tree(tree);
  reply.set_figures(!results.empty());
  for (const Account& a : book->accounts()) {
    v1::AccountInfo* info = reply.add_accounts();
    info->set_name(a.name);
    info->set_parent(a.parent);
    info->set_shares(a.shares);
    info->set_description(a.description);
    info->set_organization(a.organization);
    info->set_limits(encode_limits(a.limits));
    info->set_qos(joined(book->allowed_qos("", a.name)));
    int node = a.name == "root" ? ShareTree::kRoot : tree.find_account(a.name);
    if (!results.empty() && node >= 0)
      *info->mutable_figures() =
          figures_of(results[static_cast<size_t>(node)], tree.subtree_usage(node));
  }
  for (const Qos& q : book->qos()) {
    v1::QosInfo* info = reply.add_qos();
    info->set_name(q.name);
    info->set_description(q.description);
    info->set_settings(encode_qos_settings(q));
  }
  for (const AccountUser& u : book->users()) {
    v1::AccountUserInfo* info = reply.add_users();
    info->set_name(u.name);
    info->set_default_account(u.default_account);
    info->set_admin_level(std::string(admin_level_name(u.admin)));
  }
  for (const Association& a : book->associations()) {
    v1::AssociationInfo* info = reply.add_associations();
    info->set_user(a.user);
    info->set_account(a.account);
    info->set_shares(a.shares);
    info->set_limits(encode_limits(a.limits));
    info->set_qos(joined(book->allowed_qos(a.user, a.account)));
    info->set_default_qos(a.default_qos);
    int account = tree.find_account(a.account);
    int node = account >= 0 ? tree.find_user(account, a.user) : -1;
    if (!results.empty() && node >= 0)
      *info->mutable_figures() =
          figures_of(results[static_cast<size_t>(node)], tree.nodes()[node].usage);
  }
  return reply;
}

}  // namespace trellis
