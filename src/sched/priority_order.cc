#include "sched/priority_order.h"

#include <algorithm>
#include <utility>

namespace trellis {

PriorityOrder::PriorityOrder(ShareTree tree, int machine_nodes, PriorityWeights weights)
    : tree_(std::move(tree)), machine_nodes_(std::max(machine_nodes, 1)), weights_(weights) {}

void PriorityOrder::decay_to(Seconds now) {
  if (!usage_time_set_) {
    usage_time_ = now;
    usage_time_set_ = true;
    return;
  }
  if (now <= usage_time_) return;
  if (weights_.half_life > 0)
    tree_.scale_usage(decayed_usage(1, now - usage_time_, weights_.half_life));
  usage_time_ = now;
}

int PriorityOrder::user_node(int association) const {
  int node = association;
  if (!node_of_association_.empty())
    node = association >= 0 && association < static_cast<int>(node_of_association_.size())
               ? node_of_association_[static_cast<size_t>(association)]
               : -1;
  if (node <= 0 || node >= static_cast<int>(tree_.nodes().size()) ||
      !tree_.nodes()[static_cast<size_t>(node)].is_user)
    return -1;
  return node;
}

void PriorityOrder::replace_tree(ShareTree tree, std::vector<int> node_of_association,
                                 bool keep_usage) {
  if (keep_usage) {
    const std::vector<ShareNode>& old = tree_.nodes();
    for (size_t n = 0; n < old.size(); ++n) {
      if (!old[n].is_user || old[n].usage == 0) continue;
      int account = tree.find_account(old[static_cast<size_t>(old[n].parent)].name);
      int user = account >= 0 ? tree.find_user(account, old[n].name) : -1;
      if (user >= 0) tree.add_usage(user, old[n].usage);
    }
  } else {
    running_.clear();
    usage_time_set_ = false;
  }
  tree_ = std::move(tree);
  node_of_association_ = std::move(node_of_association);
  shares_.clear();
}

void PriorityOrder::set_qos(std::vector<QosTerms> by_qos) {
  qos_ = std::move(by_qos);
  highest_qos_priority_ = 0;
  for (const QosTerms& q : qos_)
    highest_qos_priority_ = std::max(highest_qos_priority_, q.priority);
}

double PriorityOrder::usage_factor(int qos) const {
  return qos >= 0 && qos < static_cast<int>(qos_.size())
             ? qos_[static_cast<size_t>(qos)].usage_factor
             : 1.0;
}

ShareTree PriorityOrder::tree_at(Seconds now) const {
  ShareTree tree = tree_;
  if (usage_time_set_ && now > usage_time_ && weights_.half_life > 0)
    tree.scale_usage(decayed_usage(1, now - usage_time_, weights_.half_life));
  for (const auto& [id, r] : running_)
    if (int user = user_node(r.association); user >= 0)
      tree.add_usage(user, r.rate * std::max(0.0, now - r.start));
  return tree;
}

void PriorityOrder::started(const Job& job, Seconds start) {
  if (user_node(job.association) < 0) return;
  running_[job.id] = Running{job.association, job.request.nodes * usage_factor(job.qos), start};
}

void PriorityOrder::ended(const Job& job, Seconds start, Seconds end) {
  running_.erase(job.id);
  const int user = user_node(job.association);
  if (user < 0) return;
  decay_to(end);
  // Charged as of its end; an end told late (before usage_time_) is decayed by what it missed.
  const double used = job.request.nodes * usage_factor(job.qos) * std::max(0.0, end - start);
  tree_.add_usage(user, decayed_usage(used, usage_time_ - end, weights_.half_life));
}

PriorityOrder::Factors PriorityOrder::factors(const Job& job, Seconds now) const {
  Factors f;
  f.age = weights_.max_age > 0 ? std::clamp((now - job.submit) / weights_.max_age, 0.0, 1.0) : 1.0;
  const int user = user_node(job.association);
  f.fair_share = user > 0 && user < static_cast<int>(shares_.size())
                     ? shares_[static_cast<size_t>(user)].factor
                     : 0;
  f.job_size = std::min(1.0, static_cast<double>(job.request.nodes) / machine_nodes_);
  if (highest_qos_priority_ > 0 && job.qos >= 0 && job.qos < static_cast<int>(qos_.size()))
    f.qos = qos_[static_cast<size_t>(job.qos)].priority / highest_qos_priority_;
  return f;
}

double PriorityOrder::priority(const Job& job, Seconds now) const {
  const Factors f = factors(job, now);
  return weights_.age * f.age + weights_.fair_share * f.fair_share +
         weights_.job_size * f.job_size + weights_.qos * f.qos;
}

void PriorityOrder::order(std::vector<const Job*>& queue, Seconds now, size_t head) {
  decay_to(now);
  // What the running jobs have used so far counts now, and is taken out again after: each is
  // charged whole when it ends.
  for (const auto& [id, r] : running_)
    if (int user = user_node(r.association); user >= 0)
      tree_.add_usage(user, r.rate * std::max(0.0, now - r.start));
  shares_ = weights_.classic ? classic_fair_share(tree_, weights_.dampening) : fair_tree(tree_);
  for (const auto& [id, r] : running_)
    if (int user = user_node(r.association); user >= 0)
      tree_.add_usage(user, -r.rate * std::max(0.0, now - r.start));
  // arrival order (see the header), unless QOS priorities count
  if (tree_.user_count() == 0 && (weights_.qos == 0 || highest_qos_priority_ == 0)) return;
  keyed_.clear();
  keyed_.reserve(queue.size());
  for (const Job* job : queue) keyed_.emplace_back(priority(*job, now), job);
  // A total order (priority, then submission, then id), so that the head is the same however
  // it is found.
  auto before = [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second->submit != b.second->submit) return a.second->submit < b.second->submit;
    return a.second->id < b.second->id;
  };
  if (head > 0 && head < keyed_.size()) {
    std::nth_element(keyed_.begin(), keyed_.begin() + static_cast<long>(head), keyed_.end(),
                     before);
    std::sort(keyed_.begin(), keyed_.begin() + static_cast<long>(head), before);
  } else {
    std::sort(keyed_.begin(), keyed_.end(), before);
  }
  for (size_t i = 0; i < queue.size(); ++i) queue[i] = keyed_[i].second;
}

}  // namespace trellis
