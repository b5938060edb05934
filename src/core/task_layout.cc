#include "core/task_layout.h"

#include <algorithm>
#include <charconv>

namespace trellis {

std::string_view distribution_name(Distribution d) {
  return d == Distribution::kCyclic ? "cyclic" : "block";
}

Result<Distribution> parse_distribution(std::string_view text) {
  if (text == "block" || text.empty()) return Distribution::kBlock;
  if (text == "cyclic") return Distribution::kCyclic;
  return fail("distribution: '" + std::string(text) + "'; expected block or cyclic");
}

TaskLayout::TaskLayout(std::vector<int> counts, Distribution distribution)
    : counts_(std::move(counts)), distribution_(distribution) {
  first_.reserve(counts_.size());
  for (int c : counts_) {
    first_.push_back(ntasks_);
    ntasks_ += c;
  }
}

Result<TaskLayout> TaskLayout::plan(int nnodes, int ntasks, int per_node,
                                    Distribution distribution) {
  if (nnodes <= 0) return fail("nodes: " + std::to_string(nnodes) + "; must be at least 1");
  if (per_node < 0 || per_node > kMaxTasksPerNode)
    return fail("ntasks-per-node: " + std::to_string(per_node) + "; must be 1.." +
                std::to_string(kMaxTasksPerNode));
  if (ntasks < 0 || ntasks > kMaxTasks)
    return fail("ntasks: " + std::to_string(ntasks) + "; must be 1.." + std::to_string(kMaxTasks));
  if (ntasks == 0) {
    long long all = static_cast<long long>(nnodes) * (per_node > 0 ? per_node : 1);
    if (all > kMaxTasks)
      return fail("ntasks: " + std::to_string(all) + " tasks (" + std::to_string(nnodes) +
                  " nodes) is more than " + std::to_string(kMaxTasks));
    ntasks = static_cast<int>(all);
  }
  if (per_node > 0) {
    if (static_cast<long long>(per_node) * nnodes < ntasks)
      return fail("ntasks: " + std::to_string(ntasks) + " tasks do not fit on " +
                  std::to_string(nnodes) + " nodes at " + std::to_string(per_node) + " per node");
    if (ntasks < nnodes)
      return fail("ntasks: " + std::to_string(ntasks) + " tasks at " + std::to_string(per_node) +
                  " per node leave some of the " + std::to_string(nnodes) + " nodes empty");
  }
  if (ntasks / nnodes + (ntasks % nnodes ? 1 : 0) > kMaxTasksPerNode)
    return fail("ntasks: " + std::to_string(ntasks) + " tasks on " + std::to_string(nnodes) +
                " nodes is more than " + std::to_string(kMaxTasksPerNode) + " per node");
  // Even spread: the first ntasks % nnodes nodes take one more. (With fewer tasks than nodes,
  // the first ntasks nodes take one each; the rest are held for the job with none.)
  std::vector<int> counts(static_cast<size_t>(nnodes), ntasks / nnodes);
  for (int i = 0; i < ntasks % nnodes; ++i) ++counts[static_cast<size_t>(i)];
  return TaskLayout(std::move(counts), distribution);
}

Result<TaskLayout> TaskLayout::from_counts(std::vector<int> counts, Distribution distribution) {
  if (counts.empty()) return fail("tasks per node: no nodes");
  long long total = 0;
  for (int c : counts) {
    if (c < 0 || c > kMaxTasksPerNode)
      return fail("tasks per node: " + std::to_string(c) + "; must be 0.." +
                  std::to_string(kMaxTasksPerNode));
    total += c;
  }
  if (total == 0) return fail("tasks per node: no tasks");
  if (total > kMaxTasks) return fail("tasks per node: more than " + std::to_string(kMaxTasks));
  if (distribution == Distribution::kCyclic) {
    // Dealing in turn gives the first nodes at most one more than the later ones.
    for (size_t i = 1; i < counts.size(); ++i)
      if (counts[i] > counts[i - 1] || counts[0] - counts[i] > 1)
        return fail(
            "tasks per node: a cyclic layout gives each node as many tasks as the next, "
            "or one more");
  }
  return TaskLayout(std::move(counts), distribution);
}

std::vector<int> TaskLayout::ranks_on(int node) const {
  std::vector<int> ranks;
  if (node < 0 || node >= nnodes()) return ranks;
  int count = counts_[static_cast<size_t>(node)];
  ranks.reserve(static_cast<size_t>(count));
  if (distribution_ == Distribution::kBlock) {
    for (int i = 0; i < count; ++i) ranks.push_back(first_[static_cast<size_t>(node)] + i);
  } else {
    // Dealt in turn among the nodes that take a task in each round: with balanced counts, round
    // k deals to every node whose count exceeds k, and those are the first ones.
    int rank = 0;
    for (int round = 0; round < count; ++round) {
      int in_round = 0, before = 0;
      for (size_t n = 0; n < counts_.size(); ++n) {
        if (counts_[n] > round) {
          if (static_cast<int>(n) < node) ++before;
          ++in_round;
        }
      }
      ranks.push_back(rank + before);
      rank += in_round;
    }
  }
  return ranks;
}

int TaskLayout::node_of(int rank) const {
  if (rank < 0 || rank >= ntasks_) return -1;
  if (distribution_ == Distribution::kBlock) {
    auto after = std::upper_bound(first_.begin(), first_.end(), rank);
    // Nodes with no task share their first rank with the next node: take the last node whose
    // first rank is <= rank and that holds tasks.
    int node = static_cast<int>(after - first_.begin()) - 1;
    while (node > 0 && counts_[static_cast<size_t>(node)] == 0) --node;
    return node;
  }
  int rank_left = rank;
  for (int round = 0;; ++round) {
    int in_round = 0;
    for (int c : counts_) in_round += c > round ? 1 : 0;
    if (rank_left < in_round) {
      for (size_t n = 0; n < counts_.size(); ++n)
        if (counts_[n] > round && rank_left-- == 0) return static_cast<int>(n);
    }
    rank_left -= in_round;
  }
}

std::string TaskLayout::slurm_tasks_per_node() const {
  std::string out;
  for (size_t i = 0; i < counts_.size();) {
    size_t j = i;
    while (j < counts_.size() && counts_[j] == counts_[i]) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(counts_[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

std::string TaskLayout::pmi_process_mapping() const {
  std::string out = "(vector";
  if (distribution_ == Distribution::kCyclic) {
    // One rank to each node of the first round, repeated.
    int first_round = 0;
    for (int c : counts_) first_round += c > 0 ? 1 : 0;
    return out + ",(0," + std::to_string(first_round) + ",1))";
  }
  for (size_t i = 0; i < counts_.size();) {
    size_t j = i;
    while (j < counts_.size() && counts_[j] == counts_[i]) ++j;
    if (counts_[i] > 0)
      out += ",(" + std::to_string(i) + "," + std::to_string(j - i) + "," +
             std::to_string(counts_[i]) + ")";
    i = j;
  }
  return out + ")";
}

std::string format_ranges(const std::vector<int>& ascending) {
  std::string out;
  for (size_t i = 0; i < ascending.size();) {
    size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ascending[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(ascending[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string TaskLayout::describe(const std::vector<std::string>& names) const {
  constexpr int kShownNodes = 16;
  std::string out;
  for (int n = 0; n < nnodes() && n < kShownNodes; ++n) {
    if (!out.empty()) out += " ";
    std::string name =
        static_cast<size_t>(n) < names.size() ? names[static_cast<size_t>(n)] : std::to_string(n);
    std::vector<int> ranks = ranks_on(n);
    out += name + ":" + (ranks.empty() ? std::string("-") : format_ranges(ranks));
  }
  if (nnodes() > kShownNodes) out += " ... (" + std::to_string(nnodes()) + " nodes)";
  return out;
}

Result<std::vector<int>> parse_slurm_tasks_per_node(std::string_view text) {
  std::vector<int> counts;
  size_t at = 0;
  auto number = [&](int& value) {
    const char* begin = text.data() + at;
    auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec != std::errc() || end == begin) return false;
    at += static_cast<size_t>(end - begin);
    return true;
  };
  while (at < text.size()) {
    int count = 0, repeat = 1;
    if (!number(count) || count < 0 || count > kMaxTasksPerNode)
      return fail("tasks per node '" + std::string(text) + "': expected a count at column " +
                  std::to_string(at + 1));
    if (text.substr(at).starts_with("(x")) {
      at += 2;
      if (!number(repeat) || repeat < 1 || at >= text.size() || text[at] != ')')
        return fail("tasks per node '" + std::string(text) + "': expected (xN) at column " +
                    std::to_string(at + 1));
      ++at;
    }
    if (counts.size() + static_cast<size_t>(repeat) > static_cast<size_t>(kMaxTasks))
      return fail("tasks per node '" + std::string(text) + "': too many nodes");
    counts.insert(counts.end(), static_cast<size_t>(repeat), count);
    if (at < text.size()) {
      if (text[at] != ',')
        return fail("tasks per node '" + std::string(text) + "': expected ',' at column " +
                    std::to_string(at + 1));
      ++at;
      if (at == text.size())
        return fail("tasks per node '" + std::string(text) + "': ends with ','");
    }
  }
  if (counts.empty()) return fail("tasks per node: empty");
  return counts;
}

}  // namespace trellis
