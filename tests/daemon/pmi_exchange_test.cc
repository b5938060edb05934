// The agents' PMI exchange (daemon/pmi_exchange.h) with hubs wired to each other in memory, and
// the tree it runs on (daemon/exchange_tree.h): every node gets every node's bytes back once per
// barrier, whatever order contributions and launches arrive in; a step whose tasks end fails the
// answers it owes; strangers and repeats with other bytes are refused, a child's resend is taken.
#include "daemon/pmi_exchange.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>

#include "daemon/exchange_tree.h"

namespace trellis {
namespace {

// "a7": a name and a number (GCC 12 misreads "a" + std::to_string(7) under -Wrestrict).
std::string numbered(const char* prefix, long number) {
  std::string name(prefix);
  name += std::to_string(number);
  return name;
}

TEST(ExchangeTreeTest, OneParentEachAndLogarithmicHeight) {
  for (int n = 1; n <= 130; ++n) {
    for (int fanout : {1, 2, 3, 16}) {
      std::vector<std::string> agents;
      for (int i = 0; i < n; ++i) agents.push_back(numbered("a", i));
      std::map<std::string, ExchangeTreePosition> at;
      int deepest = 0;
      for (const std::string& a : agents) {
        at[a] = exchange_tree_position(agents, a, fanout);
        ASSERT_TRUE(at[a].member);
        deepest = std::max(deepest, at[a].depth);
        EXPECT_LE(static_cast<int>(at[a].children.size()), fanout);
      }
      EXPECT_FALSE(at["a0"].parent);
      EXPECT_EQ(at["a0"].height, deepest) << n << " " << fanout;
      for (const std::string& a : agents) {
        if (a == "a0") continue;
        ASSERT_TRUE(at[a].parent) << a;
        const auto& siblings = at[*at[a].parent].children;
        EXPECT_EQ(std::count(siblings.begin(), siblings.end(), a), 1) << a;
        EXPECT_EQ(at[a].depth, at[*at[a].parent].depth + 1);
      }
      if (fanout >= 2) {
        // A complete k-ary tree of n agents is ceil(log_k(n(k-1)+1)) - 1 deep; the runs of
        // switch_children() may cost one level more.
        int bound = static_cast<int>(
            std::ceil(std::log(static_cast<double>(n) * (fanout - 1) + 1) / std::log(fanout)));
        EXPECT_LE(deepest, bound) << n << " " << fanout;
      }
    }
  }
  EXPECT_FALSE(exchange_tree_position({"a", "b"}, "c", 2).member);
}

// Hubs for `agents` agents, each serving `per_agent` nodes; calls to parents are queued and
// delivered when the test says (any order).
struct Network {
  std::vector<std::string> agents;
  std::map<std::string, std::unique_ptr<PmiExchangeHub>> hubs;
  struct Call {
    std::string to, from;
    StepKey step;
    uint32_t round;
    std::string data;
    PmiExchangeHub::Answer done;
  };
  std::deque<Call> in_flight;

  explicit Network(int count) {
    for (int i = 0; i < count; ++i) agents.push_back("agent" + std::to_string(i));
    for (const std::string& a : agents) {
      hubs[a] = std::make_unique<PmiExchangeHub>(
          a, [this, a](const std::string& parent, const StepKey& step, uint32_t round,
                       std::string data, PmiExchangeHub::Answer done) {
            in_flight.push_back({parent, a, step, round, std::move(data), std::move(done)});
          });
    }
  }
  void deliver(size_t index) {
    Call call = std::move(in_flight[index]);
    in_flight.erase(in_flight.begin() + static_cast<long>(index));
    hubs[call.to]->contribute_child(call.step, call.round, call.from, std::move(call.data),
                                    std::move(call.done));
  }
};

TEST(PmiExchangeTest, EveryNodeGetsEveryNodesBytesWhateverTheOrder) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 200; ++trial) {
    int count = 1 + static_cast<int>(random() % 12);
    int per_agent = 1 + static_cast<int>(random() % 3);
    int fanout = 1 + static_cast<int>(random() % 3);
    Network net(count);
    StepKey step{7, 1, 0};
    std::map<std::string, std::vector<std::string>> nodes;  // agent -> its nodes
    for (int a = 0; a < count; ++a)
      for (int k = 0; k < per_agent; ++k)
        nodes[net.agents[static_cast<size_t>(a)]].push_back(numbered("n", a * 10 + k));
    // What to do, in random order: each agent's launch (its plan) and each node's contribution.
    std::vector<std::function<void()>> events;
    std::map<std::string, std::string> answers;  // node -> what it got back
    std::string expected;
    for (const auto& [agent, its_nodes] : nodes) {
      events.push_back([&, agent = agent] {
        StepPlan plan;
        plan.agents = net.agents;
        plan.fanout = fanout;
        plan.local_nodes.insert(nodes[agent].begin(), nodes[agent].end());
        net.hubs[agent]->expect(step, plan);
      });
      for (const std::string& node : its_nodes) {
        std::string bytes = "[" + node + "]";
        expected += bytes;
        events.push_back([&, agent = agent, node, bytes] {
          net.hubs[agent]->contribute_local(step, 1, node, bytes,
                                            [&, node](Result<std::string> all) {
                                              ASSERT_TRUE(all) << all.error().message;
                                              answers[node] = *all;
                                            });
        });
      }
    }
    std::shuffle(events.begin(), events.end(), random);
    for (auto& e : events) {
      e();
      // Deliver some of what is in flight, in any order.
      while (!net.in_flight.empty() && random() % 2) net.deliver(random() % net.in_flight.size());
    }
    while (!net.in_flight.empty()) net.deliver(random() % net.in_flight.size());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(answers.size(), static_cast<size_t>(count * per_agent));
    for (auto& [node, got] : answers) {
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, expected) << node;
    }
  }
}

// As the agents run it on the control tree (daemon/pmi_tree_link.h): a parent's answer to its
// child is not used; the root sends every node's bytes down once (send_down) and each agent's
// hub gets them with deliver(). A deliver() for a round an agent has not sent up changes nothing.
TEST(PmiExchangeTest, TheRootSendsEveryNodesBytesDownOnceAndEachAgentAnswersItsNodes) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 100; ++trial) {
    const int count = 2 + static_cast<int>(random() % 10);
    const int fanout = 1 + static_cast<int>(random() % 3);
    Network net(count);
    const StepKey step{9, 2, 1};
    std::vector<std::pair<uint32_t, std::string>> downs;  // what the root sent down
    net.hubs[net.agents[0]]->set_send_down(
        [&](const StepKey& key, uint32_t round, const std::string& data, const StepPlan& plan) {
          EXPECT_EQ(key, step);
          EXPECT_EQ(plan.agents, net.agents);
          downs.emplace_back(round, data);
        });
    std::map<std::string, std::string> answers;  // node -> what it got back
    std::string expected;
    for (int a = 0; a < count; ++a) {
      const std::string& agent = net.agents[static_cast<size_t>(a)];
      const std::string node = numbered("n", a);
      StepPlan plan;
      plan.agents = net.agents;
      plan.fanout = fanout;
      plan.local_nodes = {node};
      net.hubs[agent]->expect(step, plan);
      // Too early: nothing was sent up yet, so nothing is answered.
      net.hubs[agent]->deliver(step, 1, "early");
      expected += "[" + node + "]";
      net.hubs[agent]->contribute_local(step, 1, node, "[" + node + "]",
                                        [&, node](Result<std::string> all) {
                                          ASSERT_TRUE(all) << all.error().message;
                                          answers[node] = *all;
                                        });
    }
    // Children's answers are dropped, as the tree link drops them.
    while (!net.in_flight.empty()) {
      size_t index = random() % net.in_flight.size();
      net.in_flight[index].done = [](Result<std::string>) {};
      net.deliver(index);
    }
    ASSERT_EQ(downs.size(), 1u) << count << " agents, fanout " << fanout;
    EXPECT_EQ(downs[0].first, 1u);
    // Only the root's node has its answer before the data comes down.
    EXPECT_EQ(answers.size(), 1u);
    for (const std::string& agent : net.agents) net.hubs[agent]->deliver(step, 1, downs[0].second);
    ASSERT_EQ(answers.size(), static_cast<size_t>(count));
    std::sort(expected.begin(), expected.end());
    for (auto& [node, got] : answers) {
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, expected) << node;
    }
  }
}

TEST(PmiExchangeTest, AFinishedStepFailsWhatItOwesAndRefusesLateCallers) {
  Network net(2);
  StepKey step{3, 1, 0};
  for (const std::string& a : net.agents) {
    StepPlan plan;
    plan.agents = net.agents;
    plan.local_nodes = {a == "agent0" ? "n0" : "n1"};
    net.hubs[a]->expect(step, plan);
  }
  std::optional<Result<std::string>> got;
  net.hubs["agent0"]->contribute_local(step, 1, "n0", "x",
                                       [&](Result<std::string> r) { got = std::move(r); });
  EXPECT_FALSE(got);  // waits for agent1's subtree
  net.hubs["agent0"]->finished(step, "its tasks on this agent have ended");
  ASSERT_TRUE(got);
  ASSERT_FALSE(*got);
  EXPECT_NE(got->error().message.find("its tasks on this agent have ended"), std::string::npos);
  got.reset();
  net.hubs["agent0"]->contribute_child(step, 1, "agent1", "y",
                                       [&](Result<std::string> r) { got = std::move(r); });
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
}

TEST(PmiExchangeTest, StrangersAndRepeatsAreRefused) {
  Network net(3);
  StepKey step{3, 1, 0};
  StepPlan plan;
  plan.agents = net.agents;
  plan.fanout = 2;
  plan.local_nodes = {"n0"};
  net.hubs["agent0"]->expect(step, plan);
  std::vector<std::string> errors;
  auto record = [&](Result<std::string> r) {
    if (!r) errors.push_back(r.error().message);
  };
  net.hubs["agent0"]->contribute_local(step, 1, "n9", "x", record);
  net.hubs["agent0"]->contribute_child(step, 1, "agent7", "x", record);
  net.hubs["agent0"]->contribute_local(step, 1, "n0", "x", record);
  net.hubs["agent0"]->contribute_local(step, 1, "n0", "x", record);
  net.hubs["agent0"]->contribute_local(step, 0, "n0", "x", record);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0].find("not a node of"), std::string::npos);
  EXPECT_NE(errors[1].find("not a child of"), std::string::npos);
  EXPECT_NE(errors[2].find("twice"), std::string::npos);
  EXPECT_NE(errors[3].find("numbered from 1"), std::string::npos);
}

// A child whose parent answered too late sends its contribution again (pmi_tree_link.h): the
// same bytes are taken as the first copy, whether the round is still open or has completed, and
// the barrier completes once, with each node's bytes once. Other bytes are a second
// contribution, refused.
TEST(PmiExchangeTest, AChildsResendIsTakenAsTheFirstCopyBeforeAndAfterTheRoundCompletes) {
  Network net(3);  // fanout 2: agent0 is the parent of agent1 and agent2
  const StepKey step{4, 1, 0};
  std::vector<std::string> downs;
  net.hubs["agent0"]->set_send_down([&](const StepKey&, uint32_t, const std::string& data,
                                        const StepPlan&) { downs.push_back(data); });
  for (int a = 0; a < 3; ++a) {
    StepPlan plan;
    plan.agents = net.agents;
    plan.fanout = 2;
    plan.local_nodes = {numbered("n", a)};
    net.hubs[net.agents[static_cast<size_t>(a)]]->expect(step, plan);
  }
  std::vector<std::string> errors;
  int successes = 0;
  auto record = [&](Result<std::string> r) {
    if (r)
      ++successes;
    else
      errors.push_back(r.error().message);
  };
  std::optional<std::string> root_answer;
  net.hubs["agent0"]->contribute_local(step, 1, "n0", "[n0]", [&](Result<std::string> r) {
    ASSERT_TRUE(r);
    root_answer = *r;
  });
  net.hubs["agent1"]->contribute_local(step, 1, "n1", "[n1]", [](Result<std::string>) {});
  net.hubs["agent2"]->contribute_local(step, 1, "n2", "[n2]", [](Result<std::string>) {});
  ASSERT_EQ(net.in_flight.size(), 2u);  // agent1's and agent2's merges, on their way up
  Network::Call first = net.in_flight[0];
  // agent1's merge arrives twice while the round waits for agent2: taken once.
  net.hubs["agent0"]->contribute_child(step, 1, first.from, first.data, record);
  net.hubs["agent0"]->contribute_child(step, 1, first.from, first.data, record);
  // The same child with other bytes is refused.
  net.hubs["agent0"]->contribute_child(step, 1, first.from, first.data + "x", record);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("twice"), std::string::npos);
  EXPECT_FALSE(root_answer);
  Network::Call second = net.in_flight[1];
  net.hubs["agent0"]->contribute_child(step, 1, second.from, second.data, record);
  ASSERT_TRUE(root_answer);
  std::string sorted = *root_answer;
  std::sort(sorted.begin(), sorted.end());
  std::string expected = "[n0][n1][n2]";
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);  // each node's bytes once
  EXPECT_EQ(successes, 3);      // agent1's two copies and agent2's
  ASSERT_EQ(downs.size(), 1u);
  // After the round completed: agent2's resend is answered at once, with success, and opens no
  // new round (nothing more goes down, nothing waits).
  net.hubs["agent0"]->contribute_child(step, 1, second.from, second.data, record);
  EXPECT_EQ(successes, 4);
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_EQ(downs.size(), 1u);
  EXPECT_EQ(net.hubs["agent0"]->rounds_completed(), 1);
  // The next barrier is unaffected.
  root_answer.reset();
  net.hubs["agent0"]->contribute_local(step, 2, "n0", "<n0>", [&](Result<std::string> r) {
    ASSERT_TRUE(r);
    root_answer = *r;
  });
  net.hubs["agent0"]->contribute_child(step, 2, "agent1", "<n1>", record);
  EXPECT_FALSE(root_answer);
  net.hubs["agent0"]->contribute_child(step, 2, "agent2", "<n2>", record);
  ASSERT_TRUE(root_answer);
  EXPECT_EQ(root_answer->size(), 12u);
}

TEST(PmiExchangeTest, AContributionWithoutALaunchExpires) {
  Network net(1);
  std::optional<Result<std::string>> got;
  net.hubs["agent0"]->contribute_local({1, 1, 0}, 1, "n0", "x",
                                       [&](Result<std::string> r) { got = std::move(r); });
  net.hubs["agent0"]->expire(std::chrono::steady_clock::now());
  EXPECT_FALSE(got);
  net.hubs["agent0"]->expire(std::chrono::steady_clock::now() + PmiExchangeHub::kPlanTimeout +
                             std::chrono::seconds(1));
  ASSERT_TRUE(got);
  ASSERT_FALSE(*got);
  EXPECT_NE(got->error().message.find("never got the step's launch"), std::string::npos);
}

}  // namespace
}  // namespace trellis
