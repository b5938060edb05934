// The thesis's synthetic workload generator (seed 002, sections 7.2.1-7.2.2).
#include "sim/workload/thesis_model.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>

namespace trellis::workload {
namespace {

double offered_load(const std::vector<Job>& jobs, int processors, double duration) {
  double demand = 0;
  for (const Job& j : jobs) demand += j.request.nodes * j.run_time;
  return demand / (processors * duration);
}

TEST(ThesisModel, SameSeedSameJobsAndDifferentSeedDifferentJobs) {
  ThesisModel m;
  m.arrival_end = 20000;
  auto a = generate_thesis_workload(m);
  auto b = generate_thesis_workload(m);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].submit, (*b)[i].submit);
    EXPECT_EQ((*a)[i].run_time, (*b)[i].run_time);
    EXPECT_EQ((*a)[i].request.nodes, (*b)[i].request.nodes);
  }
  m.seed = 2;
  auto c = generate_thesis_workload(m);
  ASSERT_TRUE(c);
  auto signature = [](const std::vector<Job>& jobs) {
    std::vector<double> out;
    for (const Job& j : jobs)
      out.insert(out.end(), {j.submit, j.run_time, double(j.request.nodes)});
    return out;
  };
  EXPECT_NE(signature(*c), signature(*a));
}

TEST(ThesisModel, SizesArePowersOfTwoBelowTheWholeMachineInWholeUnits) {
  for (auto dist :
       {SizeDistribution::kUniform, SizeDistribution::kProportional, SizeDistribution::kInverse}) {
    ThesisModel m;
    m.sizes = dist;
    m.arrival_end = 50000;
    auto jobs = generate_thesis_workload(m);
    ASSERT_TRUE(jobs);
    double last = 0;
    for (const Job& j : *jobs) {
      EXPECT_TRUE(std::has_single_bit(static_cast<unsigned>(j.request.nodes)));
      EXPECT_LE(j.request.nodes, m.processors / 2);
      EXPECT_GE(j.run_time, 1);
      EXPECT_EQ(j.submit, static_cast<double>(static_cast<long>(j.submit)));
      EXPECT_GE(j.submit, last);
      last = j.submit;
    }
  }
}

TEST(ThesisModel, SizeDistributionsHaveTheirShape) {
  // 128 processors: sizes 1..64. Count jobs per size over a long window.
  auto counts = [](SizeDistribution d) {
    ThesisModel m;
    m.sizes = d;
    m.arrival_end = 2e6;
    m.mean_service = 100;
    std::map<int, int> c;
    auto jobs = generate_thesis_workload(m);
    EXPECT_TRUE(jobs);
    for (const Job& j : *jobs) ++c[j.request.nodes];
    return c;
  };
  auto uniform = counts(SizeDistribution::kUniform);
  auto proportional = counts(SizeDistribution::kProportional);
  auto inverse = counts(SizeDistribution::kInverse);
  // Uniform: every size about equally often; proportional: 64 about 64x as often as 1;
  // inverse: the other way round.
  EXPECT_NEAR(static_cast<double>(uniform[64]) / uniform[1], 1.0, 0.15);
  EXPECT_NEAR(static_cast<double>(proportional[64]) / proportional[1], 64.0, 64.0 * 0.35);
  EXPECT_NEAR(static_cast<double>(inverse[1]) / inverse[64], 64.0, 64.0 * 0.35);
}

TEST(ThesisModel, OfferedLoadMatchesTheTargetOnAverage) {
  for (auto service : {ServiceDistribution::kExponential, ServiceDistribution::kUniform}) {
    double sum = 0;
    const int seeds = 20;
    for (int s = 1; s <= seeds; ++s) {
      ThesisModel m;
      m.service = service;
      m.load = 0.6;
      m.arrival_end = 2e5;
      m.seed = static_cast<uint64_t>(s);
      auto jobs = generate_thesis_workload(m);
      ASSERT_TRUE(jobs);
      sum += offered_load(*jobs, m.processors, m.arrival_end);
    }
    EXPECT_NEAR(sum / seeds, 0.6, 0.05) << to_string(service);
  }
}

TEST(ThesisModel, GradientLoadRisesOverTime) {
  ThesisModel m;
  m.gradient = true;
  m.arrival_end = 2e6;
  m.mean_service = 200;
  auto jobs = generate_thesis_workload(m);
  ASSERT_TRUE(jobs);
  std::vector<Job> first, last;
  for (const Job& j : *jobs) {
    if (j.submit < 0.1 * m.arrival_end) first.push_back(j);
    if (j.submit >= 0.9 * m.arrival_end) last.push_back(j);
  }
  double early = offered_load(first, m.processors, 0.1 * m.arrival_end);
  double late = offered_load(last, m.processors, 0.1 * m.arrival_end);
  // Steps 0-1 average 0.405; steps 18-19 average 1.305.
  EXPECT_NEAR(early, 0.405, 0.06);
  EXPECT_NEAR(late, 1.305, 0.15);
}

TEST(ThesisModel, RejectsBadFieldsByName) {
  ThesisModel m;
  m.processors = 1;
  ASSERT_FALSE(validate(m));
  EXPECT_NE(validate(m).error().message.find("processors"), std::string::npos);
  m = ThesisModel{};
  m.max_size = 256;
  EXPECT_NE(validate(m).error().message.find("max size"), std::string::npos);
  m = ThesisModel{};
  m.load = 0;
  EXPECT_NE(validate(m).error().message.find("load"), std::string::npos);
  EXPECT_FALSE(parse_size_distribution("normal"));
  EXPECT_FALSE(parse_service_distribution("pareto"));
  EXPECT_EQ(*parse_size_distribution("inverse"), SizeDistribution::kInverse);
}

TEST(ThesisModel, ParsesGeneratorSpecsAndNamesBadKeys) {
  auto m =
      parse_thesis_spec("thesis:load=0.793,sizes=inverse,service=uniform,duration=1e6,seed=4", 128);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->processors, 128);
  EXPECT_DOUBLE_EQ(m->load, 0.793);
  EXPECT_EQ(m->sizes, SizeDistribution::kInverse);
  EXPECT_EQ(m->service, ServiceDistribution::kUniform);
  EXPECT_EQ(m->seed, 4u);
  EXPECT_TRUE(parse_thesis_spec("thesis", 64));
  auto g = parse_thesis_spec("thesis:gradient=0.4", 64);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->gradient);
  auto bad = parse_thesis_spec("thesis:lode=1", 64);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("has no option 'lode'"), std::string::npos);
  auto nan = parse_thesis_spec("thesis:load=high", 64);
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.error().message.find("load='high'"), std::string::npos);
  EXPECT_FALSE(parse_thesis_spec("thesis:seed=1.5", 64));
  EXPECT_FALSE(parse_thesis_spec("thesis:load", 64));
  EXPECT_FALSE(parse_thesis_spec("lublin:10", 64));
}

}  // namespace
}  // namespace trellis::workload
