// Reading runs' jobs.csv and comparing them over the jobs every run completed (issue 9, item F).
#include <gtest/gtest.h>

#include <sstream>

#include "sim/job_sets.h"

namespace trellis {
namespace {

TEST(JobSets, ReadsTheCurrentHeaderByNameWithQuotedHostlists) {
  std::istringstream csv(
      "id,submit,start,end,wait,response,bounded_slowdown,state,nodes,average_hops,"
      "leaf_switches,hostlist\n"
      "1,0,5,25,5,25,1.25,CD,4,1.5,,\"n[0-1,4-5]\"\n"
      "2,10,10,12,0,2,1,TO,2,1,,\"n[2-3]\"\n"
      "3,11,20,30,9,19,1.9,CD,1,0,,\"n7\"\n");
  auto jobs = read_completed_jobs(csv, {3});
  ASSERT_TRUE(jobs) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 2u);  // job 3 is listed as rejected in summary.json
  EXPECT_EQ((*jobs)[0].id, 1);
  EXPECT_DOUBLE_EQ((*jobs)[0].start, 5);
  EXPECT_DOUBLE_EQ((*jobs)[0].end, 25);
  EXPECT_EQ((*jobs)[1].id, 2);
}

TEST(JobSets, ReadsTheNewHeaderAndSkipsRejectedRows) {
  std::istringstream csv(
      "id,user,submit,start,end,wait,response,run_time,requested_time,requested_nodes,nodes,"
      "bounded_slowdown,state,reason,average_hops,leaf_switches,box_shape,box_origin,hostlist\n"
      "4,7,100,130,190,30,90,60,100,8,8,1.5,CD,,1.2,,2x2x2,\"1,0,0\",\"n[1-2,9-10]\"\n"
      "5,7,101,,,,,,100,99,,,RJ,\"no box of 99 nodes, ever\",,,,,\n");
  auto jobs = read_completed_jobs(csv);
  ASSERT_TRUE(jobs) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, 4);
  EXPECT_DOUBLE_EQ((*jobs)[0].submit, 100);
  EXPECT_DOUBLE_EQ((*jobs)[0].start, 130);
  EXPECT_DOUBLE_EQ((*jobs)[0].end, 190);
}

TEST(JobSets, MissingColumnsAndBadTimesAreErrors) {
  std::istringstream no_state("id,submit,start,end\n1,0,1,2\n");
  auto a = read_completed_jobs(no_state);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("'state'"), std::string::npos);
  std::istringstream bad_time("id,submit,start,end,state\n1,0,soon,2,CD\n");
  auto b = read_completed_jobs(bad_time);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("line 2"), std::string::npos) << b.error().message;
}

TEST(JobSets, CommonJobsAndTheirMetrics) {
  // Run A completed jobs 1, 2, 3; run B rejected job 2.
  std::vector<CompletedJob> a = {{1, 0, 0, 100}, {2, 0, 50, 60}, {3, 10, 20, 25}};
  std::vector<CompletedJob> b = {{1, 0, 40, 140}, {3, 10, 10, 15}};
  CommonJobs common = common_jobs({a, b});
  EXPECT_TRUE(common.differ);
  EXPECT_EQ(common.ids, (std::set<long>{1, 3}));
  ASSERT_EQ(common.per_run.size(), 2u);
  // A over jobs 1 and 3: waits 0 and 10; responses 100 and 15; bounded slowdowns
  // max(1, 100/100) = 1 and max(1, 15/max(5, 10)) = 1.5.
  EXPECT_DOUBLE_EQ(common.per_run[0].mean_wait_s, 5);
  EXPECT_DOUBLE_EQ(common.per_run[0].mean_response_s, 57.5);
  EXPECT_DOUBLE_EQ(common.per_run[0].mean_bounded_slowdown, 1.25);
  // B: waits 40 and 0; responses 140 and 5; slowdowns 140/100 = 1.4 and max(1, 5/10) = 1.
  EXPECT_DOUBLE_EQ(common.per_run[1].mean_wait_s, 20);
  EXPECT_DOUBLE_EQ(common.per_run[1].mean_response_s, 72.5);
  EXPECT_DOUBLE_EQ(common.per_run[1].mean_bounded_slowdown, 1.2);

  CommonJobs same = common_jobs({b, b});
  EXPECT_FALSE(same.differ);
  EXPECT_EQ(same.ids.size(), 2u);
}

}  // namespace
}  // namespace trellis
