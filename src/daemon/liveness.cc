#include "daemon/liveness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trellis {

void Liveness::add(const std::string& agent, const std::vector<NodeId>& nodes, Seconds now) {
  std::lock_guard lock(mutex_);
  std::vector<NodeId> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  // A node has one agent: whoever registered it last.
  for (auto it = agents_.begin(); it != agents_.end();) {
    if (it->first != agent) {
      std::vector<NodeId>& theirs = it->second.nodes;
      std::erase_if(theirs,
                    [&](NodeId n) { return std::binary_search(sorted.begin(), sorted.end(), n); });
      if (theirs.empty()) {
        it = agents_.erase(it);
        continue;
      }
    }
    ++it;
  }
  Agent& a = agents_[agent];
  a.nodes = std::move(sorted);
  a.registration_wanted = false;
  heard(a, agent, now);
  a.down = false;
}

bool Liveness::knows(const std::string& agent) const {
  std::lock_guard lock(mutex_);
  return agents_.count(agent) > 0;
}

void Liveness::clear() {
  std::lock_guard lock(mutex_);
  agents_.clear();
  changes_.clear();
}

std::vector<std::string> Liveness::agents() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<NodeId, std::string>> by_node;
  for (const auto& [name, agent] : agents_)
    by_node.emplace_back(agent.nodes.empty() ? -1 : agent.nodes.front(), name);
  std::sort(by_node.begin(), by_node.end());
  std::vector<std::string> out;
  for (auto& [node, name] : by_node) out.push_back(std::move(name));
  return out;
}

void Liveness::want_registration(const std::string& agent) {
  std::lock_guard lock(mutex_);
  auto it = agents_.find(agent);
  if (it != agents_.end()) it->second.registration_wanted = true;
}

std::vector<std::string> Liveness::registration_wanted(Seconds now) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (auto& [name, agent] : agents_) {
    // Asked at most every two seconds: a registration that holds its nodes down (processes of an
    // ended attempt still run there, and are being killed) is tried again, not in a loop.
    if (!agent.registration_wanted || now - agent.registration_asked < 2) continue;
    agent.registration_asked = now;
    out.push_back(name);
  }
  return out;
}

void Liveness::heard(Agent& agent, const std::string& name, Seconds now) {
  agent.last_heard = now;
  agent.missed = 0;
  agent.probe_due = false;
  agent.probe_failed = false;
  if (agent.unresponsive || agent.down) {
    agent.unresponsive = false;
    // A declared-down agent comes back through its registration, which the controller handles;
    // one only unresponsive takes new jobs again now.
    if (!agent.down) changes_.push_back({Change::Kind::kResponsive, name, agent.nodes, ""});
  }
}

void Liveness::round(const std::vector<std::string>& pinged, const std::vector<std::string>& failed,
                     Seconds now) {
  std::lock_guard lock(mutex_);
  std::set<std::string> lost(failed.begin(), failed.end());
  for (const std::string& name : pinged) {
    auto it = agents_.find(name);
    if (it == agents_.end()) continue;  // registered elsewhere meanwhile
    Agent& agent = it->second;
    if (!lost.contains(name)) {
      heard(agent, name, now);
      continue;
    }
    ++agent.missed;
    if (agent.down) continue;
    if (!agent.unresponsive && agent.missed >= misses_) {
      agent.unresponsive = true;
      agent.probe_due = true;
      agent.probe_failed = false;
      changes_.push_back({Change::Kind::kUnresponsive, name, agent.nodes,
                          "missed " + std::to_string(agent.missed) + " pings"});
    }
    if (agent.unresponsive && agent.probe_failed && agent.missed >= 2 * misses_) {
      agent.down = true;
      char age[32];
      std::snprintf(age, sizeof age, "%.1f", now - agent.last_heard);
      changes_.push_back(
          {Change::Kind::kDown, name, agent.nodes,
           "agent " + name + " last heard " + age + " s ago; " + std::to_string(agent.missed) +
               " pings in a row unanswered, then a direct probe: " + agent.probe_error});
    }
  }
}

std::vector<std::string> Liveness::to_probe() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, agent] : agents_)
    if (agent.unresponsive && !agent.down && agent.probe_due) out.push_back(name);
  return out;
}

void Liveness::probed(const std::string& agent, bool answered, const std::string& why,
                      Seconds now) {
  std::lock_guard lock(mutex_);
  auto it = agents_.find(agent);
  if (it == agents_.end()) return;
  if (answered) {
    heard(it->second, agent, now);
    return;
  }
  it->second.probe_due = false;
  it->second.probe_failed = true;
  it->second.probe_error = why.empty() ? "no answer" : why;
}

std::vector<Liveness::Change> Liveness::take_changes() {
  std::lock_guard lock(mutex_);
  std::vector<Change> out;
  out.swap(changes_);
  return out;
}

Seconds Liveness::last_heard(const std::string& agent) const {
  std::lock_guard lock(mutex_);
  auto it = agents_.find(agent);
  return it == agents_.end() ? 0 : it->second.last_heard;
}

std::map<std::string, std::pair<std::vector<NodeId>, Seconds>> Liveness::heard() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::pair<std::vector<NodeId>, Seconds>> out;
  for (const auto& [name, agent] : agents_) out[name] = {agent.nodes, agent.last_heard};
  return out;
}

}  // namespace trellis
