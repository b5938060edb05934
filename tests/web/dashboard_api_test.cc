// The dashboard's API on a store written by hand: the history replayed from the event log
// against a model kept beside the writes (random histories of submits, starts, ends, requeues
// and cancels), read incrementally and at once; the node map's states and largest free box; job
// filters; errors that name the bad value.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "../daemon/daemon_test_support.h"
#include "../store_engines.h"
#include "alloc/metrics.h"
#include "web/dashboard_api.h"
#include "web/dashboard_server.h"
#include "web/event_history.h"

namespace trellis {
namespace {

using web::EventHistory;
using web::HistorySample;

class DashboardApiTest : public ::testing::Test {
 protected:
  // A new store (in its own file) on machine `spec` whose `nodes` nodes are all up.
  void open(const std::string& spec, int nodes, const std::string& file = "state.db") {
    auto store = open_store("sqlite:" + (dir_ / file));
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    std::vector<std::string> names;
    for (int i = 0; i < nodes; ++i) {
      std::ostringstream name;  // not "n" + to_string(i): GCC 12 warns wrongly (-Wrestrict)
      name << 'n' << i;
      names.push_back(name.str());
    }
    ASSERT_TRUE(store_->init_cluster(spec, names));
    ASSERT_TRUE(store_->register_nodes(names, "127.0.0.1:1", {}, now_));
  }
  JobId submit(int nodes, const std::string& user = "alice", const std::string& name = "job") {
    StoredJob job;
    job.request = Request::count(nodes, PlacementMode::kNonContiguous);
    job.argv = {"true"};
    job.user = user;
    job.name = name;
    job.output = "/tmp/out-%j.txt";
    Result<JobId> id = store_->add_job(job, now_);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : 0;
  }
  void start(JobId id, int attempt, const std::vector<NodeId>& nodes) {
    PassCommit pass;
    pass.starts.push_back(JobStart{id, attempt, nodes, {}, {}});
    ASSERT_TRUE(store_->commit_pass(pass, now_));
  }
  void end(JobId id, int attempt, JobState state) {
    JobEnd ended;
    ended.job = id;
    ended.attempt = attempt;
    ended.state = state;
    Result<bool> ok = store_->end_job(ended, now_);
    ASSERT_TRUE(ok && *ok);
  }

  testing::TempDir dir_;
  std::unique_ptr<StateStore> store_;
  Seconds now_ = 1000;
};

// The model: busy nodes and queued jobs after each write, at the write's time.
struct ModelStep {
  Seconds time;
  int busy;
  int queued;
};

HistorySample model_at(const std::vector<ModelStep>& steps, Seconds t) {
  HistorySample s{t, 0, 0};
  for (const ModelStep& step : steps) {
    if (step.time <= t) {
      s.busy_nodes = step.busy;
      s.queued_jobs = step.queued;
    }
  }
  return s;
}

TEST_F(DashboardApiTest, HistoryReplaysRandomLogsAsTheWritesHappened) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    open("flat:16", 16, "seed" + std::to_string(seed) + ".db");
    std::mt19937 random(seed);
    struct Track {
      JobId id;
      int nodes;
      int attempt = 0;
      std::vector<NodeId> held;
      bool done = false;
    };
    std::vector<Track> jobs;
    std::vector<bool> free(16, true);
    std::vector<ModelStep> steps;
    int busy = 0, queued = 0;
    Seconds first = now_ + 1;
    EventHistory incremental;
    for (int op = 0; op < 150; ++op) {
      now_ += 1 + random() % 3;
      int choice = static_cast<int>(random() % 10);
      std::vector<Track*> pending, running;
      for (Track& t : jobs) {
        if (t.done) continue;
        (t.held.empty() ? pending : running).push_back(&t);
      }
      if (choice < 3 || (pending.empty() && running.empty())) {
        int nodes = 1 + static_cast<int>(random() % 6);
        jobs.push_back(Track{submit(nodes), nodes, 0, {}, false});
        ++queued;
      } else if (choice < 6 && !pending.empty()) {
        Track& t = *pending[random() % pending.size()];
        std::vector<NodeId> nodes;
        for (NodeId n = 0; n < 16 && static_cast<int>(nodes.size()) < t.nodes; ++n) {
          if (free[n]) nodes.push_back(n);
        }
        if (static_cast<int>(nodes.size()) < t.nodes) continue;
        start(t.id, ++t.attempt, nodes);
        for (NodeId n : nodes) free[n] = false;
        t.held = nodes;
        busy += t.nodes;
        --queued;
      } else if (choice < 9 && !running.empty()) {
        Track& t = *running[random() % running.size()];
        bool requeue = choice == 8;
        end(t.id, t.attempt, requeue ? JobState::kPending : JobState::kCompleted);
        for (NodeId n : t.held) free[n] = true;
        t.held.clear();
        busy -= t.nodes;
        if (requeue) {
          ++queued;
        } else {
          t.done = true;
        }
      } else if (!pending.empty()) {
        Track& t = *pending[random() % pending.size()];
        if (t.attempt == 0) {
          Result<JobState> stopped = store_->stop_job(t.id, 0, StopCause::kCancel, "by test", now_);
          ASSERT_TRUE(stopped);
          ASSERT_EQ(*stopped, JobState::kCancelled);
        } else {
          ASSERT_TRUE(store_->set_job_state(t.id, JobState::kFailed, "by test", now_));
        }
        t.done = true;
        --queued;
      } else {
        continue;
      }
      steps.push_back(ModelStep{now_, busy, queued});
      if (op % 37 == 0) {
        ASSERT_TRUE(incremental.catch_up(*store_));
      }
    }
    ASSERT_TRUE(incremental.catch_up(*store_));
    EventHistory at_once;
    ASSERT_TRUE(at_once.catch_up(*store_));
    EXPECT_EQ(incremental.last_seq(), at_once.last_seq());
    // Sample every half second (between and on the writes' whole-second times).
    int points = static_cast<int>((now_ - first) * 2) + 1;
    std::vector<HistorySample> a = incremental.samples(first, now_, points);
    std::vector<HistorySample> b = at_once.samples(first, now_, points);
    ASSERT_EQ(a.size(), static_cast<size_t>(points));
    for (size_t i = 0; i < a.size(); ++i) {
      HistorySample want = model_at(steps, a[i].time);
      ASSERT_EQ(a[i].busy_nodes, want.busy_nodes) << "at " << a[i].time;
      ASSERT_EQ(a[i].queued_jobs, want.queued_jobs) << "at " << a[i].time;
      ASSERT_EQ(b[i].busy_nodes, a[i].busy_nodes);
      ASSERT_EQ(b[i].queued_jobs, a[i].queued_jobs);
    }
    // Every run still open holds the nodes the model says are busy.
    int open_nodes = 0;
    for (const web::JobRun& run : at_once.runs_since(now_))
      if (run.end == 0) open_nodes += run.nodes;
    EXPECT_EQ(open_nodes, busy);
  }
}

TEST_F(DashboardApiTest, AJobsHistoryListsItsEventsAndItsRuns) {
  open("flat:8", 8);
  JobId id = submit(2, "bob", "<b>bold</b>");
  now_ += 5;
  start(id, 1, {0, 1});
  now_ += 5;
  end(id, 1, JobState::kPending);  // requeued
  now_ += 5;
  start(id, 2, {2, 3});
  now_ += 5;
  end(id, 2, JobState::kCompleted);
  EventHistory history;
  ASSERT_TRUE(history.catch_up(*store_));
  std::vector<std::string> kinds;
  for (const StoredEvent& e : history.job_events(id)) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"submit", "start", "requeue", "start", "end"}));
  std::vector<web::JobRun> runs = history.runs_since(0);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].attempt, 1);
  EXPECT_EQ(runs[0].end - runs[0].start, 5);
  EXPECT_EQ(runs[1].attempt, 2);
  EXPECT_EQ(runs[1].nodes, 2);
  // The first run ended before the window: only the second overlaps it.
  EXPECT_EQ(history.runs_since(now_ - 6).size(), 1u);

  Result<nlohmann::json> job = web::job_json(*store_, history, id, now_);
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_EQ((*job)["name"], "<b>bold</b>");  // as stored: the page escapes it
  EXPECT_EQ((*job)["state"], "CD");
  EXPECT_EQ((*job)["attempt"], 2);
  EXPECT_EQ((*job)["output"], "/tmp/out-" + std::to_string(id) + ".txt");
  EXPECT_EQ((*job)["history"].size(), 5u);
  Result<nlohmann::json> missing = web::job_json(*store_, history, id + 100, now_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Error::Code::kNotFound);
}

TEST_F(DashboardApiTest, NodesShowStatesJobsAndTheLargestFreeBox) {
  open("torus:4x4", 16);
  JobId id = submit(4);
  start(id, 1, {0, 1, 4, 5});
  ASSERT_TRUE(store_->set_drained({15}, true, "maintenance", now_));
  ASSERT_TRUE(store_->nodes_down({10}, "no heartbeat", now_));
  Result<nlohmann::json> body = web::nodes_json(*store_, now_);
  ASSERT_TRUE(body) << body.error().message;
  const nlohmann::json& j = *body;
  EXPECT_EQ(j["machine"]["kind"], "torus");
  EXPECT_EQ(j["machine"]["extents"], (std::vector<int>{4, 4}));
  EXPECT_EQ(j["counts"]["allocated"], 4);
  EXPECT_EQ(j["counts"]["drained"], 1);
  EXPECT_EQ(j["counts"]["down"], 1);
  EXPECT_EQ(j["counts"]["idle"], 10);
  ASSERT_EQ(j["nodes"].size(), 16u);
  EXPECT_EQ(j["nodes"][5]["state"], "allocated");
  EXPECT_EQ(j["nodes"][5]["jobs"][0], id);
  EXPECT_EQ(j["nodes"][5]["place"], (std::vector<int>{1, 1}));
  EXPECT_EQ(j["nodes"][15]["reason"], "maintenance");
  EXPECT_TRUE(j["jobs"].contains(std::to_string(id)));
  // The outlined box is the allocator layer's largest free box of the idle nodes, and holds
  // only idle nodes.
  NodeSet free(16);
  for (NodeId n : {2, 3, 6, 7, 8, 9, 11, 12, 13, 14}) free.set(n);
  Result<Torus> torus = Torus::make({4, 4}, {true, true});
  ASSERT_TRUE(torus);
  std::optional<Box> want = largest_free_box(*torus, free);
  ASSERT_TRUE(want);
  EXPECT_EQ(j["largest_free_box"]["volume"], want->volume());
  for (const nlohmann::json& n : j["largest_free_box"]["nodes"])
    EXPECT_TRUE(free.test(n.get<int>())) << n;
}

// With the nodes' types, each node says what it has and what no running job holds of it: the
// grants of jobs that share it, nothing of one a job holds whole.
TEST_F(DashboardApiTest, NodesOfATypeShowWhatIsFreeOfThem) {
  open("flat:3", 3);
  const std::vector<NodeInventory> types(3, *parse_node_inventory("cores=4,mem=8G,gpus=2"));
  JobId a = submit(1), b = submit(1), whole = submit(1);
  for (auto [id, grants] :
       std::vector<std::pair<JobId, std::string>>{{a, "0:c=0;m=1024;g=1"}, {b, "0:c=1-2;m=2048"}}) {
    PassCommit pass;
    JobStart start{id, 1, {0}, {}, {}};
    start.shares_nodes = true;
    start.grants = *decode_grants(grants);
    pass.starts.push_back(start);
    ASSERT_TRUE(store_->commit_pass(pass, now_));
  }
  start(whole, 1, {1});
  Result<nlohmann::json> body = web::nodes_json(*store_, now_, types);
  ASSERT_TRUE(body) << body.error().message;
  const nlohmann::json& nodes = (*body)["nodes"];
  EXPECT_EQ(nodes[0]["has"]["cores"], 4);
  EXPECT_EQ(nodes[0]["free"]["cores"], 1);
  EXPECT_EQ(nodes[0]["free"]["memory_mb"], 8192 - 3072);
  EXPECT_EQ(nodes[0]["free"]["gpus"], 1);
  EXPECT_EQ(nodes[1]["free"]["cores"], 0);  // held whole
  EXPECT_EQ(nodes[1]["free"]["memory_mb"], 0);
  EXPECT_EQ(nodes[2]["free"]["cores"], 4);
  EXPECT_EQ(nodes[2]["free"]["gpus"], 2);
  // Without types, nothing is said of them.
  EXPECT_FALSE((*web::nodes_json(*store_, now_))["nodes"][0].contains("free"));
}

TEST_F(DashboardApiTest, AFatTreeIsDrawnByLeafSwitch) {
  open("fattree:4,2", 8);
  Result<nlohmann::json> body = web::nodes_json(*store_, now_);
  ASSERT_TRUE(body) << body.error().message;
  EXPECT_EQ((*body)["machine"]["kind"], "fattree");
  EXPECT_EQ((*body)["machine"]["leaf_size"], 4);
  EXPECT_EQ((*body)["machine"]["switches"], (std::vector<int>{2, 1}));
  EXPECT_EQ((*body)["nodes"][5]["place"], 1);
  EXPECT_TRUE((*body)["largest_free_box"].is_null());
}

TEST_F(DashboardApiTest, JobsAreFilteredByStateAndUserNewestFirst) {
  open("flat:8", 8);
  JobId a = submit(1, "alice");
  JobId b = submit(1, "bob");
  JobId c = submit(1, "alice");
  start(b, 1, {0});
  Result<web::JobFilter> pending = web::parse_job_filter("pd", "", "");
  ASSERT_TRUE(pending);
  Result<nlohmann::json> list = web::jobs_json(*store_, *pending, now_);
  ASSERT_TRUE(list);
  ASSERT_EQ((*list)["jobs"].size(), 2u);
  EXPECT_EQ((*list)["jobs"][0]["id"], c);
  EXPECT_EQ((*list)["jobs"][1]["id"], a);
  Result<web::JobFilter> bobs = web::parse_job_filter("", "bob", "");
  ASSERT_TRUE(bobs);
  list = web::jobs_json(*store_, *bobs, now_);
  ASSERT_EQ((*list)["jobs"].size(), 1u);
  EXPECT_EQ((*list)["jobs"][0]["nodelist"], "n0");
  Result<web::JobFilter> one = web::parse_job_filter("PD,RUNNING", "", "1");
  ASSERT_TRUE(one);
  list = web::jobs_json(*store_, *one, now_);
  EXPECT_EQ((*list)["jobs"].size(), 1u);
  EXPECT_EQ((*list)["total"], 3);

  Result<web::JobFilter> bad = web::parse_job_filter("PD,XX", "", "");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'XX'"), std::string::npos) << bad.error().message;
  Result<web::JobFilter> bad_limit = web::parse_job_filter("", "", "-3");
  ASSERT_FALSE(bad_limit);
  EXPECT_NE(bad_limit.error().message.find("limit"), std::string::npos);
}

TEST(DashboardListenTest, AddressesParseOrSayWhatIsWrong) {
  auto a = web::parse_listen_address("127.0.0.1:8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, "127.0.0.1");
  EXPECT_EQ(a->second, 8080);
  auto b = web::parse_listen_address(":0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->first, "127.0.0.1");
  EXPECT_EQ(b->second, 0);
  EXPECT_FALSE(web::parse_listen_address("host:99999"));
  EXPECT_FALSE(web::parse_listen_address("host:http"));
  EXPECT_FALSE(web::parse_listen_address(""));
}

}  // namespace
}  // namespace trellis

namespace trellis {
namespace {

// The dashboard's read path on the shared store: a read-only session of a PostgreSQL database
// that a controller writes (here, a store written by hand).
TEST(DashboardPostgresTest, TheApiReadsAPostgresStoreReadOnly) {
  std::string url;
  test::fresh_postgres_database(url);
  if (url.empty()) return;
  auto writer = open_store(url);
  ASSERT_TRUE(writer) << writer.error().message;
  ASSERT_TRUE((*writer)->init_cluster("torus:2x2", {"n0", "n1", "n2", "n3"}));
  ASSERT_TRUE((*writer)->register_nodes({"n0", "n1", "n2", "n3"}, "127.0.0.1:1", {}, 10));
  StoredJob job;
  job.request = Request::count(2);
  job.argv = {"true"};
  job.user = "carol";
  job.name = "on postgres";
  Result<JobId> id = (*writer)->add_job(job, 11);
  ASSERT_TRUE(id);
  PassCommit pass;
  pass.starts.push_back(JobStart{*id, 1, {0, 1}, {}, {}});
  ASSERT_TRUE((*writer)->commit_pass(pass, 12));

  auto reader = open_store(url, {.read_only = true});
  ASSERT_TRUE(reader) << reader.error().message;
  Result<nlohmann::json> nodes = web::nodes_json(**reader, 13);
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ((*nodes)["counts"]["allocated"], 2);
  EXPECT_EQ((*nodes)["largest_free_box"]["volume"], 2);
  web::EventHistory history;
  ASSERT_TRUE(history.catch_up(**reader));
  Result<nlohmann::json> one = web::job_json(**reader, history, *id, 13);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ((*one)["name"], "on postgres");
  EXPECT_EQ((*one)["history"].size(), 2u);
  nlohmann::json use = web::utilization_json(history, 4, 10, 13);
  EXPECT_EQ(use["samples"]["busy_nodes"].back(), 2);
  EXPECT_EQ(use["runs"].size(), 1u);
  // The session is read-only: a write through it is refused.
  EXPECT_FALSE((*reader)->add_job(job, 14));
}

}  // namespace
}  // namespace trellis
