// Options of every kind of component (allocators, queue policies, gang policies) go through the
// one key=value parser, return a Result (never throw), and their errors name the component's
// kind and the component: "queue policy 'fattree-batch' option njob='0': ...".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "alloc/registry.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"

namespace trellis {
namespace {

template <typename Options>
Options options_of(const std::string& list) {
  Options o;
  EXPECT_TRUE(o.add_list(list)) << list;
  return o;
}

std::string allocator_error(const std::string& name, const std::string& machine,
                            const std::string& options) {
  auto made = AllocatorRegistry::builtin().create(name, *Machine::parse(machine),
                                                  options_of<AllocatorOptions>(options));
  return made ? "" : made.error().message;
}

TEST(ComponentOptions, AllocatorErrorsNameTheAllocator) {
  EXPECT_EQ(allocator_error("contiguous", "torus:4x4", "speed=3"),
            "allocator 'contiguous' has no option 'speed' (it takes: search)");
  EXPECT_EQ(allocator_error("random", "torus:4x4", "seed=x"),
            "allocator 'random' option seed='x': expected a whole number of at least 0");
  EXPECT_EQ(allocator_error("mc1x1", "torus:4x4", "wrap=maybe"),
            "allocator 'mc1x1' option wrap='maybe': expected yes or no");
  EXPECT_EQ(allocator_error("linear-bestfit-hilbert", "torus:4x4", "fallback=retry"),
            "allocator 'linear-bestfit-hilbert' option fallback='retry': expected minspan or fail");
  EXPECT_EQ(allocator_error("fattree-units", "fattree:4,4", "unit=3"),
            "allocator 'fattree-units' option unit='3': expected a whole number dividing the leaf "
            "fan-out 4");
  EXPECT_EQ(allocator_error("buddy", "flat:8", "curve=hilbert"),
            "allocator 'buddy' option curve='hilbert': the hilbert curve needs a mesh or torus, "
            "not flat, 8 nodes");
  EXPECT_EQ(
      allocator_error("contiguous", "torus:4x4", "search=fast")
          .rfind("allocator 'contiguous' option search='fast': search 'fast' is not one of", 0),
      0u);
  EXPECT_EQ(allocator_error("buddy", "flat:8", "curve=rowmajor"), "");
}

TEST(ComponentOptions, QueuePolicyErrorsNameThePolicy) {
  const Machine tree = *Machine::parse("fattree:4,4");
  auto easy = PolicyRegistry::builtin().create("easy", tree, options_of<PolicyOptions>("njob=2"));
  ASSERT_FALSE(easy);
  EXPECT_EQ(easy.error().message, "queue policy 'easy' has no option 'njob' (it takes none)");
  auto batch =
      PolicyRegistry::builtin().create("fattree-batch", tree, options_of<PolicyOptions>("njob=0"));
  ASSERT_FALSE(batch);
  EXPECT_EQ(batch.error().message,
            "queue policy 'fattree-batch' option njob='0': expected a whole number of at least 1");
  EXPECT_TRUE(
      PolicyRegistry::builtin().create("fattree-batch", tree, options_of<PolicyOptions>("njob=2")));
}

TEST(ComponentOptions, GangPolicyErrorsNameThePolicy) {
  KeyValueOptions given("gang policy");
  ASSERT_TRUE(given.add_list("fanout=1,quantum=10"));
  auto fanout = gang::parse_gang_policy_options(given.for_component("dqt-ffapa"));
  ASSERT_FALSE(fanout);
  EXPECT_EQ(fanout.error().message,
            "gang policy 'dqt-ffapa' option fanout='1': expected a whole number of at least 2");
  EXPECT_EQ(given.for_component("dqt-ffapa").only({"fanout"}).error().message,
            "gang policy 'dqt-ffapa' has no option 'quantum' (it takes: fanout)");
  KeyValueOptions good("gang policy");
  ASSERT_TRUE(good.add_list("fanout=4,max_jobs_per_node=2"));
  auto parsed = gang::parse_gang_policy_options(good.for_component("dqt-apa"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->fanout, 4);
  EXPECT_EQ(parsed->max_jobs_per_node, 2);

  const auto& gangs = gang::GangPolicyRegistry::builtin();
  EXPECT_EQ(gangs.create("fcfs-bb", 12).error().message,
            "gang policy 'fcfs-bb': binary buddy: the machine must have a power-of-two number of "
            "processors, got 12");
  EXPECT_EQ(gangs.create("dqt-apa", 8, *parsed)
                .error()
                .message.rfind(
                    "gang policy 'dqt-apa': partition tree: 8 processors is not a power of the "
                    "fan-out 4",
                    0),
            0u);
  EXPECT_EQ(gangs.create("slurm-gang", 8, gang::GangPolicyOptions{2, 0, false}).error().message,
            "gang policy 'slurm-gang': slurm-gang: max jobs per node must be at least 1, got 0");
}

// Every registered component, given nonsense for every key any component takes, refuses with a
// Result whose message starts by naming it, and throws nothing.
TEST(ComponentOptions, EveryRegistryRefusesWithAResultNamingTheComponent) {
  const std::vector<std::string> keys = {"search", "seed",  "wrap", "fallback",
                                         "unit",   "curve", "njob", "speed"};
  const std::vector<std::string> values = {"", "x", "-1", "0", "1.5", "99999999999999999999999"};
  for (const char* spec : {"torus:4x4", "mesh:4x4x4", "fattree:4,4", "flat:8"}) {
    const Machine machine = *Machine::parse(spec);
    for (const std::string& key : keys) {
      for (const std::string& value : values) {
        AllocatorOptions alloc;
        ASSERT_TRUE(alloc.add(key + "=" + value));
        PolicyOptions policy;
        ASSERT_TRUE(policy.add(key + "=" + value));
        for (const auto& info : AllocatorRegistry::builtin().all()) {
          Result<std::unique_ptr<Allocator>> made = fail("not run");
          EXPECT_NO_THROW(made = info.factory(machine, alloc)) << info.name;
          if (!made) {
            EXPECT_EQ(made.error().message.rfind("allocator '" + info.name + "'", 0), 0u)
                << made.error().message;
          }
        }
        for (const auto& info : PolicyRegistry::builtin().all()) {
          Result<std::unique_ptr<QueuePolicy>> made = fail("not run");
          EXPECT_NO_THROW(made = info.factory(machine, policy)) << info.name;
          if (!made) {
            EXPECT_EQ(made.error().message.rfind("queue policy '" + info.name + "'", 0), 0u)
                << made.error().message;
          }
        }
      }
    }
  }
  for (int processors : {6, 8, 9, 16}) {
    for (int fanout : {1, 2, 3, 4}) {
      for (int max_jobs : {0, 1, 4}) {
        for (const auto& info : gang::GangPolicyRegistry::builtin().all()) {
          Result<std::unique_ptr<gang::GangScheduler>> made = fail("not run");
          EXPECT_NO_THROW(made = info.factory(processors, {fanout, max_jobs, false})) << info.name;
          if (!made) {
            EXPECT_EQ(made.error().message.rfind("gang policy '" + info.name + "'", 0), 0u)
                << made.error().message;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace trellis
