// The one Registry template: the same verbs for every kind of component, and errors that name the
// kind and the known names with the not-found code.
#include "core/registry.h"

#include <gtest/gtest.h>

#include "alloc/registry.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"

namespace trellis {
namespace {

struct Shape {
  virtual ~Shape() = default;
  virtual int sides() const = 0;
};
struct Polygon : Shape {
  explicit Polygon(int n) : n(n) {}
  int sides() const override { return n; }
  int n;
};
struct ShapeInfo {
  std::string name;
  std::string summary;
  std::function<Result<std::unique_ptr<Shape>>(int)> factory;
};

TEST(Registry, AddFindNamesCreateAndUnknownNames) {
  Registry<ShapeInfo, Shape, int> shapes("shape");
  auto polygon = [](int scale) -> Result<std::unique_ptr<Shape>> {
    if (scale < 1) return fail("scale must be at least 1");
    return std::unique_ptr<Shape>(std::make_unique<Polygon>(3 * scale));
  };
  shapes.add({"triangle", "three sides", polygon});
  shapes.add({"square", "four sides", [](int) -> Result<std::unique_ptr<Shape>> {
                return std::unique_ptr<Shape>(std::make_unique<Polygon>(4));
              }});
  EXPECT_EQ(shapes.all().size(), 2u);
  EXPECT_EQ(shapes.names(), "triangle, square");
  ASSERT_NE(shapes.find("square"), nullptr);
  EXPECT_EQ(shapes.find("square")->summary, "four sides");
  EXPECT_EQ(shapes.find("circle"), nullptr);
  auto six = shapes.create("triangle", 2);
  ASSERT_TRUE(six);
  EXPECT_EQ((*six)->sides(), 6);
  auto bad = shapes.create("triangle", 0);  // the factory's own error passes through
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "scale must be at least 1");
  EXPECT_EQ(bad.error().code, Error::Code::kInvalidArgument);  // fail(message)'s default
  auto unknown = shapes.create("circle", 1);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Error::Code::kNotFound);
  EXPECT_EQ(unknown.error().message, "unknown shape 'circle' (known: triangle, square)");
}

TEST(Registry, AllocatorsQueueAndGangPoliciesShareTheVerbsAndNameTheirKind) {
  Machine machine = *Machine::parse("torus:4x4");
  auto allocator = AllocatorRegistry::builtin().create("nope", machine);
  ASSERT_FALSE(allocator);
  EXPECT_EQ(allocator.error().code, Error::Code::kNotFound);
  EXPECT_EQ(allocator.error().message.rfind("unknown allocator 'nope' (known: ", 0), 0u);
  auto policy = PolicyRegistry::builtin().create("nope", machine);
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().message.rfind("unknown queue policy 'nope' (known: ", 0), 0u);
  EXPECT_EQ(AllocatorRegistry::builtin().kind(), "allocator");
  EXPECT_EQ(PolicyRegistry::builtin().kind(), "queue policy");
  const gang::GangPolicyRegistry& gangs = gang::GangPolicyRegistry::builtin();
  EXPECT_EQ(gangs.kind(), "gang policy");
  auto gang = gangs.create("nope", 8);
  ASSERT_FALSE(gang);
  EXPECT_EQ(gang.error().code, Error::Code::kNotFound);
  EXPECT_EQ(gang.error().message.rfind("unknown gang policy 'nope' (known: dqt-ffapa, ", 0), 0u);
  EXPECT_TRUE(gangs.has("fcfs-bb"));
  EXPECT_FALSE(gangs.has("easy"));
  EXPECT_TRUE(PolicyRegistry::builtin().has("easy"));
  EXPECT_TRUE(AllocatorRegistry::builtin().has("buddy"));
  ASSERT_NE(gangs.find("slurm-gang"), nullptr);
  EXPECT_TRUE(gangs.create("slurm-gang", 8, gang::GangPolicyOptions{}));
  for (const auto& info : PolicyRegistry::builtin().all())
    EXPECT_TRUE(PolicyRegistry::builtin().create(info.name, machine, PolicyOptions{}) ||
                info.name == "fattree-batch")
        << info.name;
}

}  // namespace
}  // namespace trellis
