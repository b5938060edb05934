// The store on both engines: every method on one connection (the cluster, jobs, passes and the
// allocation constraint in the database itself, ends, nodes and the event log), and several
// connections at once: readers beside writers, concurrent writers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

// --- The cluster

TEST_P(StoreTest, InitClusterIsIdempotentForTheSameClusterOnly) {
  EXPECT_EQ(value_of(store_->machine_spec()), "torus:4x4");
  int64_t before = version();
  EXPECT_OK(store_->init_cluster("torus:4x4", node_names(16)));
  EXPECT_EQ(version(), before);  // nothing changed

  Error other = error_of(store_->init_cluster("torus:8x8", node_names(64)));
  EXPECT_EQ(other.code, Error::Code::kInvalidArgument);
  EXPECT_TRUE(has(other.message, "torus:4x4") && has(other.message, "torus:8x8")) << other.message;
  EXPECT_TRUE(has(other.message, where_)) << other.message;

  std::vector<std::string> renamed = node_names(16);
  renamed[3] = "x3";
  Error names = error_of(store_->init_cluster("torus:4x4", renamed));
  EXPECT_TRUE(has(names.message, "'n3'") && has(names.message, "'x3'")) << names.message;
  EXPECT_EQ(value_of(store_->list_nodes()).size(), 16u);
}

TEST_P(StoreTest, InitClusterRefusesBadNames) {
  auto store = value_of(open_empty_store());
  ASSERT_TRUE(store);
  EXPECT_EQ(error_of(store->machine_spec()).code, Error::Code::kNotFound);
  EXPECT_FALSE(store->init_cluster("torus:2", {"a", "a"}));
  EXPECT_FALSE(store->init_cluster("torus:2", {"a", ""}));
  EXPECT_FALSE(store->init_cluster("", {"a", "b"}));
  EXPECT_FALSE(store->init_cluster("torus:2", {}));
  EXPECT_EQ(error_of(store->machine_spec()).code, Error::Code::kNotFound);
  EXPECT_OK(store->init_cluster("torus:2", {"a", "b"}));
}

// --- Jobs

TEST_P(StoreTest, AddJobSetsIdStateAttemptAndTimesAndLogsSubmit) {
  StoredJob job = simple_job("first");
  job.id = 99;
  job.state = JobState::kRunning;
  job.attempt = 5;
  job.start_time = 3;
  job.end_time = 4;
  job.nodes = {1, 2};
  JobId a = add(job, 100);
  JobId b = add(simple_job("second"), 101);
  EXPECT_GT(a, 0);
  EXPECT_GT(b, a);
  StoredJob got = get(a);
  EXPECT_EQ(got.id, a);
  EXPECT_EQ(got.state, JobState::kPending);
  EXPECT_EQ(got.attempt, 0);
  EXPECT_EQ(got.submit_time, 100);
  EXPECT_EQ(got.start_time, 0);
  EXPECT_EQ(got.end_time, 0);
  EXPECT_TRUE(got.nodes.empty());
  std::vector<StoredEvent> events = all_events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "submit");
  EXPECT_EQ(events[0].job, a);
  EXPECT_EQ(events[0].time, 100);
  EXPECT_EQ(events[1].job, b);
  EXPECT_EQ(events[1].seq, events[0].seq + 1);
}

TEST_P(StoreTest, AddJobRefusesBadInput) {
  StoredJob none = simple_job("none", 0);
  EXPECT_EQ(error_of(store_->add_job(none, 1)).code, Error::Code::kInvalidArgument);
  StoredJob bad_argv = simple_job("bytes");
  bad_argv.argv = {"ok", std::string("\xff\xfe", 2)};
  Error e = error_of(store_->add_job(bad_argv, 1));
  EXPECT_TRUE(has(e.message, "argv[1]")) << e.message;
  EXPECT_TRUE(value_of(store_->list_jobs({})).empty());
  EXPECT_TRUE(all_events().empty());
}

TEST_P(StoreTest, EveryStoredJobFieldRoundTrips) {
  StoredJob job;
  job.uid = 1234;
  job.gid = 567;
  job.user = "bob";
  job.name = "mesh job, \"quoted\" and 'single'";
  job.request = Request::box({2, 2, 1}, /*rotate=*/false, PlacementMode::kMesh);
  job.share = true;
  job.time_limit = 3600.5;
  job.argv = {"/usr/bin/env", "a b", "", "ünïcödé", "{\"json\": [1]}"};
  job.cwd = "/home/bob/work dir";
  job.output = "/home/bob/out-%j.txt";
  job.error = "/home/bob/err.txt";
  job.env = {{"PATH", "/usr/bin:/bin"}, {"EMPTY", ""}, {"MULTI", "line1\nline2"}};
  job.reason = "initial";
  JobId id = add(job, 1000.25);

  JobStart start = start_of(id, {5, 1, 4, 0});
  start.box_anchor = {0, 0, 0};
  start.box_extents = {2, 2, 1};
  EXPECT_OK(store_->commit_pass(pass_of({start}), 2000.5));
  EXPECT_EQ(value_of(store_->end_job(ending(id, 1, JobState::kFailed, 3, 9, "killed"), 3000.75)),
            true);

  StoredJob got = get(id);
  EXPECT_EQ(got.id, id);
  EXPECT_EQ(got.uid, 1234);
  EXPECT_EQ(got.gid, 567);
  EXPECT_EQ(got.user, "bob");
  EXPECT_EQ(got.name, job.name);
  EXPECT_EQ(got.request.nodes, 4);
  EXPECT_EQ(got.request.shape, (Shape{2, 2, 1}));
  EXPECT_FALSE(got.request.rotate);
  EXPECT_EQ(got.request.mode, PlacementMode::kMesh);
  EXPECT_TRUE(got.share);
  EXPECT_EQ(got.time_limit, 3600.5);
  EXPECT_EQ(got.argv, job.argv);
  EXPECT_EQ(got.cwd, job.cwd);
  EXPECT_EQ(got.output, job.output);
  EXPECT_EQ(got.error, job.error);
  EXPECT_EQ(got.env, job.env);
  EXPECT_EQ(got.state, JobState::kFailed);
  EXPECT_EQ(got.reason, "killed");
  EXPECT_EQ(got.submit_time, 1000.25);
  EXPECT_EQ(got.start_time, 2000.5);
  EXPECT_EQ(got.end_time, 3000.75);
  EXPECT_EQ(got.expected_start, 0);
  EXPECT_EQ(got.attempt, 1);
  EXPECT_EQ(got.nodes, (std::vector<NodeId>{0, 1, 4, 5}));  // ascending
  EXPECT_EQ(got.box_anchor, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(got.box_extents, (Shape{2, 2, 1}));
  EXPECT_EQ(got.exit_code, 3);
  EXPECT_EQ(got.signal, 9);

  // The pending note's fields, on a job that stays pending.
  JobId waiting = add(simple_job("waiting"), 1);
  PassCommit notes;
  notes.notes = {{waiting, "Resources", 4321.5}};
  EXPECT_OK(store_->commit_pass(notes, 2));
  StoredJob w = get(waiting);
  EXPECT_EQ(w.reason, "Resources");
  EXPECT_EQ(w.expected_start, 4321.5);
  EXPECT_EQ(w.request.shape, Shape{});
  EXPECT_TRUE(w.request.rotate);
  EXPECT_EQ(w.request.mode, PlacementMode::kTorus);
}

TEST_P(StoreTest, JobNotFound) {
  Error e = error_of(store_->job(42));
  EXPECT_EQ(e.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(e.message, "42") && has(e.message, where_)) << e.message;
  EXPECT_EQ(error_of(store_->end_job(ending(42, 1, JobState::kCompleted), 1)).code,
            Error::Code::kNotFound);
  EXPECT_EQ(error_of(store_->set_job_state(42, JobState::kCancelled, "", 1)).code,
            Error::Code::kNotFound);
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(42, {0})}), 1)).code,
            Error::Code::kNotFound);
}

TEST_P(StoreTest, ListJobsHonoursEveryQueryField) {
  // 1: PD uid 1000; 2: R uid 1000; 3: CD uid 2000; 4: PD uid 2000; 5: CA uid 1000.
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) {
    StoredJob job = simple_job(numbered("j", i));
    job.uid = (i == 2 || i == 3) ? 2000 : 1000;
    ids.push_back(add(job));
  }
  EXPECT_OK(store_->commit_pass(pass_of({start_of(ids[1], {0}), start_of(ids[2], {1})}), 20));
  EXPECT_TRUE(value_of(store_->end_job(ending(ids[2], 1, JobState::kCompleted), 30)));
  EXPECT_OK(store_->set_job_state(ids[4], JobState::kCancelled, "user", 31));

  auto query = [&](JobQuery q) {
    std::vector<JobId> out;
    for (const StoredJob& j : value_of(store_->list_jobs(q))) out.push_back(j.id);
    return out;
  };
  EXPECT_EQ(query({}), ids);
  EXPECT_EQ(query(by_ids({ids[3], ids[0], 999})), (std::vector<JobId>{ids[0], ids[3]}));
  EXPECT_EQ(query(by_states({JobState::kPending})), (std::vector<JobId>{ids[0], ids[3]}));
  EXPECT_EQ(query(by_states({JobState::kCompleted, JobState::kRunning})),
            (std::vector<JobId>{ids[1], ids[2]}));
  JobQuery by_uid;
  by_uid.uid = 2000;
  EXPECT_EQ(query(by_uid), (std::vector<JobId>{ids[2], ids[3]}));
  EXPECT_EQ(query(by_states({}, /*only_active=*/true)),
            (std::vector<JobId>{ids[0], ids[1], ids[3]}));
  EXPECT_EQ(query(by_states({JobState::kCompleted}, true)), std::vector<JobId>{});
  EXPECT_EQ(query(by_states({JobState::kCompleted, JobState::kPending}, true)),
            (std::vector<JobId>{ids[0], ids[3]}));
  JobQuery all_fields = by_states({JobState::kPending, JobState::kRunning}, true);
  all_fields.ids = {ids[0], ids[1], ids[2], ids[3]};
  all_fields.uid = 1000;
  EXPECT_EQ(query(all_fields), (std::vector<JobId>{ids[0], ids[1]}));
  all_fields.uid = 2000;
  EXPECT_EQ(query(all_fields), (std::vector<JobId>{ids[3]}));
}

// --- Passes

TEST_P(StoreTest, CommitPassStartsJobsAndRecordsNotesAndCoreState) {
  JobId a = add(simple_job("a", 2));
  JobId b = add(simple_job("b"));
  EXPECT_EQ(value_of(store_->core_state()), std::nullopt);
  int64_t before = version();

  PassCommit pass = pass_of({start_of(a, {3, 2})});
  pass.notes = {{b, "Priority", 77}};
  pass.core_state = "reservations: b at 77";
  EXPECT_OK(store_->commit_pass(pass, 50));
  EXPECT_GT(version(), before);

  StoredJob ja = get(a);
  EXPECT_EQ(ja.state, JobState::kRunning);
  EXPECT_EQ(ja.attempt, 1);
  EXPECT_EQ(ja.start_time, 50);
  EXPECT_EQ(ja.nodes, (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(get(b).reason, "Priority");
  EXPECT_EQ(get(b).expected_start, 77);
  EXPECT_EQ(value_of(store_->core_state()), std::optional<std::string>("reservations: b at 77"));

  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  ASSERT_EQ(nodes.size(), 16u);
  EXPECT_EQ(nodes[2].jobs, std::vector<JobId>{a});
  EXPECT_EQ(nodes[3].jobs, std::vector<JobId>{a});
  EXPECT_TRUE(nodes[4].jobs.empty());
  EXPECT_EQ(event_kinds(), (std::vector<std::string>{"submit", "submit", "start"}));
  EXPECT_EQ(all_events().back().job, a);

  // The same pass again changes nothing in notes or core state: the version stays.
  PassCommit same;
  same.notes = pass.notes;
  same.core_state = pass.core_state;
  int64_t after = version();
  EXPECT_OK(store_->commit_pass(same, 51));
  EXPECT_EQ(version(), after);
  // A note for a job that is no longer pending is dropped, not an error.
  PassCommit late;
  late.notes = {{a, "Resources", 99}};
  EXPECT_OK(store_->commit_pass(late, 52));
  EXPECT_EQ(get(a).reason, "");
}

TEST_P(StoreTest, CommitPassRefusesASecondExclusiveAllocation) {
  JobId a = add(simple_job("a", 2));
  JobId b = add(simple_job("b", 2));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {0, 1})}), 20));
  int64_t before = version();
  size_t events_before = all_events().size();

  Error e = error_of(store_->commit_pass(pass_of({start_of(b, {1, 2})}), 21));
  EXPECT_EQ(e.code, Error::Code::kDoesNotFitNow);
  EXPECT_TRUE(has(e.message, "node 1 (n1)") && has(e.message, "job " + std::to_string(a)))
      << e.message;
  StoredJob jb = get(b);
  EXPECT_EQ(jb.state, JobState::kPending);
  EXPECT_EQ(jb.attempt, 0);
  EXPECT_TRUE(jb.nodes.empty());
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[2].jobs.empty());  // the insert before the refused one was undone
  EXPECT_EQ(nodes[1].jobs, std::vector<JobId>{a});
  EXPECT_EQ(version(), before);
  EXPECT_EQ(all_events().size(), events_before);
}

TEST_P(StoreTest, AFailedPassLeavesNothingHalfApplied) {
  JobId a = add(simple_job("a"));
  JobId b = add(simple_job("b"));
  JobId c = add(simple_job("c"));
  PassCommit first;
  first.core_state = "old";
  EXPECT_OK(store_->commit_pass(first, 1));
  int64_t before = version();

  PassCommit pass = pass_of({start_of(a, {0}), start_of(b, {0})});  // b collides with a
  pass.notes = {{c, "Resources", 5}};
  pass.core_state = "new";
  EXPECT_EQ(error_of(store_->commit_pass(pass, 2)).code, Error::Code::kDoesNotFitNow);

  EXPECT_EQ(get(a).state, JobState::kPending);
  EXPECT_EQ(get(a).attempt, 0);
  EXPECT_EQ(get(c).reason, "");
  EXPECT_EQ(value_of(store_->core_state()), std::optional<std::string>("old"));
  for (const StoredNode& n : value_of(store_->list_nodes())) EXPECT_TRUE(n.jobs.empty());
  EXPECT_EQ(version(), before);
  EXPECT_EQ(event_kinds(), (std::vector<std::string>{"submit", "submit", "submit"}));

  // The same pass without the collision goes through.
  pass.starts[1].nodes = {1};
  EXPECT_OK(store_->commit_pass(pass, 3));
  EXPECT_EQ(get(b).state, JobState::kRunning);
}

TEST_P(StoreTest, CommitPassChecksStateAttemptAndNodes) {
  JobId a = add(simple_job("a"));
  Error attempt = error_of(store_->commit_pass(pass_of({start_of(a, {0}, 2)}), 1));
  EXPECT_EQ(attempt.code, Error::Code::kDoesNotFitNow);
  EXPECT_TRUE(has(attempt.message, "attempt 2")) << attempt.message;
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(a, {16})}), 1)).code,
            Error::Code::kNotFound);
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(a, {3, 3})}), 1)).code,
            Error::Code::kInvalidArgument);
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(a, {})}), 1)).code,
            Error::Code::kInvalidArgument);
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {0})}), 1));
  // Running now: a second start of the same attempt is refused.
  Error again = error_of(store_->commit_pass(pass_of({start_of(a, {5}, 2)}), 2));
  EXPECT_EQ(again.code, Error::Code::kDoesNotFitNow);
  EXPECT_TRUE(has(again.message, "RUNNING")) << again.message;
}

TEST_P(StoreTest, SharedJobsShareNodesButNeverWithAnExclusiveOne) {
  JobId s1 = add(simple_job("s1", 2, /*share=*/true));
  JobId s2 = add(simple_job("s2", 2, /*share=*/true));
  JobId x = add(simple_job("x", 1));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(s1, {0, 1}), start_of(s2, {0, 1})}), 1));
  EXPECT_EQ(value_of(store_->list_nodes())[0].jobs, (std::vector<JobId>{s1, s2}));
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(x, {1})}), 2)).code,
            Error::Code::kDoesNotFitNow);
  EXPECT_OK(store_->commit_pass(pass_of({start_of(x, {2})}), 2));
  JobId s3 = add(simple_job("s3", 1, /*share=*/true));
  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(s3, {2})}), 3)).code,
            Error::Code::kDoesNotFitNow);
}

TEST_P(StoreTest, TheDatabaseItselfRefusesADoubleAllocation) {
  JobId a = add(simple_job("a"));
  JobId b = add(simple_job("b"));
  JobId s = add(simple_job("s", 1, /*share=*/true));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {7})}), 1));

  std::unique_ptr<sql::Session> raw = value_of(raw_session());
  ASSERT_TRUE(raw);
  auto insert = [&](JobId job, int node, int exclusive) {
    return raw->query("INSERT INTO allocations (job_id, node_id, exclusive) VALUES (?, ?, ?)",
                      {job, node, exclusive});
  };
  // A refused constraint is kDoesNotFitNow from either engine.
  EXPECT_EQ(error_of(insert(b, 7, 1)).code, Error::Code::kDoesNotFitNow);
  EXPECT_EQ(error_of(insert(s, 7, 0)).code, Error::Code::kDoesNotFitNow);
  EXPECT_OK(insert(b, 8, 1));
  EXPECT_EQ(value_of(raw->query("SELECT count(*) FROM allocations WHERE node_id = 7")).int64(0, 0),
            1);
  // The store reads what the hand wrote: node 8 is held by b.
  EXPECT_EQ(value_of(store_->list_nodes())[8].jobs, std::vector<JobId>{b});
  // Within one statement too (PostgreSQL checks a statement's rows at its end).
  JobId c = add(simple_job("c"));
  EXPECT_EQ(error_of(raw->query("INSERT INTO allocations (job_id, node_id, exclusive) VALUES "
                                "(?, 9, 0), (?, 9, 1)",
                                {s, c}))
                .code,
            Error::Code::kDoesNotFitNow);
  EXPECT_EQ(value_of(raw->query("SELECT count(*) FROM allocations WHERE node_id = 9")).int64(0, 0),
            0);
}

// --- Ends

TEST_P(StoreTest, EndJobFreesNodesAndIsIdempotent) {
  JobId a = add(simple_job("a", 2));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {4, 5})}), 10));
  // A report for another attempt changes nothing.
  EXPECT_EQ(value_of(store_->end_job(ending(a, 2, JobState::kCompleted), 15)), false);
  EXPECT_EQ(get(a).state, JobState::kRunning);

  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kCompleted, 0, 0, ""), 20)), true);
  StoredJob done = get(a);
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.end_time, 20);
  EXPECT_EQ(done.nodes, (std::vector<NodeId>{4, 5}));  // kept for the record
  for (const StoredNode& n : value_of(store_->list_nodes())) EXPECT_TRUE(n.jobs.empty());
  EXPECT_EQ(event_kinds(), (std::vector<std::string>{"submit", "start", "end"}));

  int64_t before = version();
  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kFailed, 1, 0, "late"), 30)), false);
  EXPECT_EQ(get(a).state, JobState::kCompleted);
  EXPECT_EQ(get(a).end_time, 20);
  EXPECT_EQ(version(), before);
  EXPECT_EQ(all_events().size(), 3u);

  EXPECT_EQ(error_of(store_->end_job(ending(a, 1, JobState::kRunning), 30)).code,
            Error::Code::kInvalidArgument);
  // The freed nodes take another job.
  JobId b = add(simple_job("b", 2));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(b, {4, 5})}), 40));
}

TEST_P(StoreTest, RequeueThenRestartAsAttemptTwo) {
  JobId a = add(simple_job("a"));
  JobStart first = start_of(a, {3});
  first.box_anchor = {3, 0};
  first.box_extents = {1, 1};
  EXPECT_OK(store_->commit_pass(pass_of({first}), 10));
  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kPending, 0, 15, "node failed"), 20)),
            true);
  StoredJob requeued = get(a);
  EXPECT_EQ(requeued.state, JobState::kPending);
  EXPECT_EQ(requeued.attempt, 1);
  EXPECT_TRUE(requeued.nodes.empty());
  EXPECT_TRUE(requeued.box_anchor.empty());
  EXPECT_EQ(requeued.start_time, 0);
  EXPECT_EQ(requeued.end_time, 0);
  EXPECT_EQ(requeued.signal, 15);
  EXPECT_EQ(requeued.reason, "node failed");
  EXPECT_TRUE(value_of(store_->list_nodes())[3].jobs.empty());
  // The same report again (the job is pending now) changes nothing.
  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kPending), 21)), false);

  EXPECT_EQ(error_of(store_->commit_pass(pass_of({start_of(a, {3}, 1)}), 30)).code,
            Error::Code::kDoesNotFitNow);
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {6}, 2)}), 30));
  StoredJob again = get(a);
  EXPECT_EQ(again.state, JobState::kRunning);
  EXPECT_EQ(again.attempt, 2);
  EXPECT_EQ(again.start_time, 30);
  EXPECT_EQ(again.nodes, std::vector<NodeId>{6});
  EXPECT_EQ(again.signal, 0);
  // A late report from attempt 1 does not end attempt 2.
  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kFailed), 31)), false);
  EXPECT_EQ(value_of(store_->end_job(ending(a, 2, JobState::kCompleted), 40)), true);
  EXPECT_EQ(event_kinds(),
            (std::vector<std::string>{"submit", "start", "requeue", "start", "end"}));
}

TEST_P(StoreTest, SetJobState) {
  JobId a = add(simple_job("a"));
  JobId p = add(simple_job("p"));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {0})}), 1));

  EXPECT_OK(store_->set_job_state(a, JobState::kSuspended, "gang slot", 2));
  EXPECT_EQ(get(a).state, JobState::kSuspended);
  EXPECT_OK(store_->set_job_state(a, JobState::kRunning, "", 3));
  EXPECT_OK(store_->set_job_state(a, JobState::kCompleting, "cancel asked", 4));
  EXPECT_EQ(get(a).state, JobState::kCompleting);
  EXPECT_EQ(get(a).reason, "cancel asked");
  EXPECT_EQ(value_of(store_->list_nodes())[0].jobs, std::vector<JobId>{a});  // still held
  EXPECT_EQ(value_of(store_->end_job(ending(a, 1, JobState::kCancelled), 5)), true);

  Error final = error_of(store_->set_job_state(a, JobState::kRunning, "", 6));
  EXPECT_EQ(final.code, Error::Code::kInvalidArgument);
  EXPECT_TRUE(has(final.message, "CANCELLED")) << final.message;
  EXPECT_FALSE(store_->set_job_state(p, JobState::kRunning, "", 6));  // only a pass starts it

  // Cancelling a pending job.
  EXPECT_OK(store_->set_job_state(p, JobState::kCancelled, "by user", 7));
  StoredJob cancelled = get(p);
  EXPECT_EQ(cancelled.state, JobState::kCancelled);
  EXPECT_EQ(cancelled.end_time, 7);
  EXPECT_EQ(all_events().back().kind, "cancel");
  EXPECT_FALSE(store_->set_job_state(p, JobState::kCancelled, "", 8));
}

// --- Nodes

TEST_P(StoreTest, NodesUpDownAndDrained) {
  EXPECT_OK(store_->register_nodes({"n0", "n1"}, "host1:7000", {}, 100));
  EXPECT_OK(store_->nodes_seen({"n0", "n1"}, "host1:7000", 110));  // heartbeat: no new event
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[0].up);
  EXPECT_EQ(nodes[0].agent, "host1:7000");
  EXPECT_EQ(nodes[0].last_heartbeat, 110);
  EXPECT_FALSE(nodes[2].up);
  // One event for the change to both nodes, naming them as a hostlist.
  EXPECT_EQ(event_kinds(), (std::vector<std::string>{"node_up"}));
  EXPECT_EQ(all_events()[0].node, "n[0-1]");

  Error unknown = error_of(store_->register_nodes({"n2", "nope"}, "host1:7000", {}, 120));
  EXPECT_EQ(unknown.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(unknown.message, "'nope'")) << unknown.message;
  EXPECT_FALSE(value_of(store_->list_nodes())[2].up);  // the whole call was undone

  EXPECT_OK(store_->nodes_down({1, 2}, "missed heartbeats", 130));  // 2 was down already
  nodes = value_of(store_->list_nodes());
  EXPECT_FALSE(nodes[1].up);
  EXPECT_EQ(nodes[1].reason, "missed heartbeats");
  EXPECT_EQ(all_events().back().kind, "node_down");
  EXPECT_EQ(all_events().back().detail, "missed heartbeats");
  EXPECT_EQ(all_events().back().node, "n1");  // only the node that changed
  EXPECT_EQ(all_events().size(), 2u);
  EXPECT_EQ(error_of(store_->nodes_down({16}, "", 131)).code, Error::Code::kNotFound);

  EXPECT_OK(store_->set_drained({0}, true, "maintenance", 140));
  EXPECT_OK(store_->set_drained({0}, true, "maintenance", 141));  // already: no event
  nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[0].drained);
  EXPECT_EQ(nodes[0].reason, "maintenance");
  EXPECT_OK(store_->nodes_seen({"n0"}, "host1:7000", 150));
  EXPECT_EQ(value_of(store_->list_nodes())[0].reason, "maintenance");  // a drain outlives beats
  EXPECT_OK(store_->set_drained({0}, false, "", 160));
  nodes = value_of(store_->list_nodes());
  EXPECT_FALSE(nodes[0].drained);
  EXPECT_EQ(nodes[0].reason, "");
  // A heartbeat never brings a node back: only a registration, which lists what runs there.
  Error down = error_of(store_->nodes_seen({"n1"}, "host1:7000", 165));
  EXPECT_EQ(down.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(down.message, "n1 is down")) << down.message;
  EXPECT_FALSE(value_of(store_->list_nodes())[1].up);
  EXPECT_OK(store_->register_nodes({"n1"}, "host2:7000", {}, 170));  // back up: the reason goes
  EXPECT_EQ(value_of(store_->list_nodes())[1].reason, "");
  // n1 moved to host2: a heartbeat from the old address is refused.
  Error moved = error_of(store_->nodes_seen({"n1"}, "host1:7000", 175));
  EXPECT_EQ(moved.code, Error::Code::kNotFound);
  EXPECT_TRUE(has(moved.message, "registered to host2:7000")) << moved.message;
  EXPECT_EQ(value_of(store_->list_nodes())[1].last_heartbeat, 170);
  EXPECT_EQ(event_kinds(),
            (std::vector<std::string>{"node_up", "node_down", "drain", "resume", "node_up"}));
}

// Found by the 30-minute chaos run on PostgreSQL with two controllers: an agent registered with
// one controller while the other requeued its job, and the node came back with the old attempt's
// process still on it. The store decides whether a node may come up, in the same transaction that
// brings it up.
TEST_P(StoreTest, ANodeWhereAnEndedAttemptStillRunsDoesNotComeUp) {
  JobId a = add(simple_job("a"));
  JobId b = add(simple_job("b"));
  EXPECT_OK(store_->register_nodes({"n3", "n4", "n5"}, "host1:7000", {}, 5));
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {3}), start_of(b, {4})}), 10));
  EXPECT_OK(store_->nodes_down({3, 4, 5}, "missed heartbeats", 20));
  // The scheduler requeues a (node failure); b keeps running (its node is only unheard).
  EXPECT_TRUE(value_of(store_->end_job(ending(a, 1, JobState::kPending, 0, 9, "node failed"), 21)));

  // The agent comes back running a's attempt 1 (ended), b's attempt 1 (current), and a task of
  // attempt 7 of b, which never existed.
  std::vector<RunningTask> running = {{a, 1, "n3"}, {b, 1, "n4"}, {b, 7, "n5"}};
  std::vector<RunningTask> stale =
      value_of(store_->register_nodes({"n3", "n4", "n5"}, "host1:7001", running, 30));
  EXPECT_EQ(stale, (std::vector<RunningTask>{{a, 1, "n3"}, {b, 7, "n5"}}));
  std::vector<StoredNode> nodes = value_of(store_->list_nodes());
  EXPECT_FALSE(nodes[3].up);
  EXPECT_TRUE(nodes[4].up);
  EXPECT_FALSE(nodes[5].up);
  EXPECT_EQ(error_of(store_->nodes_seen({"n3"}, "host1:7001", 31)).code, Error::Code::kNotFound);

  // Once the agent has killed them, it registers without them and the nodes come back.
  EXPECT_TRUE(value_of(store_->register_nodes({"n3", "n4", "n5"}, "host1:7001", {{b, 1, "n4"}}, 32))
                  .empty());
  nodes = value_of(store_->list_nodes());
  EXPECT_TRUE(nodes[3].up && nodes[4].up && nodes[5].up);
  // A stale process on a node that is up already does not take it down (its kill goes first).
  EXPECT_EQ(value_of(store_->register_nodes({"n3"}, "host1:7001", {{a, 1, "n3"}}, 33)).size(), 1u);
  EXPECT_TRUE(value_of(store_->list_nodes())[3].up);
}

TEST_P(StoreTest, EventsArePagedBySeq) {
  for (int i = 0; i < 10; ++i) add(simple_job(numbered("j", i)), i);
  std::vector<StoredEvent> page = value_of(store_->events(0, 4));
  ASSERT_EQ(page.size(), 4u);
  std::vector<StoredEvent> next = value_of(store_->events(page.back().seq, 100));
  ASSERT_EQ(next.size(), 6u);
  EXPECT_EQ(next.front().seq, page.back().seq + 1);
  EXPECT_EQ(next.back().time, 9);
  EXPECT_TRUE(value_of(store_->events(next.back().seq, 10)).empty());
  EXPECT_TRUE(value_of(store_->events(0, 0)).empty());
  EXPECT_FALSE(store_->events(0, -1));
}
// --- Several connections

TEST_P(StoreTest, AWriterAndAReadOnlyReaderSeeEachOthersCommits) {
  std::unique_ptr<SqlStore> reader = open_reader();
  ASSERT_TRUE(reader);
  int64_t seen = value_of(reader->version());
  EXPECT_EQ(value_of(reader->machine_spec()), "torus:4x4");

  JobId a = add(simple_job("a"));
  int64_t after_add = value_of(reader->version());
  EXPECT_GT(after_add, seen);
  EXPECT_EQ(value_of(reader->job(a)).name, "a");
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {9})}), 20));
  EXPECT_GT(value_of(reader->version()), after_add);
  EXPECT_EQ(value_of(reader->list_nodes())[9].jobs, std::vector<JobId>{a});
  EXPECT_EQ(value_of(reader->events(0, 10)).size(), 2u);
  EXPECT_EQ(value_of(reader->version()), version());

  // The reader takes no writes, and says why.
  Error refused = error_of(reader->add_job(simple_job("b"), 1));
  EXPECT_EQ(refused.code, Error::Code::kInvalidArgument);
  EXPECT_TRUE(has(refused.message, "read-only") && has(refused.message, reader->name()))
      << refused.message;
  EXPECT_FALSE(reader->commit_pass(pass_of({start_of(a, {1}, 2)}), 1));
  EXPECT_FALSE(reader->end_job(ending(a, 1, JobState::kCompleted), 1));
  EXPECT_FALSE(reader->register_nodes({"n0"}, "h", {}, 1));
  EXPECT_FALSE(reader->init_cluster("torus:4x4", node_names(16)));
  EXPECT_EQ(value_of(reader->list_jobs({})).size(), 1u);

  // A second writer on the same file, and the first sees its commits.
  auto second = value_of(open_another(false));
  ASSERT_TRUE(second);
  int64_t before = version();
  JobId b = value_of(second->add_job(simple_job("b"), 30));
  EXPECT_GT(b, a);
  EXPECT_GT(version(), before);
  EXPECT_EQ(get(b).name, "b");
}

// Adds `per_thread` jobs from each store in `stores`, `threads_per_store` threads on each.
void add_concurrently(const std::vector<SqlStore*>& stores, int threads_per_store, int per_thread,
                      std::vector<JobId>& ids) {
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (SqlStore* store : stores) {
    for (int t = 0; t < threads_per_store; ++t) {
      threads.emplace_back([&, store, t] {
        std::vector<JobId> mine;
        for (int i = 0; i < per_thread; ++i) {
          Result<JobId> id = store->add_job(simple_job(numbered("t", t)), i);
          if (id) mine.push_back(*id);
        }
        std::lock_guard lock(mutex);
        ids.insert(ids.end(), mine.begin(), mine.end());
      });
    }
  }
  for (std::thread& t : threads) t.join();
}

void expect_distinct_and_gap_free(SqlStore& store, const std::vector<JobId>& ids, size_t expected) {
  EXPECT_EQ(ids.size(), expected);
  EXPECT_EQ(std::set<JobId>(ids.begin(), ids.end()).size(), expected);
  EXPECT_EQ(value_of(store.list_jobs({})).size(), expected);
  std::vector<StoredEvent> events = value_of(store.events(0, 1 << 30));
  ASSERT_EQ(events.size(), expected);
  std::set<JobId> logged;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
    logged.insert(events[i].job);
  }
  EXPECT_EQ(logged, std::set<JobId>(ids.begin(), ids.end()));
}

TEST_P(StoreTest, FourThreadsOnOneStore) {
  std::vector<JobId> ids;
  add_concurrently({store_.get()}, 4, 500, ids);
  expect_distinct_and_gap_free(*store_, ids, 2000);
}

TEST_P(StoreTest, TwoStoresOnOneDatabaseWithTwoThreadsEach) {
  auto second = value_of(open_another(false));
  ASSERT_TRUE(second);
  std::vector<JobId> ids;
  add_concurrently({store_.get(), second.get()}, 2, 500, ids);
  expect_distinct_and_gap_free(*second, ids, 2000);
}

// Prints (does not assert) the rates of the controller's hot paths.
TEST_P(StoreTest, Throughput) {
  using Clock = std::chrono::steady_clock;
  constexpr int kJobs = 500;
  std::vector<JobId> ids;
  auto t0 = Clock::now();
  for (int i = 0; i < kJobs; ++i) ids.push_back(add(simple_job("j"), i));
  auto t1 = Clock::now();
  // One start per pass on 4 nodes, ended before the next, with a note and the core state.
  for (int i = 0; i < kJobs; ++i) {
    PassCommit pass = pass_of({start_of(ids[i], {0, 1, 2, 3})});
    if (i + 1 < kJobs) pass.notes = {{ids[i + 1], "Resources", static_cast<Seconds>(i + 1)}};
    pass.core_state = "reservation " + std::to_string(i);
    EXPECT_OK(store_->commit_pass(pass, i));
    EXPECT_TRUE(value_of(store_->end_job(ending(ids[i], 1, JobState::kCompleted), i + 0.5)));
  }
  auto t2 = Clock::now();
  double add_s = std::chrono::duration<double>(t1 - t0).count();
  double pass_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("[ %-8s ] add_job: %.0f/s; commit_pass + end_job pairs: %.0f/s\n",
              engine_ == Engine::kSqlite ? "sqlite" : "postgres", kJobs / add_s, kJobs / pass_s);
}

// --- PostgreSQL's connections

// A connection that the server drops (a server restart, a network cut, an administrator's
// pg_terminate_backend) is reconnected by the next call, which then runs whole, once.
TEST_F(PostgresStoreTest, ALostConnectionIsReconnectedAndTheCallRunsWholeOnce) {
  JobId a = add(simple_job("a"));
  std::string database = url_.substr(url_.rfind('/') + 1);
  auto drop_connections = [&] {
    Result<std::string> dropped = server_->psql(
        "postgres",
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
        "datname = '" +
            database + "' AND pid <> pg_backend_pid()) t;");
    ASSERT_TRUE(dropped) << dropped.error().message;
    EXPECT_NE(*dropped, "0\n") << "no connection was dropped";
  };
  ASSERT_NO_FATAL_FAILURE(drop_connections());
  JobId b = add(simple_job("b"), 20);  // a write
  EXPECT_EQ(b, a + 1);
  ASSERT_NO_FATAL_FAILURE(drop_connections());
  EXPECT_OK(store_->commit_pass(pass_of({start_of(a, {1, 2})}), 30));
  ASSERT_NO_FATAL_FAILURE(drop_connections());
  EXPECT_EQ(get(a).state, JobState::kRunning);  // a read
  EXPECT_EQ(value_of(store_->list_nodes())[2].jobs, std::vector<JobId>{a});
  EXPECT_EQ(event_kinds(), (std::vector<std::string>{"submit", "submit", "start"}));
}

// A batch of submissions is one exchange with the server: each insert appends its own "submit"
// event, under the log's lock taken first in the same pipeline, so the log stays gap-free and in
// id order. A batch with a batch script takes the two-exchange path, and stores the script.
TEST_F(PostgresStoreTest, ABatchOfSubmissionsIsOneExchangeAndLogsEachInOrder) {
  auto exchanges = [&] { return store_->operation_counts()["add_job"].round_trips; };
  (void)add(simple_job("warm"), 1);  // the connection and its prepared statements
  const int64_t before = exchanges();
  std::vector<StoredJob> batch;
  for (const char* name : {"a", "b", "c", "d", "e"}) batch.push_back(simple_job(name));
  Result<std::vector<JobId>> ids = store_->add_jobs(batch, 50);
  ASSERT_TRUE(ids) << ids.error().message;
  EXPECT_EQ(exchanges() - before, 1);
  ASSERT_EQ(ids->size(), 5u);
  for (size_t i = 1; i < ids->size(); ++i) EXPECT_EQ((*ids)[i], (*ids)[i - 1] + 1);
  std::vector<StoredEvent> events = all_events();
  ASSERT_EQ(events.size(), 6u);
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, events[i - 1].seq + 1);
    EXPECT_EQ(events[i].kind, "submit");
    EXPECT_EQ(events[i].job, (*ids)[i - 1]);
    EXPECT_EQ(events[i].detail, batch[i - 1].name);
    EXPECT_EQ(events[i].time, 50);
  }
  StoredJob with_script = simple_job("batch");
  with_script.script = "#!/bin/sh\necho hi\n";
  const int64_t before_script = exchanges();
  Result<std::vector<JobId>> scripted = store_->add_jobs({simple_job("f"), with_script}, 60);
  ASSERT_TRUE(scripted) << scripted.error().message;
  EXPECT_GE(exchanges() - before_script, 2);
  StoredJob stored = get(scripted->back());
  ASSERT_NE(stored.script_id, 0);
  EXPECT_EQ(value_of(store_->job_script(stored.script_id)), with_script.script);
  events = all_events();
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events[6].job, scripted->front());
  EXPECT_EQ(events[7].job, scripted->back());
  EXPECT_EQ(events[7].seq, events[5].seq + 2);
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         test::engine_name);

}  // namespace
}  // namespace trellis::store_test
