// KeyValueOptions: the one key=value parser of --alloc-opt, --sched-opt and --opt.
#include <gtest/gtest.h>

#include "alloc/allocator.h"
#include "core/key_value.h"
#include "sched/registry.h"

namespace trellis {
namespace {

TEST(KeyValueOptions, ParsesListsAndLaterValuesWin) {
  KeyValueOptions o("gang policy");
  ASSERT_TRUE(o.add_list("quantum=30,fanout=4"));
  ASSERT_TRUE(o.add("fanout=8"));
  EXPECT_EQ(o.get("quantum"), "30");
  EXPECT_EQ(o.get("fanout"), "8");
  EXPECT_FALSE(o.get("seed"));
  EXPECT_EQ(*o.whole_number("fanout", 2, 2), 8);
  EXPECT_EQ(*o.whole_number("absent", 5, 1), 5);
  EXPECT_DOUBLE_EQ(*o.number_above("quantum", 1, 0), 30.0);
}

TEST(KeyValueOptions, RefusesTextThatIsNotKeyEqualsValue) {
  KeyValueOptions o("allocator");
  auto bad = o.add("seed");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'seed' is not key=value"), std::string::npos);
  EXPECT_FALSE(o.add("=3"));
  EXPECT_FALSE(o.add_list("a=1,,b=2"));
}

TEST(KeyValueOptions, UnknownKeyErrorNamesTheOwnerTheKeyAndTheValidKeys) {
  PolicyOptions policy;
  ASSERT_TRUE(policy.add("speed=3"));
  auto none = policy.only({}, "easy");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "queue policy 'easy' has no option 'speed' (it takes none)");
  auto some = policy.only({"njob", "unit"}, "fattree-batch");
  ASSERT_FALSE(some);
  EXPECT_EQ(some.error().message,
            "queue policy 'fattree-batch' has no option 'speed' (it takes: njob, unit)");
  AllocatorOptions alloc;
  ASSERT_TRUE(alloc.add("speed=3"));
  EXPECT_EQ(alloc.only({"search"}, "contiguous").error().message,
            "allocator 'contiguous' has no option 'speed' (it takes: search)");
}

TEST(KeyValueOptions, NumbersMustBeWholeAndInRange) {
  KeyValueOptions o("gang policy");
  ASSERT_TRUE(o.add_list("fanout=1.5,quantum=0,k=-2,x=7q"));
  EXPECT_FALSE(o.whole_number("fanout", 2, 2));
  EXPECT_FALSE(o.number_above("quantum", 30, 0));
  EXPECT_FALSE(o.whole_number("k", 1, 0));
  EXPECT_FALSE(o.whole_number("x", 1, 0));
  EXPECT_NE(o.whole_number("k", 1, 0).error().message.find("k='-2'"), std::string::npos);
  EXPECT_EQ(*parse_whole_number("-2"), -2);
  EXPECT_FALSE(parse_whole_number(""));
  EXPECT_FALSE(parse_number("nan"));
}

}  // namespace
}  // namespace trellis
