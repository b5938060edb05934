#include "daemon/pmi_exchange.h"

#include <algorithm>

#include "shell/exchange_wire.h"

namespace trellis {
namespace {

// How many finished steps are remembered, so that a late contribution gets an error at once.
constexpr size_t kRememberedEnded = 4096;

}  // namespace

std::string StepKey::name() const {
  return std::to_string(job) + "." + std::to_string(attempt) + "." + std::to_string(step);
}

PmiExchangeHub::PmiExchangeHub(std::string self, SendUp send_up)
    : self_(std::move(self)), send_up_(std::move(send_up)) {}

void PmiExchangeHub::set_self(std::string self) {
  std::lock_guard lock(mutex_);
  self_ = std::move(self);
}

void PmiExchangeHub::set_log(std::function<void(const std::string&)> log) {
  std::lock_guard lock(mutex_);
  log_ = std::move(log);
}

void PmiExchangeHub::set_send_down(SendDown send_down) {
  std::lock_guard lock(mutex_);
  send_down_ = std::move(send_down);
}

void PmiExchangeHub::deliver(const StepKey& key, uint32_t number, std::string data) {
  {
    std::lock_guard lock(mutex_);
    auto step = steps_.find(key);
    if (step == steps_.end()) return;
    auto round = step->second.rounds.find(number);
    if (round == step->second.rounds.end() || !round->second.sent_up) return;
  }
  complete(key, number, std::move(data));
}

std::vector<StepKey> PmiExchangeHub::steps() const {
  std::lock_guard lock(mutex_);
  std::vector<StepKey> out;
  for (const auto& [key, step] : steps_) out.push_back(key);
  return out;
}

void PmiExchangeHub::run(Deferred& later) {
  for (auto& [answer, result] : later) answer(std::move(result));
  later.clear();
}

void PmiExchangeHub::expect(const StepKey& key, StepPlan plan) {
  Deferred later;
  {
    std::lock_guard lock(mutex_);
    if (std::find(ended_.begin(), ended_.end(), key) != ended_.end()) return;
    Step& step = steps_[key];
    if (step.plan) return;
    step.position = exchange_tree_position(plan.agents, self_, plan.fanout);
    step.plan = std::move(plan);
    if (!step.position.member) {
      std::string why =
          "step " + key.name() + ": this agent (" + self_ + ") is not among the step's agents";
      for (auto& [number, round] : step.rounds)
        for (Answer& a : round.answers) later.emplace_back(std::move(a), fail(why));
      step.rounds.clear();
    } else {
      std::vector<uint32_t> numbers;
      for (const auto& [number, round] : step.rounds) numbers.push_back(number);
      for (uint32_t number : numbers) advance(key, step, number, later);
    }
  }
  run(later);
}

std::optional<StepPlan> PmiExchangeHub::plan(const StepKey& key) const {
  std::lock_guard lock(mutex_);
  auto it = steps_.find(key);
  if (it == steps_.end()) return std::nullopt;
  return it->second.plan;
}

void PmiExchangeHub::contribute_local(const StepKey& step, uint32_t round, const std::string& node,
                                      std::string data, Answer answer) {
  contribute(step, round, true, node, std::move(data), std::move(answer));
}

void PmiExchangeHub::contribute_child(const StepKey& step, uint32_t round, const std::string& from,
                                      std::string data, Answer answer) {
  contribute(step, round, false, from, std::move(data), std::move(answer));
}

void PmiExchangeHub::contribute(const StepKey& key, uint32_t number, bool local,
                                const std::string& who, std::string data, Answer answer) {
  Deferred later;
  {
    std::lock_guard lock(mutex_);
    std::string what = (local ? "node " : "agent ") + who + ", step " + key.name() + ", barrier " +
                       std::to_string(number);
    if (number == 0) {
      later.emplace_back(std::move(answer), fail(what + ": barriers are numbered from 1"));
    } else if (std::find(ended_.begin(), ended_.end(), key) != ended_.end()) {
      later.emplace_back(std::move(answer), fail(what + ": the step has ended on " + self_));
    } else if (auto done = steps_.find(key); !local && done != steps_.end() &&
                                             number <= done->second.completed_through &&
                                             !done->second.rounds.contains(number)) {
      // A child's resend of a contribution to a barrier that completed here, so its first copy
      // arrived: the data has gone down the tree already.
      later.emplace_back(std::move(answer), std::string());
    } else {
      Step& step = steps_[key];
      Round& round = step.rounds[number];
      if (round.answers.empty() && round.local.empty() && round.children.empty())
        round.started = std::chrono::steady_clock::now();
      auto& from = local ? round.local : round.children;
      bool allowed = true;
      if (step.plan) {
        allowed = local ? step.plan->local_nodes.contains(who)
                        : std::find(step.position.children.begin(), step.position.children.end(),
                                    who) != step.position.children.end();
      }
      if (!allowed) {
        later.emplace_back(std::move(answer),
                           fail(what + ": not " + (local ? "a node of" : "a child of") + " " +
                                self_ + " in this step"));
      } else if (auto earlier = from.find(who); earlier != from.end()) {
        // A child's resend whose first copy arrived (its answer came too late for the child) is
        // the same bytes: taken again. Different bytes are a second contribution: refused.
        if (!local && earlier->second == data)
          round.answers.push_back(std::move(answer));
        else
          later.emplace_back(std::move(answer), fail(what + ": contributed twice"));
      } else {
        size_t total = data.size();
        for (const auto& [n, bytes] : round.local) total += bytes.size();
        for (const auto& [n, bytes] : round.children) total += bytes.size();
        if (total > kMaxExchangeMessage) {
          later.emplace_back(std::move(answer),
                             fail(what + ": the barrier's data passed " +
                                  std::to_string(kMaxExchangeMessage) + " bytes"));
        } else {
          from[who] = std::move(data);
          round.answers.push_back(std::move(answer));
          if (step.plan) advance(key, step, number, later);
        }
      }
    }
  }
  run(later);
}

void PmiExchangeHub::advance(const StepKey& key, Step& step, uint32_t number, Deferred& later) {
  auto it = step.rounds.find(number);
  if (it == step.rounds.end()) return;
  Round& round = it->second;
  if (round.sent_up) return;
  // Contributions that came before the plan said who may contribute: a stranger fails the round.
  bool stranger = false;
  for (const auto& [node, bytes] : round.local) stranger |= !step.plan->local_nodes.contains(node);
  for (const auto& [child, bytes] : round.children)
    stranger |= std::find(step.position.children.begin(), step.position.children.end(), child) ==
                step.position.children.end();
  if (stranger) {
    for (Answer& a : round.answers)
      later.emplace_back(std::move(a),
                         fail("step " + key.name() + ", barrier " + std::to_string(number) +
                              ": a contribution came from outside this agent's part of the step"));
    step.rounds.erase(it);
    return;
  }
  if (round.local.size() < step.plan->local_nodes.size() ||
      round.children.size() < step.position.children.size())
    return;
  std::string merged;
  for (const auto& [node, bytes] : round.local) merged += bytes;
  for (const auto& [child, bytes] : round.children) merged += bytes;
  if (!step.position.parent) {  // the root: the merge is everything
    std::vector<Answer> answers = std::move(round.answers);
    step.rounds.erase(it);
    step.completed_through = std::max(step.completed_through, number);
    ++rounds_completed_;
    if (log_) {
      std::string line = "pmi exchange: step " + key.name() + " barrier " + std::to_string(number) +
                         " complete: " + std::to_string(step.plan->agents.size()) +
                         " agents, tree height " + std::to_string(step.position.height) + ", " +
                         std::to_string(merged.size()) + " bytes";
      later.emplace_back([log = log_, line](Result<std::string>) { log(line); }, std::string());
    }
    if (send_down_ && step.plan->agents.size() > 1) {
      later.emplace_back([send_down = send_down_, key, number, merged, plan = *step.plan](
                             Result<std::string>) { send_down(key, number, merged, plan); },
                         std::string());
    }
    for (Answer& a : answers) later.emplace_back(std::move(a), merged);
    return;
  }
  round.sent_up = true;
  std::string parent = *step.position.parent;
  // The call is made without the lock (it may answer at once); `later` runs after unlock, so the
  // send is queued as a deferred "answer" of its own.
  later.emplace_back(
      [this, parent, key, number, merged = std::move(merged)](Result<std::string>) mutable {
        send_up_(parent, key, number, std::move(merged),
                 [this, key, number](Result<std::string> all) { complete(key, number, all); });
      },
      std::string());
}

void PmiExchangeHub::complete(const StepKey& key, uint32_t number, Result<std::string> all) {
  std::vector<Answer> answers;
  {
    std::lock_guard lock(mutex_);
    auto step = steps_.find(key);
    if (step == steps_.end()) return;  // finished meanwhile: its answers were failed then
    auto round = step->second.rounds.find(number);
    if (round == step->second.rounds.end()) return;
    answers = std::move(round->second.answers);
    step->second.rounds.erase(round);
    step->second.completed_through = std::max(step->second.completed_through, number);
    if (all) ++rounds_completed_;
  }
  for (Answer& a : answers) a(all);
}

void PmiExchangeHub::finished(const StepKey& key, const std::string& why) {
  Deferred later;
  {
    std::lock_guard lock(mutex_);
    auto step = steps_.find(key);
    if (step != steps_.end()) {
      for (auto& [number, round] : step->second.rounds)
        for (Answer& a : round.answers)
          later.emplace_back(std::move(a), fail("step " + key.name() + ": " + why));
      steps_.erase(step);
    }
    if (std::find(ended_.begin(), ended_.end(), key) == ended_.end()) {
      ended_.push_back(key);
      if (ended_.size() > kRememberedEnded) ended_.pop_front();
    }
  }
  run(later);
}

void PmiExchangeHub::expire(std::chrono::steady_clock::time_point now) {
  Deferred later;
  {
    std::lock_guard lock(mutex_);
    for (auto step = steps_.begin(); step != steps_.end();) {
      if (step->second.plan) {
        ++step;
        continue;
      }
      for (auto round = step->second.rounds.begin(); round != step->second.rounds.end();) {
        if (now - round->second.started < kPlanTimeout) {
          ++round;
          continue;
        }
        for (Answer& a : round->second.answers)
          later.emplace_back(std::move(a), fail("step " + step->first.name() +
                                                ": this agent never got the step's launch"));
        round = step->second.rounds.erase(round);
      }
      if (step->second.rounds.empty())
        step = steps_.erase(step);
      else
        ++step;
    }
  }
  run(later);
}

int64_t PmiExchangeHub::rounds_completed() const {
  std::lock_guard lock(mutex_);
  return rounds_completed_;
}

}  // namespace trellis
