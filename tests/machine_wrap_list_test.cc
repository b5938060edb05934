// Machine specs that wrap several axes: wrap= takes a comma list of axes (issue 9, item D).
#include <gtest/gtest.h>

#include "topology/machine.h"

namespace trellis {
namespace {

TEST(MachineWrapList, CommaListWrapsExactlyTheNamedAxes) {
  auto m = Machine::parse("mesh:8x8x8:wrap=x,y");
  ASSERT_TRUE(m) << m.error().message;
  const Torus& t = *m->torus();
  EXPECT_TRUE(t.wraps(0));
  EXPECT_TRUE(t.wraps(1));
  EXPECT_FALSE(t.wraps(2));
  // Across the wrap-around on x and y one hop; along z, which does not wrap, seven.
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({7, 0, 0})), 1);
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({0, 7, 0})), 1);
  EXPECT_EQ(t.hop_distance(t.id({0, 0, 0}), t.id({0, 0, 7})), 7);
  EXPECT_EQ(m->spec(), "mesh:8x8x8:wrap=xy");
}

TEST(MachineWrapList, CommaListAndRunTogetherLettersAgree) {
  for (const char* spec : {"mesh:4x4x4x4:wrap=x,z,a", "mesh:4x4x4x4:wrap=xza"}) {
    auto m = Machine::parse(spec);
    ASSERT_TRUE(m) << spec << ": " << m.error().message;
    EXPECT_EQ(m->spec(), "mesh:4x4x4x4:wrap=xza") << spec;
    EXPECT_TRUE(m->torus()->wraps(0));
    EXPECT_FALSE(m->torus()->wraps(1));
    EXPECT_TRUE(m->torus()->wraps(2));
    EXPECT_TRUE(m->torus()->wraps(3));
  }
  auto all = Machine::parse("mesh:4x4:wrap=x,y");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->spec(), "torus:4x4");
}

TEST(MachineWrapList, BadListsAreRefusedWithTheGrammar) {
  for (const char* bad : {"mesh:8x8x8:wrap=x,,y", "mesh:8x8x8:wrap=,", "mesh:8x8x8:wrap=x,",
                          "mesh:8x8x8:wrap=", "mesh:8x8x8:wrap=x,x", "mesh:8x8:wrap=x,z"}) {
    auto m = Machine::parse(bad);
    ASSERT_FALSE(m) << bad;
    EXPECT_NE(m.error().message.find("machine spec"), std::string::npos) << m.error().message;
    EXPECT_NE(m.error().message.find("comma list of x y z a b c"), std::string::npos)
        << m.error().message;
  }
}

}  // namespace
}  // namespace trellis
