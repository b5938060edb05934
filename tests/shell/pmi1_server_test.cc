// The PMI-1 wire parser and server of the job shell (shell/pmi1_wire.h, shell/pmi1_server.h):
// MPICH 4.0's own sequence of messages across a barrier with another node, the limits get_maxes
// announces, malformed lines, abort, and the parser's corners.
#include "shell/pmi1_server.h"

#include <gtest/gtest.h>

#include "shell/kv_records.h"
#include "shell/pmi1_wire.h"

namespace trellis {
namespace {

TEST(Pmi1WireTest, ValuesRunToTheEndOfTheLine) {
  Result<Pmi1Request> r = parse_pmi1_line("cmd=put kvsname=7.0 key=k value=a b=c  d");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->cmd, "put");
  EXPECT_EQ(*r->field("kvsname"), "7.0");
  EXPECT_EQ(*r->field("value"), "a b=c  d");
  Result<Pmi1Request> spawn = parse_pmi1_line("mcmd=spawn");
  ASSERT_TRUE(spawn);
  EXPECT_TRUE(spawn->mcmd);
  EXPECT_EQ(pmi1_reply("put_result", {{"rc", "0"}}), "cmd=put_result rc=0\n");
}

TEST(Pmi1WireTest, MalformedLinesSayWhere) {
  for (const char* bad :
       {"", "init", "key=1 cmd=init", "cmd=", "cmd=put x", "cmd=put =v", "cmd=put\x01key=1"}) {
    Result<Pmi1Request> r = parse_pmi1_line(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("PMI line"), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(parse_pmi1_line("cmd=put value=" + std::string(kPmi1MaxLine, 'x')));
}

TEST(Pmi1WireTest, KeyValueRecordsConcatenate) {
  std::string a = encode_kv_records({{"k1", "v1"}, {"", ""}});
  std::string b = encode_kv_records({{"k2", std::string("v\0 2", 4)}});
  Result<std::vector<KeyValue>> all = decode_kv_records(a + b);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].second, std::string("v\0 2", 4));
  EXPECT_FALSE(decode_kv_records(a.substr(0, a.size() - 1)));
}

class Pmi1ServerTest : public ::testing::Test {
 protected:
  Pmi1ServerTest() : server_(options()) {}
  static Pmi1Server::Options options() {
    Pmi1Server::Options o;
    o.size = 4;
    o.kvsname = "12.0";
    o.ranks = {2, 3};  // this node runs ranks 2 and 3 of 4
    o.node = "n1";
    o.preput = {{"PMI_process_mapping", "(vector,(0,2,2))"}};
    return o;
  }
  // Sends `line` from client `c`; the replies it got.
  std::vector<std::string> send(int c, const std::string& line) {
    effects_ = {};
    server_.receive(c, line + "\n", effects_);
    std::vector<std::string> out;
    for (const auto& [client, reply] : effects_.replies) {
      EXPECT_EQ(client, c);
      out.push_back(reply);
    }
    return out;
  }
  Pmi1Server server_;
  Pmi1Server::Effects effects_;
};

TEST_F(Pmi1ServerTest, MpichSequenceAcrossABarrier) {
  for (int c : {0, 1}) {
    EXPECT_EQ(
        send(c, "cmd=init pmi_version=1 pmi_subversion=1"),
        (std::vector<std::string>{"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n"}));
    EXPECT_EQ(send(c, "cmd=get_maxes"),
              (std::vector<std::string>{
                  "cmd=maxes rc=0 kvsname_max=64 keylen_max=64 vallen_max=1024\n"}));
    EXPECT_EQ(send(c, "cmd=get_appnum"), (std::vector<std::string>{"cmd=appnum rc=0 appnum=0\n"}));
    EXPECT_EQ(send(c, "cmd=get_my_kvsname"),
              (std::vector<std::string>{"cmd=my_kvsname rc=0 kvsname=12.0\n"}));
    EXPECT_EQ(
        send(c, "cmd=get kvsname=12.0 key=PMI_process_mapping"),
        (std::vector<std::string>{"cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n"}));
    EXPECT_EQ(send(c, "cmd=put kvsname=12.0 key=addr-" + std::to_string(c + 2) +
                          " value=x y=" + std::to_string(c)),
              (std::vector<std::string>{"cmd=put_result rc=0\n"}));
  }
  EXPECT_TRUE(send(0, "cmd=barrier_in").empty());
  EXPECT_FALSE(effects_.exchange);  // rank 3 is not in yet
  EXPECT_TRUE(send(1, "cmd=barrier_in").empty());
  ASSERT_TRUE(effects_.exchange);
  std::string mine = server_.take_contribution();
  Result<std::vector<KeyValue>> pairs = decode_kv_records(mine);
  ASSERT_TRUE(pairs);
  EXPECT_EQ(*pairs, (std::vector<KeyValue>{{"addr-2", "x y=0"}, {"addr-3", "x y=1"}}));
  // The other node's puts come back with ours; both ranks leave the barrier.
  effects_ = {};
  server_.exchanged(encode_kv_records({{"addr-0", "a"}, {"addr-1", "b"}}) + mine, effects_);
  ASSERT_EQ(effects_.replies.size(), 2u);
  EXPECT_EQ(effects_.replies[0].second, "cmd=barrier_out rc=0\n");
  EXPECT_EQ(server_.barriers(), 1);
  EXPECT_EQ(send(0, "cmd=get kvsname=12.0 key=addr-1"),
            (std::vector<std::string>{"cmd=get_result rc=0 msg=success value=b\n"}));
  std::vector<std::string> missing = send(1, "cmd=get kvsname=12.0 key=nope");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].rfind("cmd=get_result rc=-1", 0), 0u);
  EXPECT_TRUE(server_.initialized_not_finalized(0));
  EXPECT_EQ(send(0, "cmd=finalize"), (std::vector<std::string>{"cmd=finalize_ack rc=0\n"}));
  EXPECT_FALSE(server_.initialized_not_finalized(0));
  EXPECT_FALSE(effects_.failure);
}

TEST_F(Pmi1ServerTest, LinesSplitAcrossReadsAndSeveralInOneRead) {
  effects_ = {};
  server_.receive(0, "cmd=init pmi_vers", effects_);
  EXPECT_TRUE(effects_.replies.empty());
  server_.receive(0, "ion=1 pmi_subversion=1\ncmd=get_appnum\ncmd=get_univ", effects_);
  ASSERT_EQ(effects_.replies.size(), 2u);
  server_.receive(0, "erse_size\n", effects_);
  ASSERT_EQ(effects_.replies.size(), 3u);
  EXPECT_EQ(effects_.replies[2].second, "cmd=universe_size rc=0 size=4\n");
}

TEST_F(Pmi1ServerTest, TheAnnouncedLimitsAreEnforced) {
  std::vector<std::string> r =
      send(0, "cmd=put kvsname=12.0 key=" + std::string(65, 'k') + " value=v");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("rc=-1"), std::string::npos);
  EXPECT_NE(r[0].find("keylen_max_is_64"), std::string::npos);
  r = send(0, "cmd=put kvsname=other key=k value=v");
  EXPECT_NE(r[0].find("rc=-1"), std::string::npos);
  EXPECT_FALSE(effects_.failure);  // a refused put is the client's to handle
}

TEST_F(Pmi1ServerTest, VersionTwoIsRefusedAndSpawnIsNotSupported) {
  std::vector<std::string> r = send(0, "cmd=init pmi_version=2 pmi_subversion=0");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].rfind("cmd=response_to_init rc=-1", 0), 0u);
  effects_ = {};
  server_.receive(1, "mcmd=spawn\nnprocs=2\nexecname=x\nendcmd\n", effects_);
  ASSERT_EQ(effects_.replies.size(), 1u);
  EXPECT_EQ(effects_.replies[0].second.rfind("cmd=spawn_result rc=-1", 0), 0u);
  r = send(1, "cmd=lookup_name service=s");
  EXPECT_EQ(r[0].rfind("cmd=lookup_name_result rc=-1", 0), 0u);
}

TEST_F(Pmi1ServerTest, AMalformedLineEndsTheStep) {
  std::vector<std::string> r = send(1, "cmd=frobnicate");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].rfind("cmd=error rc=-1", 0), 0u);
  ASSERT_TRUE(effects_.failure);
  EXPECT_EQ(effects_.failure->client, 1);
  EXPECT_NE(effects_.failure->reason.find("rank 3 on n1 sent a malformed PMI line"),
            std::string::npos);
  EXPECT_TRUE(send(1, "cmd=get_appnum").empty());  // nothing more is read from it
}

TEST_F(Pmi1ServerTest, AnOverlongLineEndsTheStep) {
  effects_ = {};
  server_.receive(0, "cmd=put " + std::string(2000, 'x'), effects_);
  ASSERT_TRUE(effects_.failure);
  EXPECT_NE(effects_.failure->reason.find("longer than"), std::string::npos);
}

TEST_F(Pmi1ServerTest, AbortCarriesItsExitCodeAndMessage) {
  send(0, "cmd=init pmi_version=1 pmi_subversion=1");
  std::vector<std::string> r = send(0, "cmd=abort exitcode=3");
  EXPECT_TRUE(r.empty());
  ASSERT_TRUE(effects_.failure);
  EXPECT_EQ(effects_.failure->exit_code, 3);
  EXPECT_EQ(effects_.failure->reason, "rank 2 on n1 called PMI abort (exit code 3)");
}

TEST_F(Pmi1ServerTest, AFailedExchangeFailsTheStep) {
  send(0, "cmd=barrier_in");
  send(1, "cmd=barrier_in");
  ASSERT_TRUE(effects_.exchange);
  effects_ = {};
  server_.exchange_failed("the parent agent went away", effects_);
  ASSERT_TRUE(effects_.failure);
  EXPECT_NE(effects_.failure->reason.find("the parent agent went away"), std::string::npos);
}

}  // namespace
}  // namespace trellis
