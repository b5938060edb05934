// The dashboard end to end: a real local cluster (munged, trellisd, an agent), real jobs,
// `trellis web` as its own process, and the page driven in headless Chromium through
// chromedriver. What the page shows is checked against what the CLI says of the same jobs.
//
// Set TRELLIS_SCREENSHOTS=DIR (`make screenshots` does) to keep the screenshots of the three
// views on a 3-D torus and a fat tree in DIR.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "../build_paths.h"
#include "../daemon/live_cluster.h"
#include "core/hostlist.h"
#include "webdriver.h"

namespace trellis {
namespace {

using testing::ChildProcess;
using testing::eventually;
using testing::LiveCluster;
using testing::TempDir;
using testing::WebDriver;

// `trellis web` on a free port of the cluster's store; port() is 0 until it said where it is.
class WebServer {
 public:
  WebServer(const LiveCluster& cluster, const std::string& log)
      : process_({TRELLIS_BINARY, "web", "--conf", cluster.dir() / "trellis.toml", "--listen",
                  "127.0.0.1:0"},
                 log) {
    // "trellis web: http://127.0.0.1:PORT/ ..." once it listens.
    const std::string address = "http://127.0.0.1:";
    eventually([&] {
      std::string text = testing::read_file(log);
      size_t at = text.find(address);
      if (at == std::string::npos) return false;
      port_ = std::atoi(text.c_str() + at + address.size());
      return port_ > 0;
    });
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int stop() { return process_.stop(SIGTERM); }

 private:
  ChildProcess process_;
  int port_ = 0;
};

// The nodes the CLI says a job holds (ids parsed from its hostlist "n[0-3,16]").
std::vector<int> nodes_of(const LiveCluster& cluster, int64_t job) {
  Result<NodeSet> set = parse_hostlist(cluster.job(job)["nodelist"].get<std::string>(), 64);
  std::vector<int> ids;
  if (!set) return ids;
  for (int id = 0; id < 64; ++id)
    if (set->test(id)) ids.push_back(id);
  return ids;
}

std::string js_array(const std::vector<int>& ids) {
  std::string out = "[";
  for (int id : ids) {
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  return out + "]";
}

TEST(DashboardBrowserTest, MapQueueAndJobFollowTheClusterWithoutAReload) {
  if (!testing::have_chromedriver()) GTEST_SKIP() << "chromium and chromedriver are not installed";
  LiveCluster cluster("--machine torus:4x4x4");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  const std::string hostile = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>";
  int64_t running = cluster.submit("-N 8 -J '" + hostile + "' -D /tmp -- sleep 300");
  ASSERT_GT(running, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(running) == "R"; }));
  int64_t waiting = cluster.submit("-N 64 -J waits -D /tmp -- sleep 1");
  ASSERT_GT(waiting, 0);
  ASSERT_TRUE(
      eventually([&] { return !cluster.job(waiting)["reason"].get<std::string>().empty(); }));
  const std::string reason = cluster.job(waiting)["reason"].get<std::string>();
  const std::vector<int> held = nodes_of(cluster, running);
  ASSERT_EQ(held.size(), 8u);

  WebServer web(cluster, cluster.dir() / "web.log");
  ASSERT_GT(web.port(), 0) << testing::read_file(cluster.dir() / "web.log");
  WebDriver browser(cluster.dir() / "browser");
  ASSERT_TRUE(browser.ok()) << browser.error();
  browser.go(web.url("/#machine"));
  ASSERT_TRUE(browser.wait_for("return Number(document.body.dataset.refreshes) >= 1;"))
      << browser.run("return document.body.dataset.error;");
  browser.run("window.notReloaded = true; return 0;");

  // The map: exactly the job's nodes carry it, in the colour its legend entry shows.
  const std::string job_id = std::to_string(running);
  nlohmann::json map = browser.run(
      "const cells = [...document.querySelectorAll('#map .cell')];"
      "const swatch = document.querySelector('#legend [data-job=\"" +
      job_id +
      "\"] .swatch');"
      "return {cells: cells.length,"
      " held: cells.filter(c => c.dataset.job === '" +
      job_id +
      "').map(c => Number(c.dataset.node)),"
      " colours: [...new Set(cells.filter(c => c.dataset.job === '" +
      job_id +
      "')"
      "   .map(c => getComputedStyle(c).backgroundColor))],"
      " legend: swatch ? getComputedStyle(swatch).backgroundColor : '',"
      " idle: getComputedStyle(cells.find(c => !c.dataset.job)).backgroundColor};");
  ASSERT_TRUE(map.is_object()) << map.dump();
  EXPECT_EQ(map["cells"], 64);
  std::vector<int> shown = map["held"].get<std::vector<int>>();
  EXPECT_EQ(shown, held);
  ASSERT_EQ(map["colours"].size(), 1u) << map.dump();
  EXPECT_EQ(map["colours"][0], map["legend"]);
  EXPECT_NE(map["colours"][0], map["idle"]);

  // The queue: the pending job with the reason the CLI gives; the hostile name as text.
  ASSERT_TRUE(browser.click("#nav-queue"));
  ASSERT_TRUE(browser.wait_for("return !!document.querySelector('#queue-table tr[data-job=\"" +
                               std::to_string(waiting) + "\"]');"));
  nlohmann::json queue = browser.run(
      "const row = id => document.querySelector('#queue-table tr[data-job=\"' + id + '\"]');"
      "const w = row(" +
      std::to_string(waiting) + "), r = row(" + job_id +
      ");"
      "return {state: w.dataset.state, reason: w.querySelector('.reason').textContent,"
      " name: r.children[1].textContent, scripts: document.querySelectorAll('#queue-table script,"
      " #queue-table img, #legend img, #legend script').length, pwned: window.pwned || 0};");
  ASSERT_TRUE(queue.is_object()) << queue.dump();
  EXPECT_EQ(queue["state"], "PD");
  EXPECT_EQ(queue["reason"], reason);
  EXPECT_EQ(queue["name"], hostile);
  EXPECT_EQ(queue["scripts"], 0);
  EXPECT_EQ(queue["pwned"], 0);

  // Clicking the running job highlights its nodes, and only those, and shows its panel.
  ASSERT_TRUE(browser.click("#queue-table tr[data-job=\"" + job_id + "\"]"));
  ASSERT_TRUE(browser.wait_for("return location.hash === '#job=" + job_id +
                               "' && !document.getElementById('job-panel').hidden;"));
  ASSERT_TRUE(
      browser.wait_for("return JSON.stringify([...document.querySelectorAll('#map .cell.selected')]"
                       ".map(c => Number(c.dataset.node))) === '" +
                       js_array(held) + "';"))
      << browser.run("return [...document.querySelectorAll('#map .cell.selected')].length;");
  EXPECT_EQ(browser.run("return document.getElementById('job-title').textContent;"),
            "Job " + job_id + ": " + hostile);

  // The pending job is cancelled, then the running one: the map clears with no reload.
  ASSERT_EQ(cluster.trellis("cancel " + std::to_string(waiting)).status, 0);
  ASSERT_EQ(cluster.trellis("cancel " + job_id).status, 0);
  ASSERT_TRUE(eventually([&] { return cluster.state(running) == "CA"; }));
  EXPECT_TRUE(browser.wait_for(
      "return [...document.querySelectorAll('#map .cell')].every(c => c.dataset.state === "
      "'idle' && !c.dataset.job) && document.querySelector('#counts').textContent.includes('64 "
      "idle');"))
      << browser.run("return document.getElementById('counts').textContent;");
  EXPECT_EQ(browser.run("return window.notReloaded === true;"), true);
  nlohmann::json panel = browser.run("return document.getElementById('job-fields').textContent;");
  EXPECT_NE(panel.dump().find("CANCELLED"), std::string::npos) << panel.dump();

  // With the controller stopped, the API answers and the page keeps refreshing.
  ASSERT_EQ(::kill(cluster.pid_of("trellisd"), SIGKILL), 0);
  httplib::Client api("127.0.0.1", web.port());
  auto nodes = api.Get("/api/nodes");
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->status, 200);
  nlohmann::json body = nlohmann::json::parse(nodes->body, nullptr, false);
  EXPECT_EQ(body["counts"]["idle"], 64) << nodes->body;
  auto job = api.Get("/api/jobs/" + job_id);
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(job->body)["state"], "CA");
  int before = std::stoi(browser.run("return document.body.dataset.refreshes;").get<std::string>());
  EXPECT_TRUE(browser.wait_for("return Number(document.body.dataset.refreshes) >= " +
                               std::to_string(before + 2) + " && !document.body.dataset.error;"));
  EXPECT_EQ(web.stop() & 0x7f, 0) << "trellis web should exit on SIGTERM, not die of it";
}

// The three views on a 3-D torus and on a fat tree, with jobs running and waiting: each draws
// (charts on the history view), and the screenshots are kept where TRELLIS_SCREENSHOTS says.
TEST(DashboardBrowserTest, ScreenshotsOfTheThreeViews) {
  if (!testing::have_chromedriver()) GTEST_SKIP() << "chromium and chromedriver are not installed";
  const char* keep = std::getenv("TRELLIS_SCREENSHOTS");
  for (const std::string machine : {"torus:4x4x4", "fattree:4,4,4"}) {
    SCOPED_TRACE(machine);
    LiveCluster cluster("--machine " + machine);
    ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
    for (const char* job : {"-N 4 -J short -D /tmp -- sleep 1", "-N 2 -J tiny -D /tmp -- sleep 1"})
      ASSERT_GT(cluster.submit(job), 0);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    bool torus = machine.rfind("torus", 0) == 0;
    const std::vector<std::string> jobs = {torus ? "--shape 4x2x2 -J solver -D /tmp -- sleep 300"
                                                 : "-N 16 -J solver -D /tmp -- sleep 300",
                                           "-N 12 -J analysis -D /tmp -- sleep 300",
                                           "-N 6 -J post -D /tmp -- sleep 300",
                                           "-N 64 -J full-machine -D /tmp -- sleep 10"};
    for (const std::string& job : jobs) ASSERT_GT(cluster.submit(job), 0);
    ASSERT_TRUE(eventually(
        [&] { return cluster.trellis("queue -t R").output.find("post") != std::string::npos; }));
    WebServer web(cluster, cluster.dir() / "web.log");
    ASSERT_GT(web.port(), 0);
    WebDriver browser(cluster.dir() / "browser", 1280, 800);
    ASSERT_TRUE(browser.ok()) << browser.error();
    std::string stem = machine.substr(0, machine.find(':'));
    for (const std::string view : {"machine", "queue", "history"}) {
      browser.go(web.url("/#" + view));
      ASSERT_TRUE(browser.wait_for("return Number(document.body.dataset.refreshes) >= 1;"));
      if (view == "history") {
        browser.run(
            "const s = document.getElementById('history-window'); s.value = 'all';"
            "s.dispatchEvent(new Event('change')); return 0;");
        EXPECT_TRUE(
            browser.wait_for("return Number(document.body.dataset.historyRuns) >= 5 &&"
                             " document.querySelectorAll('.chart canvas').length >= 2;"));
      } else if (view == "machine") {
        EXPECT_TRUE(browser.wait_for(
            "return document.querySelectorAll('#legend [data-job]').length == 3;"));
      } else {
        EXPECT_TRUE(browser.wait_for(
            "return document.querySelectorAll('#queue-table tbody tr').length == 4;"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::string png = browser.screenshot();
      ASSERT_GT(png.size(), 1000u);
      EXPECT_EQ(png.substr(1, 3), "PNG");
      if (keep && *keep) {
        std::filesystem::create_directories(keep);
        std::ofstream(std::string(keep) + "/dashboard-" + stem + "-" + view + ".png",
                      std::ios::binary)
            << png;
      }
    }
    browser.run("return 0;");
    EXPECT_EQ(browser.run("return document.body.dataset.error;"), "");
  }
}

}  // namespace
}  // namespace trellis
