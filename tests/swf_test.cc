// SWF reader and writer: round trips, the conversion to jobs, and file:line errors on bad input.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/swf.h"
#include "sim/workload.h"
#include "sim_test_support.h"

namespace trellis {
namespace {

constexpr const char* kSample =
    "; Version: 2.2\n"
    "; Computer: test machine\n"
    "; MaxNodes: 128\n"
    ";   a free comment line\n"
    "1 0 5 100 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1\n"
    "2 10.5 -1 20.25 1 -1 -1 -1 -1 -1 0 4 2 -1 1 -1 -1 -1\n"
    "3 11 -1 -1 2 -1 -1 2 60 -1 5 4 2 -1 1 -1 -1 -1\n";

TEST(Swf, ParsesFieldsAndHeader) {
  auto trace = parse_swf(kSample, "sample.swf");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->records.size(), 3u);
  EXPECT_EQ(trace->header_value("MaxNodes"), "128");
  EXPECT_EQ(trace->header_value("Computer"), "test machine");
  EXPECT_EQ(trace->records[1][SwfField::kSubmitTime], 10.5);
  EXPECT_EQ(trace->records[1][SwfField::kRunTime], 20.25);
  EXPECT_EQ(trace->records[0][SwfField::kRequestedProcessors], 8);
  EXPECT_EQ(trace->records[2][SwfField::kStatus], 5);
}

TEST(Swf, RoundTripsThroughTheWriter) {
  auto first = parse_swf(kSample, "sample.swf");
  ASSERT_TRUE(first.ok());
  std::ostringstream out;
  write_swf(out, *first);
  auto second = parse_swf(out.str(), "written.swf");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->records, first->records);
  EXPECT_EQ(second->header, first->header);
  std::ostringstream again;
  write_swf(again, *second);
  EXPECT_EQ(again.str(), out.str());
}

TEST(Swf, RoundTripsTheSharedTraces) {
  for (const char* name :
       {"NASA-iPSC-1993-3.1-cln.swf.gz", "HPC2N-2002-2.2-cln.first3171.swf.gz", "lublin_256.swf"}) {
    std::string path = testing::workloads_dir() + "/" + name;
    auto trace = read_swf_file(path);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    std::ostringstream out;
    write_swf(out, *trace);
    auto back = parse_swf(out.str(), "written");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->records, trace->records) << name;
    EXPECT_EQ(back->header, trace->header) << name;
  }
}

TEST(Swf, NasaTraceHasTheDocumentedJobCount) {
  auto trace = read_swf_file(testing::workloads_dir() + "/NASA-iPSC-1993-3.1-cln.swf.gz");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->records.size(), 18239u);
  EXPECT_EQ(trace->header_value("MaxNodes"), "128");
}

TEST(Swf, ConvertsToJobs) {
  auto trace = parse_swf(kSample, "sample.swf");
  ASSERT_TRUE(trace.ok());
  SwfJobs converted = swf_to_jobs(*trace, 4);
  ASSERT_EQ(converted.jobs.size(), 2u);  // job 3 has no run time
  EXPECT_EQ(converted.skipped, 1);
  EXPECT_EQ(converted.jobs[0].request.nodes, 2);  // 8 requested processors / 4 per node
  EXPECT_EQ(converted.jobs[0].time_limit, 3600);
  EXPECT_EQ(converted.jobs[1].request.nodes, 1);   // 1 allocated processor, rounded up
  EXPECT_EQ(converted.jobs[1].time_limit, 20.25);  // no request: the run time
  EXPECT_EQ(converted.jobs[1].user, 4);
}

TEST(Swf, JobsRoundTripThroughSwf) {
  auto trace = parse_swf(kSample, "sample.swf");
  SwfJobs converted = swf_to_jobs(*trace);
  SwfJobs back = swf_to_jobs(jobs_to_swf(converted.jobs));
  ASSERT_EQ(back.jobs.size(), converted.jobs.size());
  for (size_t i = 0; i < back.jobs.size(); ++i) {
    EXPECT_EQ(back.jobs[i].id, converted.jobs[i].id);
    EXPECT_EQ(back.jobs[i].submit, converted.jobs[i].submit);
    EXPECT_EQ(back.jobs[i].run_time, converted.jobs[i].run_time);
    EXPECT_EQ(back.jobs[i].time_limit, converted.jobs[i].time_limit);
    EXPECT_EQ(back.jobs[i].request.nodes, converted.jobs[i].request.nodes);
  }
}

struct BadLine {
  std::string text;
  std::string expected;  // a substring of the error
};

TEST(Swf, MalformedLinesNameFileLineAndField) {
  const std::string good = "1 0 5 100 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1\n";
  const std::vector<BadLine> cases = {
      {"1 0 5 100 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1\n",
       "t.swf:3: found 17 fields, expected 18 (missing field 18 (Think Time))"},
      {"1 0 5 100 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1 7\n",
       "t.swf:3: more than 18 fields (extra value '7')"},
      {"1 0 5 abc 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1\n",
       "t.swf:3: field 4 (Run Time): 'abc' is not a number"},
      {"1 0 5 100 4.5 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1\n",
       "t.swf:3: field 5 (Allocated Processors): '4.5' is not a whole number"},
      {"1 -7 5 100 4 -1 -1 8 3600 -1 1 3 1 -1 1 -1 -1 -1\n",
       "t.swf:3: field 2 (Submit Time): -7 is negative"},
      {"; MaxNodez: 12\n", "t.swf:3: unknown header key 'MaxNodez'"},
  };
  for (const BadLine& c : cases) {
    auto trace = parse_swf("; Version: 2\n" + good + c.text, "t.swf");
    ASSERT_FALSE(trace.ok()) << c.text;
    EXPECT_NE(trace.error().message.find(c.expected), std::string::npos)
        << "got: " << trace.error().message << "\nwanted: " << c.expected;
  }
}

TEST(Swf, MissingFileIsAnError) {
  auto trace = read_swf_file("/nonexistent/trace.swf");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.error().message.find("/nonexistent/trace.swf"), std::string::npos);
}

TEST(JobListJson, ParsesJobsAndNamesBadEntries) {
  auto ok = parse_job_list_json(
      R"({"jobs": [{"id": 7, "submit": 5, "run": 60, "nodes": 4},
                   {"id": 3, "submit": 1, "run": 10, "limit": 20, "shape": "2x2", "mode": "mesh"}]})",
      "jobs.json");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->jobs.size(), 2u);
  EXPECT_EQ(ok->jobs[0].id, 3);  // sorted by submit time
  EXPECT_EQ(ok->jobs[0].request.shape, (Shape{2, 2}));
  EXPECT_EQ(ok->jobs[0].request.mode, PlacementMode::kMesh);
  EXPECT_EQ(ok->jobs[0].time_limit, 20);
  EXPECT_EQ(ok->jobs[1].time_limit, 60);  // defaults to the run time

  auto bad = parse_job_list_json(R"({"jobs": [{"run": 5, "nodes": 1}, {"run": -3, "nodes": 1}]})",
                                 "jobs.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(
                "jobs.json: jobs[1]: \"run\" must be a number of seconds from 0 to 1e12, found -3"),
            std::string::npos)
      << bad.error().message;
  auto no_size = parse_job_list_json(R"({"jobs": [{"run": 5}]})", "j.json");
  ASSERT_FALSE(no_size.ok());
  EXPECT_NE(no_size.error().message.find("j.json: jobs[0]: give \"nodes\" or \"shape\""),
            std::string::npos);
  EXPECT_FALSE(parse_job_list_json("{", "j.json").ok());
}

TEST(Workload, LoadScalingDividesInterArrivalTimes) {
  Workload w;
  for (int i = 0; i < 3; ++i) {
    Job j;
    j.id = i + 1;
    j.submit = 100 + 60.0 * i;
    w.jobs.push_back(j);
  }
  scale_load(w, 2.0);
  EXPECT_EQ(w.jobs[0].submit, 100);
  EXPECT_EQ(w.jobs[1].submit, 130);
  EXPECT_EQ(w.jobs[2].submit, 160);
}

}  // namespace
}  // namespace trellis
