#include "daemon/tree/tree_reply.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "daemon/tree/tree_shape.h"

namespace trellis {
namespace {

Status check_jobs(const google::protobuf::RepeatedPtrField<v1::JobAttempt>& jobs,
                  const std::string& field) {
  for (const v1::JobAttempt& job : jobs)
    if (job.job_id() <= 0 || job.attempt() <= 0)
      return fail(field + ": job " + std::to_string(job.job_id()) + " attempt " +
                  std::to_string(job.attempt()) + ": ids and attempts start at 1");
  return Ok{};
}

// FNV-1a, 64 bits.
uint64_t address_hash(std::string_view address) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : address) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace

Status check_tree_body(const v1::TreeBody& body) {
  if (body.agents_size() == 0) return fail("agents: none");
  if (body.agents_size() > kMaxTreeAgents)
    return fail("agents: " + std::to_string(body.agents_size()) + "; at most " +
                std::to_string(kMaxTreeAgents));
  // Every agent checks every message's list: addresses are told apart by a hash each, sorted as
  // integers (a sort of the strings was a fiftieth of a 64-agent switch's CPU time, every agent
  // comparing addresses that differ only in their last characters); the strings are compared only
  // when two hashes are equal.
  std::vector<uint64_t> hashes;
  hashes.reserve(static_cast<size_t>(body.agents_size()));
  for (const std::string& agent : body.agents()) {
    if (agent.empty() || agent.size() > kMaxTreeAddressBytes)
      return fail("agents: an address is empty or longer than " +
                  std::to_string(kMaxTreeAddressBytes) + " bytes");
    hashes.push_back(address_hash(agent));
  }
  std::sort(hashes.begin(), hashes.end());
  if (std::adjacent_find(hashes.begin(), hashes.end()) != hashes.end()) {
    std::vector<std::string_view> sorted(body.agents().begin(), body.agents().end());
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      return fail("agents: " + std::string(*twice) + " appears twice");
  }
  if (body.fanout() < 1 || body.fanout() > kMaxTreeFanout)
    return fail("fanout: " + std::to_string(body.fanout()) + "; must be 1.." +
                std::to_string(kMaxTreeFanout));
  if (!(body.deadline_seconds() > 0 && body.deadline_seconds() <= 60))
    return fail("deadline_seconds: " + std::to_string(body.deadline_seconds()) +
                "; must be in (0, 60]");
  switch (body.op_case()) {
    case v1::TreeBody::kGangSwitch: {
      const v1::GangSwitch& s = body.gang_switch();
      const int jobs = s.freeze_size() + s.thaw_size() + s.probe_size() + s.skip_activity_size();
      if (jobs > kMaxTreeJobs)
        return fail("gang_switch: " + std::to_string(jobs) + " jobs; at most " +
                    std::to_string(kMaxTreeJobs));
      if (Status ok = check_jobs(s.freeze(), "gang_switch.freeze"); !ok) return ok;
      if (Status ok = check_jobs(s.thaw(), "gang_switch.thaw"); !ok) return ok;
      if (Status ok = check_jobs(s.probe(), "gang_switch.probe"); !ok) return ok;
      return check_jobs(s.skip_activity(), "gang_switch.skip_activity");
    }
    case v1::TreeBody::kLaunch:
      if (body.launch().launches_size() > kMaxTreeJobs)
        return fail("launch: " + std::to_string(body.launch().launches_size()) +
                    " launches; at most " + std::to_string(kMaxTreeJobs));
      return Ok{};
    case v1::TreeBody::kSignal:
    case v1::TreeBody::kPing:
      return Ok{};
    case v1::TreeBody::kPmiExchange: {
      const v1::PmiExchange& x = body.pmi_exchange();
      if (x.job_id() <= 0 || x.attempt() <= 0 || x.step() < 0 || x.round() == 0)
        return fail("pmi_exchange: job_id, attempt and round must be positive, step not negative");
      if (x.from().empty() || x.from().size() > kMaxTreeAddressBytes)
        return fail("pmi_exchange.from: empty or longer than " +
                    std::to_string(kMaxTreeAddressBytes) + " bytes");
      return Ok{};
    }
    case v1::TreeBody::OP_NOT_SET:
      break;
  }
  return fail("op: none (gang_switch, launch, signal, ping or pmi_exchange)");
}

void merge_tree_reply(const v1::TreeReply& child, v1::TreeReply& into) {
  into.set_agents(into.agents() + child.agents());
  for (const std::string& f : child.failed()) into.add_failed(f);
  for (const std::string& u : child.unreached()) into.add_unreached(u);
  for (const std::string& e : child.errors()) into.add_errors(e);
  into.set_processes(into.processes() + child.processes());
  for (int i = 0; i < child.launches_size(); ++i) {
    while (into.launches_size() <= i) into.add_launches();
    if (into.launches(i).code() == 0 && child.launches(i).code() != 0)
      *into.mutable_launches(i) = child.launches(i);
  }
  if (!child.has_gang_switch()) return;
  const v1::SwitchReply& from = child.gang_switch();
  v1::SwitchReply& to = *into.mutable_gang_switch();
  for (const v1::JobActivity& a : from.activity()) {
    v1::JobActivity* same = nullptr;
    for (v1::JobActivity& mine : *to.mutable_activity())
      if (mine.job_id() == a.job_id() && mine.attempt() == a.attempt()) same = &mine;
    if (same == nullptr) {
      *to.add_activity() = a;
      continue;
    }
    same->set_tasks(same->tasks() + a.tasks());
    same->set_processes(same->processes() + a.processes());
    same->set_running(same->running() + a.running());
    same->set_waiting_input(same->waiting_input() + a.waiting_input());
    same->set_waiting_message(same->waiting_message() + a.waiting_message());
  }
  to.set_freeze_us(std::max(to.freeze_us(), from.freeze_us()));
  to.set_collect_us(std::max(to.collect_us(), from.collect_us()));
  to.set_thaw_us(std::max(to.thaw_us(), from.thaw_us()));
}

v1::TreeReply lost_subtree(const std::string& child, const std::vector<std::string>& subtree,
                           const std::string& why) {
  v1::TreeReply lost;
  lost.add_failed(child);
  for (const std::string& agent : subtree) lost.add_unreached(agent);
  lost.add_errors(child + ": " + why);
  return lost;
}

std::string tree_op_name(const v1::TreeBody& body) {
  switch (body.op_case()) {
    case v1::TreeBody::kGangSwitch:
      return "gang switch " + std::to_string(body.gang_switch().switch_id());
    case v1::TreeBody::kLaunch:
      return "launch of " + std::to_string(body.launch().launches_size()) + " job(s)";
    case v1::TreeBody::kSignal:
      return "signal " + std::to_string(body.signal().signal()) + " to job " +
             std::to_string(body.signal().job_id());
    case v1::TreeBody::kPing:
      return "ping";
    case v1::TreeBody::kPmiExchange:
      return "pmi exchange of job " + std::to_string(body.pmi_exchange().job_id()) + " step " +
             std::to_string(body.pmi_exchange().step()) + " barrier " +
             std::to_string(body.pmi_exchange().round()) +
             (body.pmi_exchange().complete() ? " (down)" : " (up)");
    case v1::TreeBody::OP_NOT_SET:
      break;
  }
  return "empty message";
}

}  // namespace trellis
