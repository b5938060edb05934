// Id ranges (core/id_ranges.h) and hostlists of any node names (core/hostlist.h): how the store
// keeps a job's nodes and names the nodes of one event, compactly.
#include <gtest/gtest.h>

#include <random>

#include "core/hostlist.h"
#include "core/id_ranges.h"

namespace trellis {
namespace {

TEST(IdRangesTest, FormatsSortedMergedRanges) {
  EXPECT_EQ(format_id_ranges({}), "");
  EXPECT_EQ(format_id_ranges({5}), "5");
  EXPECT_EQ(format_id_ranges({7, 0, 2, 1, 3, 3}), "0-3,7");
  std::vector<int64_t> machine(110592);
  for (int i = 0; i < 110592; ++i) machine[i] = i;
  EXPECT_EQ(format_id_ranges(machine), "0-110591");  // a full-machine job in 8 bytes
}

TEST(IdRangesTest, ParsesWhatItFormatsForRandomSets) {
  std::mt19937 random(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<int> ids;
    for (int id = 0; id < 300; ++id)
      if (random() % 3 == 0) ids.push_back(id);
    Result<std::vector<int>> back =
        parse_id_ranges(format_id_ranges(std::vector<int64_t>(ids.begin(), ids.end())));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, ids);
  }
}

TEST(IdRangesTest, ReadsTheOldCommaListAndRefusesBadText) {
  EXPECT_EQ(*parse_id_ranges("0,1,2,9"), (std::vector<int>{0, 1, 2, 9}));
  EXPECT_EQ(*parse_id_ranges("9,0-1"), (std::vector<int>{0, 1, 9}));
  EXPECT_TRUE(parse_id_ranges("")->empty());
  for (const char* bad : {"1,", ",1", "3-1", "a", "1-", "-1", "1--2", "0-2,2", "1,1", " 1"})
    EXPECT_FALSE(parse_id_ranges(bad)) << bad;
  Result<std::vector<int>> huge = parse_id_ranges("0-2000000000");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("more than"), std::string::npos) << huge.error().message;
}

TEST(FormatNamesTest, MergesNumberedNamesPerPrefix) {
  EXPECT_EQ(format_names({}), "");
  EXPECT_EQ(format_names({"n3"}), "n3");
  EXPECT_EQ(format_names({"n0", "n1", "n2", "n7", "login"}), "n[0-2,7],login");
  EXPECT_EQ(format_names({"rack1-n5", "n4", "rack1-n6"}), "rack1-n[5-6],n4");
  EXPECT_EQ(format_names({"n01", "n1"}), "n1,n01");  // a leading zero is not the same number
  // The controller's names read back as the same nodes.
  Result<NodeSet> back = parse_hostlist(format_names({"n9", "n3", "n4", "n5"}), 16, "n");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_vector(), (std::vector<NodeId>{3, 4, 5, 9}));
}

}  // namespace
}  // namespace trellis
