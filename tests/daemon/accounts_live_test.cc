// Accounts on a live cluster, from where a site's users stand: sacctmgr's changes and listings
// against what Slurm 22.05 printed for the same commands (tests/golden/slurm/recorded-accounts/,
// recorded with slurmdbd: see its README), sshare's and sprio's layouts, submissions checked
// against the accounts (-A, the default account, MaxSubmitJobs), and fair-share ordering the
// queue: a second user's one job runs before the first user's hundred queued ones, usage decays,
// and both survive a controller killed with -9, on SQLite and on PostgreSQL. The second user is
// `nobody`, its commands run through setpriv.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "accounts_live_support.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::all_jobs;
using testing::ChildProcess;
using testing::eventually;
using testing::LiveCluster;
using testing::slurm_as;

namespace fs = std::filesystem;

std::string recorded(const std::string& name) {
  return test::read_text(fs::path(TRELLIS_SOURCE_DIR) / "tests/golden/slurm/recorded-accounts" /
                         name);
}

std::vector<std::string> lines_in(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The first `n` '|'-separated fields of each line.
std::vector<std::string> first_fields(const std::string& text, int n) {
  std::vector<std::string> out;
  for (const std::string& line : lines_in(text)) {
    std::string kept;
    size_t at = 0;
    for (int i = 0; i < n && at != std::string::npos; ++i) {
      size_t bar = line.find('|', at);
      kept += (i ? "|" : "") + line.substr(at, bar == std::string::npos ? bar : bar - at);
      at = bar == std::string::npos ? bar : bar + 1;
    }
    out.push_back(kept);
  }
  return out;
}

// Slurm's recorded scenario (files 02-08), then root's own association as Slurm creates it.
const std::vector<std::pair<std::string, std::string>> kRecordedChanges = {
    {"sacctmgr -i add account science Description=science Organization=sci",
     "02_add_account_science.txt"},
    {"sacctmgr -i add account physics Parent=science Fairshare=40", "03_add_account_physics.txt"},
    {"sacctmgr -i add account chem Parent=science Fairshare=60", "04_add_account_chem.txt"},
    {"sacctmgr -i add user alice Account=physics,chem DefaultAccount=chem",
     "05_add_user_alice.txt"},
    {"sacctmgr -i add user bob Account=physics Fairshare=2", "06_add_user_bob.txt"},
    {"sacctmgr -i modify account physics set GrpTRES=node=2 MaxSubmitJobs=10",
     "07_modify_account_physics_grptres_maxsubmit.txt"},
    {"sacctmgr -i modify user alice where account=physics set Fairshare=7",
     "08_modify_user_alice_physics_fairshare.txt"},
};

TEST(SacctmgrGoldenTest, ChangesAndListingsPrintAsSlurmDoesAndBadOnesChangeNothing) {
  LiveCluster cluster("--machine flat:4 --emulate");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  auto slurm = [&](const std::string& command) { return slurm_as(cluster, command, "", true); };
  for (const auto& [command, file] : kRecordedChanges) {
    CommandRun r = slurm(command);
    EXPECT_EQ(r.status, 0) << command << "\n" << r.output;
    EXPECT_EQ(r.output, recorded(file)) << command;
  }
  ASSERT_EQ(slurm("sacctmgr -i add user root Account=root AdminLevel=Administrator").status, 0);
  const std::vector<std::pair<std::string, std::string>> listings = {
      {"sacctmgr show account", "30a_account_default.txt"},
      {"sacctmgr -P show account", "30b_account_-P.txt"},
      {"sacctmgr -p show account", "30c_account_-p.txt"},
      {"sacctmgr -n -P show account", "30d_account_-n_-P.txt"},
      {"sacctmgr show user", "31a_user_default.txt"},
      {"sacctmgr -P show user", "31b_user_-P.txt"},
      {"sacctmgr -p show user", "31c_user_-p.txt"},
      {"sacctmgr -n -P show user", "31d_user_-n_-P.txt"},
      {"sacctmgr show assoc", "32a_assoc_default.txt"},
      {"sacctmgr -P show assoc", "32b_assoc_-P.txt"},
      {"sacctmgr -p show assoc", "32c_assoc_-p.txt"},
      {"sacctmgr -n -P show assoc", "32d_assoc_-n_-P.txt"},
      {"sacctmgr show assoc format=Account,User,Fairshare,GrpTRES,MaxSubmit tree",
       "33a_assoc_tree_default.txt"},
      {"sacctmgr -P show assoc format=Account,User,Fairshare,GrpTRES,MaxSubmit tree",
       "33b_assoc_tree_-P.txt"},
      {"sacctmgr -p show assoc format=Account,User,Fairshare,GrpTRES,MaxSubmit tree",
       "33c_assoc_tree_-p.txt"},
      {"sacctmgr -n -P show assoc format=Account,User,Fairshare,GrpTRES,MaxSubmit tree",
       "33d_assoc_tree_-n_-P.txt"},
      {"sacctmgr list qos", "34a_qos_default.txt"},
      {"sacctmgr -P list qos", "34b_qos_-P.txt"},
      {"sacctmgr -p list qos", "34c_qos_-p.txt"},
      {"sacctmgr -n -P list qos", "34d_qos_-n_-P.txt"},
  };
  for (const auto& [command, file] : listings) {
    CommandRun r = slurm(command);
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_EQ(r.output, recorded(file)) << command;
  }
  // `trellis account` takes the same words.
  EXPECT_EQ(cluster.trellis("account -P show account").output, recorded("30b_account_-P.txt"));

  // Hostile or mistaken changes: each an error naming what is wrong, exit 1, nothing changed.
  const std::string before = slurm("sacctmgr -P show assoc").output;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"sacctmgr -i add account physics", "account physics already exists"},
      {"sacctmgr -i add user carol Account=nosuch", "account nosuch does not exist"},
      {"sacctmgr -i add account bad Fairshare=-5", "Fairshare: '-5' is not a number of shares"},
      {"sacctmgr -i add account bad Fairshare=99999999999999999999", "is not a number of shares"},
      {"sacctmgr -i add account bad Fairshare=abc", "Fairshare: 'abc'"},
      {"sacctmgr -i modify account physics set GrpTRES=node=x", "GrpTRES: 'node=x'"},
      {"sacctmgr -i modify account physics set GrpTRES=warp=4", "unknown TRES 'warp'"},
      {"sacctmgr -i modify account physics set GrpTRES=node=4,,cpu=2", "an empty item"},
      {"sacctmgr -i delete account science", "account science has sub-account"},
      {"sacctmgr -i delete account nosuch", "account nosuch does not exist"},
      {"sacctmgr -i modify account science set Parent=physics", "its own ancestor"},
      {"sacctmgr -i add acount x", "unknown entity 'acount'"},
  };
  for (const auto& [command, says] : refused) {
    CommandRun r = slurm_as(cluster, command);
    EXPECT_NE(r.status, 0) << command;
    EXPECT_NE(r.output.find("sacctmgr: error: "), std::string::npos) << command << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << command << ": " << r.output;
  }
  EXPECT_EQ(slurm("sacctmgr -P show assoc").output, before);
  // Only an administrator changes accounts.
  CommandRun stranger = slurm_as(cluster, "sacctmgr -i add account mine", "nobody");
  EXPECT_EQ(stranger.status, 1);
  EXPECT_NE(stranger.output.find("user nobody may not change accounts"), std::string::npos)
      << stranger.output;
  EXPECT_EQ(slurm("sacctmgr -P show assoc").output, before);

  // sshare: its columns, and the shares of the recorded tree (NormShares depend on the shares
  // alone): Account|User|RawShares|NormShares as Slurm computed them.
  // (The scheduler reads the changed accounts at its next look: a quarter of a second.)
  const std::vector<std::string> recorded_shares = first_fields(recorded("55_sshare_-a_-P.txt"), 4);
  EXPECT_TRUE(eventually([&] {
    return first_fields(slurm("sshare -a -P").output, 4) == recorded_shares;
  })) << slurm("sshare -a -P").output;
  EXPECT_EQ(lines_in(slurm("sshare").output).at(0), lines_in(recorded("50_sshare.txt")).at(0));
  EXPECT_EQ(lines_in(slurm("sshare").output).at(1), lines_in(recorded("50_sshare.txt")).at(1));
  EXPECT_EQ(lines_in(slurm("sshare -l").output).at(0),
            lines_in(recorded("51_sshare_-l.txt")).at(0));
  // The rows sshare shows without -a: every account and the caller's own associations.
  std::vector<std::string> mine;
  for (const std::string& line : first_fields(slurm("sshare -P").output, 2)) mine.push_back(line);
  EXPECT_EQ(mine, first_fields(recorded("54_sshare_-P.txt"), 2));
  // sprio's headers and its weights line, byte for byte.
  EXPECT_EQ(lines_in(slurm("sprio").output).at(0), lines_in(recorded("56_sprio.txt")).at(0));
  EXPECT_EQ(lines_in(slurm("sprio -l").output).at(0), lines_in(recorded("57_sprio_-l.txt")).at(0));
  EXPECT_EQ(lines_in(slurm("sprio -n").output).at(0), lines_in(recorded("58_sprio_-n.txt")).at(0));
  EXPECT_EQ(slurm("sprio -w").output, recorded("59_sprio_-w.txt"));
}

TEST(AccountsLiveTest, SubmissionsAreChargedToAnAccountTheirUserBelongsTo) {
  LiveCluster cluster("--machine flat:4 --emulate");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  // No accounts yet: any job is accepted, charged to none.
  CommandRun free = slurm_as(cluster, "sbatch --parsable -o /dev/null --wrap true", "nobody");
  ASSERT_EQ(free.status, 0) << free.output;
  for (const std::string& change :
       {"add account physics", "add account chem", "add user root Account=physics",
        "add user nobody Account=chem,physics DefaultAccount=chem"})
    ASSERT_EQ(slurm_as(cluster, "sacctmgr -i " + change).status, 0) << change;
  CommandRun plain = slurm_as(cluster, "sbatch --parsable -o /dev/null --wrap true", "nobody");
  ASSERT_EQ(plain.status, 0) << plain.output;
  CommandRun chosen =
      slurm_as(cluster, "sbatch --parsable -A PHYSICS -o /dev/null --wrap true", "nobody");
  ASSERT_EQ(chosen.status, 0) << chosen.output;
  auto account_of = [&](const CommandRun& r) {
    return slurm_as(cluster, "squeue -h -t all -o %a -j " + r.output.substr(0, r.output.find('\n')))
        .output;
  };
  EXPECT_EQ(account_of(free), "(null)\n");
  EXPECT_EQ(account_of(plain), "chem\n");
  EXPECT_EQ(account_of(chosen), "physics\n");
  // Slurm's words first, then which account and why; exit 1; nothing queued.
  const std::string count_before = slurm_as(cluster, "squeue -h -t all -o %i").output;
  struct Refusal {
    std::string command, as, says;
  };
  for (const Refusal& r : std::vector<Refusal>{
           {"sbatch -A chem -o /dev/null --wrap true", "",
            "user root has no association with "
            "account chem"},
           {"sbatch -A nosuch -o /dev/null --wrap true", "nobody", "account nosuch does not exist"},
       }) {
    CommandRun run = slurm_as(cluster, r.command, r.as);
    EXPECT_EQ(run.status, 1) << r.command << ": " << run.output;
    EXPECT_NE(run.output.find("sbatch: error: Batch job submission failed: "), std::string::npos);
    EXPECT_NE(run.output.find("Invalid account or account/partition combination specified"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find(r.says), std::string::npos) << run.output;
  }
  EXPECT_NE(slurm_as(cluster, "sbatch -A 'b@d' -o /dev/null --wrap true", "nobody").status, 0);
  EXPECT_EQ(slurm_as(cluster, "squeue -h -t all -o %i").output, count_before);

  // MaxSubmitJobs: the next submission over it is refused with the limit's name.
  ASSERT_EQ(slurm_as(cluster,
                     "sacctmgr -i modify user nobody where account=chem set "
                     "MaxSubmitJobs=1")
                .status,
            0);
  CommandRun first =
      slurm_as(cluster, "sbatch --parsable -o /dev/null --wrap 'sleep 600'", "nobody");
  ASSERT_EQ(first.status, 0) << first.output;
  CommandRun second = slurm_as(cluster, "sbatch -o /dev/null --wrap 'sleep 600'", "nobody");
  EXPECT_EQ(second.status, 1) << second.output;
  EXPECT_NE(second.output.find("Job violates accounting/QOS policy (job submit limit, user's size "
                               "and/or time limits)"),
            std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("AssocMaxSubmitJobLimit"), std::string::npos) << second.output;
  // The other account has no such limit.
  EXPECT_EQ(slurm_as(cluster, "sbatch -A physics -o /dev/null --wrap true", "nobody").status, 0);
}

using FairShareLiveTest = testing::EnginesLiveTest;

// Usage of `account`'s user association, as sshare -a -P shows it (RawUsage).
double raw_usage(const LiveCluster& cluster, const std::string& account) {
  for (const std::string& line : lines_in(slurm_as(cluster, "sshare -a -P -n").output)) {
    std::vector<std::string> fields;
    std::stringstream parts(line);
    for (std::string f; std::getline(parts, f, '|');) fields.push_back(f);
    if (fields.size() >= 5 && !fields[1].empty() && fields[0].find(account) != std::string::npos)
      return std::stod(fields[4]);
  }
  return -1;
}

TEST_P(FairShareLiveTest, AnotherUsersJobRunsBeforeTheHundredOfAUserOverItsShare) {
  if (skipped()) return;
  // Usage halves every 3 seconds, so that decay shows within the test.
  LiveCluster cluster("--machine flat:4 --emulate --priority-half-life 3" + store_option_);
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  for (const std::string& change : {"add account alpha", "add account beta",
                                    "add user root Account=alpha", "add user nobody Account=beta"})
    ASSERT_EQ(slurm_as(cluster, "sacctmgr -i " + change).status, 0) << change;
  // User A (root): a hundred jobs of two seconds, four at a time on the four nodes.
  CommandRun hundred = slurm_as(cluster,
                                "sbatch --parsable --array=1-100 -o /dev/null "
                                "--wrap 'sleep 2'");
  ASSERT_EQ(hundred.status, 0) << hundred.output;
  ControllerClient client = cluster.client();
  auto jobs = [&] { return all_jobs(client); };
  auto running = [&](const v1::ListJobsReply& reply) {
    int n = 0;
    for (const v1::JobInfo& j : reply.jobs()) n += j.state() == v1::RUNNING;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return running(jobs()) == 4; }));
  // A has used its nodes for a while; its usage is seen (and charged to its association).
  ASSERT_TRUE(eventually([&] { return raw_usage(cluster, "alpha") > 0; }));

  // The controller is killed -9 and started again: usage and the queue come back from the store.
  std::unique_ptr<ChildProcess> restarted = kill_and_restart(cluster);
  ASSERT_TRUE(eventually([&] { return raw_usage(cluster, "alpha") > 0; }))
      << slurm_as(cluster, "sshare -a").output;

  // User B (nobody): one job.
  CommandRun one = slurm_as(cluster, "sbatch --parsable -o /dev/null --wrap 'sleep 2'", "nobody");
  ASSERT_EQ(one.status, 0) << one.output;
  const int64_t b = std::stoll(one.output);
  v1::JobInfo b_job;
  ASSERT_TRUE(eventually(
      [&] {
        const v1::ListJobsReply listed = jobs();
        for (const v1::JobInfo& j : listed.jobs())
          if (j.id() == b && j.start_time() > 0) return b_job = j, true;
        return false;
      },
      std::chrono::seconds(60)));
  // No job of A that was waiting when B was submitted started before B.
  int started_before = 0, still_waiting = 0;
  const v1::ListJobsReply all = jobs();
  for (const v1::JobInfo& j : all.jobs()) {
    if (j.user() != "root") continue;
    if (j.start_time() == 0) ++still_waiting;
    if (j.start_time() > b_job.submit_time() && j.start_time() < b_job.start_time())
      ++started_before;
  }
  EXPECT_EQ(started_before, 0);
  EXPECT_GT(still_waiting, 50);  // in arrival order B would have waited for them all
  // Usage decays once A stops running: half-life 3 s.
  ASSERT_EQ(
      slurm_as(cluster, "scancel " + hundred.output.substr(0, hundred.output.find('\n'))).status,
      0);
  ASSERT_TRUE(eventually([&] { return running(jobs()) == 0; }, std::chrono::seconds(60)));
  const double then = raw_usage(cluster, "alpha");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double later = raw_usage(cluster, "alpha");
  EXPECT_GT(then, 0);
  EXPECT_LT(later, then);
  EXPECT_GT(later, 0);
}

// The jobs of `user` as (start, end, nodes), from their own timestamps.
struct Ran {
  double start, end;
  int nodes;
};
std::vector<Ran> ran_by(const v1::ListJobsReply& reply, const std::string& user) {
  std::vector<Ran> out;
  for (const v1::JobInfo& j : reply.jobs())
    if (j.user() == user && j.start_time() > 0)
      out.push_back(
          {j.start_time(), j.end_time() > 0 ? j.end_time() : 1e300, std::max(1, j.spec().nodes())});
  return out;
}
// The most nodes held at once (a start at the instant of another's end does not overlap it).
int most_held(std::vector<Ran> ran) {
  std::vector<std::pair<double, int>> edges;
  for (const Ran& r : ran) edges.push_back({r.start, r.nodes}), edges.push_back({r.end, -r.nodes});
  std::sort(edges.begin(), edges.end());  // ends (negative) before starts at one instant
  int held = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, held += delta);
  return most;
}

TEST_P(FairShareLiveTest, AnAccountWithGrpTresNode4NeverRunsMoreThan4Nodes) {
  if (skipped()) return;
  LiveCluster cluster("--machine flat:8 --emulate" + store_option_);
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  for (const std::string& change : {"add account alpha GrpTRES=node=4", "add account beta",
                                    "add user root Account=alpha", "add user nobody Account=beta"})
    ASSERT_EQ(slurm_as(cluster, "sacctmgr -i " + change).status, 0) << change;
  // Twelve jobs of 2 nodes for alpha: at most two at once; beta's jobs use the other nodes.
  CommandRun alpha = slurm_as(cluster,
                              "sbatch --parsable --array=1-12 -N 2 -o /dev/null "
                              "--wrap 'sleep 2'");
  ASSERT_EQ(alpha.status, 0) << alpha.output;
  CommandRun beta = slurm_as(
      cluster, "sbatch --parsable --array=1-4 -N 1 -o /dev/null --wrap 'sleep 2'", "nobody");
  ASSERT_EQ(beta.status, 0) << beta.output;
  // alpha's waiting jobs say why, in squeue's reason and in show job's words.
  ASSERT_TRUE(eventually([&] {
    return slurm_as(cluster, "squeue -h -u root -t PD -o %R").output.find("(AssocGrpNodeLimit)") !=
           std::string::npos;
  })) << slurm_as(cluster, "squeue").output;
  ControllerClient client = cluster.client();
  bool explained = false;
  const v1::ListJobsReply listed = all_jobs(client);
  for (const v1::JobInfo& j : listed.jobs())
    explained = explained || j.reason().find(
                                 "AssocGrpNodeLimit (account alpha holds 4 of its 4 "
                                 "nodes, GrpTRES=node=4; the job asks for 2)") == 0;
  EXPECT_TRUE(explained);
  // Killed -9 in the middle: the restarted controller counts what runs before it starts more.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::unique_ptr<ChildProcess> restarted = kill_and_restart(cluster);
  auto active = [&] {
    int n = 0;
    const v1::ListJobsReply now = all_jobs(client);
    for (const v1::JobInfo& j : now.jobs())
      n += j.state() == v1::PENDING || j.state() == v1::RUNNING || j.state() == v1::COMPLETING;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return active() == 0; }, std::chrono::seconds(120)));
  const v1::ListJobsReply done = all_jobs(client);
  EXPECT_EQ(ran_by(done, "root").size(), 12u);
  EXPECT_LE(most_held(ran_by(done, "root")), 4);
  EXPECT_EQ(most_held(ran_by(done, "root")), 4);  // the limit, not less
  // beta was not held back by alpha's limit: its four jobs ran beside alpha's first two.
  double beta_last_start = 0;
  for (const Ran& r : ran_by(done, "nobody")) beta_last_start = std::max(beta_last_start, r.start);
  double alpha_last_start = 0;
  for (const Ran& r : ran_by(done, "root")) alpha_last_start = std::max(alpha_last_start, r.start);
  EXPECT_LT(beta_last_start, alpha_last_start);
}

INSTANTIATE_TEST_SUITE_P(Engines, FairShareLiveTest,
                         ::testing::Values(test::Engine::kSqlite, test::Engine::kPostgres),
                         test::engine_name);

}  // namespace
}  // namespace trellis
