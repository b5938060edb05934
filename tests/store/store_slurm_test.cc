// The store's side of Slurm's job model, on both engines: arrays stored in one transaction with
// the array's id and one script, batch scripts kept as submitted, dependencies cleared, and the
// accounting queries (ids that name arrays, users, names, partitions and time windows).
#include <gtest/gtest.h>

#include <algorithm>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

class StoreSlurmTest : public StoreTest {};

std::vector<JobId> ids_of(const std::vector<StoredJob>& jobs) {
  std::vector<JobId> ids;
  for (const StoredJob& j : jobs) ids.push_back(j.id);
  return ids;
}

TEST_P(StoreSlurmTest, AnArrayIsStoredAsOneJobPerTaskWithOneScript) {
  JobId before = add(simple_job("before"));
  StoredJob job = simple_job("arr");
  job.array_limit = 3;
  job.partition = "debug";
  job.dependency = "afterok:" + std::to_string(before);
  job.script = "#!/bin/sh\necho $SLURM_ARRAY_TASK_ID\n";
  std::vector<JobId> ids = value_of(store_->add_array(job, {2, 5, 9}, 20));
  ASSERT_EQ(ids.size(), 3u);
  for (size_t i = 0; i < ids.size(); ++i) {
    StoredJob task = get(ids[i]);
    EXPECT_EQ(task.array_job, ids[0]);
    EXPECT_EQ(task.array_task, (std::vector<int>{2, 5, 9})[i]);
    EXPECT_EQ(task.array_limit, 3);
    EXPECT_EQ(task.partition, "debug");
    EXPECT_EQ(task.dependency, job.dependency);
    EXPECT_EQ(task.script_id, ids[0]) << "the tasks share the first task's script";
    EXPECT_TRUE(task.script.empty()) << "listings do not carry scripts";
  }
  EXPECT_EQ(value_of(store_->job_script(ids[0])), job.script);
  // The array's id names every task; a task's own id only itself.
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(by_ids({ids[0]})))), ids);
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(by_ids({ids[1]})))), std::vector<JobId>{ids[1]});
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(by_ids({before})))), std::vector<JobId>{before});
  // A job's own script; none for a job without one.
  StoredJob batch = simple_job("batch");
  batch.script = "#!/bin/sh\nexit 0\n";
  JobId b = add(batch);
  EXPECT_EQ(get(b).script_id, b);
  EXPECT_EQ(value_of(store_->job_script(b)), batch.script);
  EXPECT_EQ(get(before).script_id, 0);
  EXPECT_EQ(error_of(store_->job_script(before)).code, Error::Code::kNotFound);
}

TEST_P(StoreSlurmTest, AnArrayThatCannotBeStoredLeavesNothing) {
  StoredJob job = simple_job("bad");
  job.script = "#!/bin/sh\n\xff\xfe\n";  // not UTF-8
  EXPECT_FALSE(store_->add_array(job, {0, 1}, 10));
  EXPECT_TRUE(value_of(store_->list_jobs({})).empty());
  EXPECT_FALSE(store_->add_array(simple_job("none"), {}, 10));
}

TEST_P(StoreSlurmTest, ClearedDependenciesStayClearedAndOnlyForPendingJobs) {
  StoredJob job = simple_job("waits");
  job.dependency = "afterany:1";
  JobId a = add(job), b = add(job);
  EXPECT_OK(store_->commit_pass(pass_of({start_of(b, {0})}), 11));
  EXPECT_OK(store_->clear_dependencies({a, b}));
  EXPECT_EQ(get(a).dependency, "");
  EXPECT_EQ(get(b).dependency, "afterany:1") << "a running job's record is left as it is";
}

TEST_P(StoreSlurmTest, AccountingWindowsUsersNamesAndPartitions) {
  // Jobs submitted at 100, 200, 300; ended at 150 and 250; the last one still runs.
  StoredJob a = simple_job("a");
  StoredJob b = simple_job("b");
  b.uid = 2000;
  b.partition = "long";
  StoredJob c = simple_job("c");
  JobId ia = add(a, 100), ib = add(b, 200), ic = add(c, 300);
  EXPECT_OK(store_->commit_pass(pass_of({start_of(ia, {0}), start_of(ib, {1})}), 120));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(ic, {2})}), 310));
  EXPECT_TRUE(value_of(store_->end_job(ending(ia, 1, JobState::kCompleted), 150)));
  EXPECT_TRUE(value_of(store_->end_job(ending(ib, 1, JobState::kFailed, 2), 250)));
  auto window = [&](std::optional<Seconds> start, std::optional<Seconds> end) {
    JobQuery q;
    q.not_ended_before = start;
    q.submitted_by = end;
    return ids_of(value_of(store_->list_jobs(q)));
  };
  EXPECT_EQ(window(160, std::nullopt), (std::vector<JobId>{ib, ic}));
  EXPECT_EQ(window(std::nullopt, 250), (std::vector<JobId>{ia, ib}));
  EXPECT_EQ(window(160, 250), (std::vector<JobId>{ib}));
  EXPECT_EQ(window(400, 500), (std::vector<JobId>{ic})) << "a running job is in every later window";
  JobQuery user;
  user.uid = 1000;
  user.not_ended_before = 140;
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(user))), (std::vector<JobId>{ia, ic}));
  JobQuery names;
  names.names = {"a", "c"};
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(names))), (std::vector<JobId>{ia, ic}));
  JobQuery partitions;
  partitions.partitions = {"long"};
  EXPECT_EQ(ids_of(value_of(store_->list_jobs(partitions))), (std::vector<JobId>{ib}));
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreSlurmTest,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), test::engine_name);

}  // namespace
}  // namespace trellis::store_test
