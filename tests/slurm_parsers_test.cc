// The parsers of Slurm's job model: array specs (core/job_array.h), dependencies and their
// evaluation (core/dependency.h), and batch script directives (core/batch_directives.h).
#include <gtest/gtest.h>

#include <map>

#include "core/batch_directives.h"
#include "core/dependency.h"
#include "core/job_array.h"

namespace trellis {
namespace {

std::vector<int> range(int first, int last, int step = 1) {
  std::vector<int> out;
  for (int i = first; i <= last; i += step) out.push_back(i);
  return out;
}

TEST(JobArrayTest, ParsesRangesListsStepsAndLimits) {
  Result<ArraySpec> a = parse_array_spec("1-100%10", 1001);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->tasks, range(1, 100));
  EXPECT_EQ(a->limit, 10);
  Result<ArraySpec> b = parse_array_spec("0,3,7", 1001);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->tasks, (std::vector<int>{0, 3, 7}));
  EXPECT_EQ(b->limit, 0);
  Result<ArraySpec> c = parse_array_spec("1-99:2", 1001);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->tasks, range(1, 99, 2));
  // Overlapping parts give each id once, in order.
  Result<ArraySpec> d = parse_array_spec("5-7,1-6,7%2", 1001);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->tasks, range(1, 7));
  EXPECT_EQ(d->limit, 2);
}

TEST(JobArrayTest, RefusesMalformedSpecsNamingThePart) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {{"", "empty"},
               {"5-3", "ends before it starts"},
               {"1-10%0", "at least 1"},
               {"1-1001", "over the largest allowed (1000)"},
               {"a-3", "'a' is not a number"},
               {"1,,2", "empty element"},
               {"7:2", "a step needs a range"},
               {"1-9:0", "step must be at least 1"},
               {"-1", "is not a number"}};
  for (const Case& c : cases) {
    Result<ArraySpec> r = parse_array_spec(c.text, 1001);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos)
        << c.text << ": " << r.error().message;
  }
}

TEST(JobArrayTest, FormatsCompactRangesThatParseBack) {
  EXPECT_EQ(format_task_ranges({1, 2, 3, 7, 9, 10}), "1-3,7,9-10");
  EXPECT_EQ(format_task_ranges({4}), "4");
  EXPECT_EQ(format_task_ranges({}), "");
  std::vector<int> tasks = {0, 2, 3, 4, 8, 11, 12};
  Result<ArraySpec> again = parse_array_spec(format_task_ranges(tasks), 100);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->tasks, tasks);
}

TEST(DependencyTest, ParsesEveryKindAndFormatsCanonically) {
  Result<Dependency> d = parse_dependency("afterok:12:13_4,afternotok:9,singleton");
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->terms.size(), 3u);
  EXPECT_FALSE(d->any);
  EXPECT_EQ(d->terms[0].kind, DependencyKind::kAfterOk);
  EXPECT_EQ(d->terms[0].targets, (std::vector<DependencyTarget>{{12, -1}, {13, 4}}));
  EXPECT_EQ(d->terms[2].kind, DependencyKind::kSingleton);
  EXPECT_EQ(format_dependency(*d), "afterok:12:13_4,afternotok:9,singleton");
  Result<Dependency> any = parse_dependency("afterany:4?after:5_*");
  ASSERT_TRUE(any);
  EXPECT_TRUE(any->any);
  EXPECT_EQ(format_dependency(*any), "afterany:4?after:5");
  EXPECT_TRUE(parse_dependency("")->empty());
}

TEST(DependencyTest, RefusesUnsupportedAndMalformedTerms) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {{"afterok:1,afterany:2?after:3", "both ','"},
               {"aftercorr:4", "'aftercorr' is not a supported"},
               {"afterok", "names no job"},
               {"afterok:", "names no job"},
               {"afterok:x", "'x' is not a positive number"},
               {"after:4+10", "time offset"},
               {"singleton:3", "takes no job ids"},
               {"afterok:3_x", "'x' is not a number"},
               {"afterok:1,,afterany:2", "empty term"}};
  for (const Case& c : cases) {
    Result<Dependency> r = parse_dependency(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos)
        << c.text << ": " << r.error().message;
  }
}

// The world of a dependency evaluation: job id -> its (array's) jobs.
struct World {
  std::map<int64_t, std::vector<DependencyJob>> jobs;
  bool singleton_clear = true;
  DependencyState eval(const std::string& text) const {
    Result<Dependency> d = parse_dependency(text);
    EXPECT_TRUE(d) << text;
    return evaluate_dependency(
        *d,
        [&](const DependencyTarget& t) {
          auto it = jobs.find(t.job);
          return it == jobs.end() ? std::vector<DependencyJob>{} : it->second;
        },
        [&] { return singleton_clear; });
  }
};

constexpr DependencyJob kPending{false, false, false};
constexpr DependencyJob kRunning{true, false, false};
constexpr DependencyJob kCompleted{true, true, true};
constexpr DependencyJob kFailed{true, true, false};
constexpr DependencyJob kCancelledPending{false, true, false};

TEST(DependencyTest, EvaluatesAsSlurmDoes) {
  World w;
  w.jobs = {{1, {kPending}},           {2, {kRunning}},
            {3, {kCompleted}},         {4, {kFailed}},
            {5, {kCancelledPending}},  {6, {kCompleted, kRunning}},
            {7, {kCompleted, kFailed}}};
  using S = DependencyState;
  EXPECT_EQ(w.eval("after:1"), S::kWaiting);
  EXPECT_EQ(w.eval("after:2"), S::kSatisfied);
  EXPECT_EQ(w.eval("after:5"), S::kSatisfied);  // cancelled before it started
  EXPECT_EQ(w.eval("afterany:2"), S::kWaiting);
  EXPECT_EQ(w.eval("afterany:4"), S::kSatisfied);
  EXPECT_EQ(w.eval("afterok:2"), S::kWaiting);
  EXPECT_EQ(w.eval("afterok:3"), S::kSatisfied);
  EXPECT_EQ(w.eval("afterok:4"), S::kNeverSatisfied);
  EXPECT_EQ(w.eval("afterok:5"), S::kNeverSatisfied);  // cancelled: never succeeds
  EXPECT_EQ(w.eval("afternotok:3"), S::kNeverSatisfied);
  EXPECT_EQ(w.eval("afternotok:4"), S::kSatisfied);
  EXPECT_EQ(w.eval("afternotok:5"), S::kSatisfied);
  // Arrays: every task counts; one failure is enough for afternotok once all have ended.
  EXPECT_EQ(w.eval("afterok:6"), S::kWaiting);
  EXPECT_EQ(w.eval("afterok:7"), S::kNeverSatisfied);
  EXPECT_EQ(w.eval("afternotok:7"), S::kSatisfied);
  EXPECT_EQ(w.eval("afternotok:6"), S::kWaiting);
  // ',' needs all, '?' any.
  EXPECT_EQ(w.eval("afterok:3,afterok:2"), S::kWaiting);
  EXPECT_EQ(w.eval("afterok:3,afterok:4"), S::kNeverSatisfied);
  EXPECT_EQ(w.eval("afterok:4?afterok:2"), S::kWaiting);
  EXPECT_EQ(w.eval("afterok:4?afterok:3"), S::kSatisfied);
  EXPECT_EQ(w.eval("afterok:4?afternotok:3"), S::kNeverSatisfied);
  // A job that does not exist never satisfies anything.
  EXPECT_EQ(w.eval("afterany:99"), S::kNeverSatisfied);
  w.singleton_clear = false;
  EXPECT_EQ(w.eval("singleton"), S::kWaiting);
  EXPECT_EQ(w.eval("singleton,afterok:3"), S::kWaiting);
  w.singleton_clear = true;
  EXPECT_EQ(w.eval("singleton,afterok:3"), S::kSatisfied);
}

TEST(BatchDirectivesTest, ReadsSbatchAndTrellisLinesUpToTheFirstCommand) {
  Result<std::vector<std::string>> words = read_directives(
      "#!/bin/sh\n"
      "#SBATCH -N 3 --time=5   # three nodes\n"
      "\n"
      "# a plain comment\n"
      "#TRELLIS --shape 2x2x2\n"
      "#SBATCH -J \"two words\" -o 'out %j.txt' --comment=a\\ b\n"
      "#SBATCHX -N 9\n"
      "  #SBATCH -N 8\n"
      "echo hello\n"
      "#SBATCH -N 7\n");
  ASSERT_TRUE(words) << words.error().message;
  EXPECT_EQ(*words, (std::vector<std::string>{"-N", "3", "--time=5", "--shape", "2x2x2", "-J",
                                              "two words", "-o", "out %j.txt", "--comment=a b"}));
}

TEST(BatchDirectivesTest, AnUnterminatedQuoteIsAnErrorNamingTheLine) {
  Result<std::vector<std::string>> words = read_directives("#!/bin/sh\n\n#SBATCH -J \"open\n");
  ASSERT_FALSE(words);
  EXPECT_NE(words.error().message.find("line 3: unterminated quote"), std::string::npos)
      << words.error().message;
  EXPECT_TRUE(read_directives("echo first\n#SBATCH -N 2\n")->empty());
}

}  // namespace
}  // namespace trellis
