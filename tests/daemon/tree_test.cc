// The control tree (src/daemon/tree/): its shape, its frames, its authentication (a private
// munged), and trees of in-process nodes on real loopback connections: every agent reached once,
// replies folded, a dead interior agent routed around, and hostile or malformed messages refused
// with the reason while the nodes keep serving.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "daemon/auth.h"
#include "daemon/munge_daemon.h"
#include "daemon/pmi_tree_link.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_node.h"
#include "daemon/tree/tree_reply.h"
#include "daemon/tree/tree_sender.h"
#include "daemon/tree/tree_shape.h"
#include "daemon/tree/tree_wire.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::eventually;

// --- The shape --------------------------------------------------------------------------------

TEST(TreeShapeTest, EveryAgentFindsTheParentAndChildrenTheRootsWalkGivesIt) {
  for (int n : {1, 2, 3, 7, 16, 17, 64, 65, 130}) {
    std::vector<std::string> agents;
    for (int i = 0; i < n; ++i) agents.push_back("a" + std::to_string(i));
    for (int fanout : {1, 2, 3, 16, 64}) {
      // The walk from the root, as the messages go.
      std::map<std::string, std::pair<std::string, int>> parent_depth = {{agents[0], {"", 0}}};
      std::map<std::string, std::vector<std::string>> children_of;
      std::vector<std::pair<std::string, std::vector<std::string>>> todo = {
          {agents[0], {agents.begin() + 1, agents.end()}}};
      int deepest = 0;
      while (!todo.empty()) {
        auto [agent, subtree] = todo.back();
        todo.pop_back();
        for (const TreeChild& child : tree_children(subtree, fanout)) {
          children_of[agent].push_back(child.agent);
          parent_depth[child.agent] = {agent, parent_depth[agent].second + 1};
          deepest = std::max(deepest, parent_depth[child.agent].second);
          todo.push_back({child.agent, child.subtree});
        }
      }
      ASSERT_EQ(static_cast<int>(parent_depth.size()), n);
      EXPECT_EQ(tree_levels(agents.size(), fanout), deepest + 1) << n << " " << fanout;
      for (const std::string& agent : agents) {
        std::optional<TreePosition> me = tree_position(agents, fanout, agent);
        ASSERT_TRUE(me) << agent;
        EXPECT_EQ(me->parent, parent_depth[agent].first) << agent;
        EXPECT_EQ(me->depth, parent_depth[agent].second) << agent;
        std::vector<std::string> children;
        for (const TreeChild& c : me->children) children.push_back(c.agent);
        EXPECT_EQ(children, children_of[agent]) << agent;
      }
    }
  }
  EXPECT_FALSE(tree_position({"a", "b"}, 2, "c"));
}

// --- The frames -------------------------------------------------------------------------------

TEST(TreeWireTest, FramesComeOffWholeInOrderAndBadOnesEndTheConnection) {
  std::string buffer = encode_frame(FrameKind::kRequest, 7, "hello") +
                       encode_frame(FrameKind::kRefusal, 8, encode_refusal(16, "no"));
  std::string half = buffer.substr(0, 10);
  Result<std::optional<Frame>> none = take_frame(half);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);  // not whole yet
  Result<std::optional<Frame>> first = take_frame(buffer);
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->kind, FrameKind::kRequest);
  EXPECT_EQ((*first)->id, 7u);
  EXPECT_EQ((*first)->payload, "hello");
  Result<std::optional<Frame>> second = take_frame(buffer);
  ASSERT_TRUE(second && *second);
  Result<Refusal> refusal = decode_refusal((*second)->payload);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->code, 16);
  EXPECT_EQ(refusal->message, "no");
  EXPECT_TRUE(buffer.empty());
  // Too long, too short, an unknown kind: errors, not waits for more bytes.
  std::string huge = encode_frame(FrameKind::kAnswer, 1, "");
  huge[3] = '\x7f';
  EXPECT_FALSE(take_frame(huge));
  std::string tiny("\x02\x00\x00\x00\x01\x00", 6);
  EXPECT_FALSE(take_frame(tiny));
  std::string odd = encode_frame(FrameKind::kAnswer, 1, "x");
  odd[4] = 9;
  EXPECT_FALSE(take_frame(odd));
  EXPECT_FALSE(decode_refusal("ab"));
}

// --- Authentication and trees of nodes --------------------------------------------------------

class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<MungeDaemon> started = MungeDaemon::start(dir_ / "munge");
    ASSERT_TRUE(started) << started.error().message;
    munge_ = std::make_unique<MungeDaemon>(std::move(*started));
    credentials_ = std::make_unique<CredentialSource>(munge_->socket());
    authenticator_ = std::make_unique<Authenticator>(munge_->socket());
    signer_ = std::make_unique<TreeSigner>(*credentials_, uid_);
    sender_ = std::make_unique<TreeSender>(*signer_, client_, "tree test");
  }

  // One agent of the tree, in this process: a channel listening on loopback and a node whose part
  // counts the messages it did and answers with agents = 1 and `processes` = its number.
  struct Node {
    std::unique_ptr<TreeVerifier> verifier;
    std::unique_ptr<TreeChannel> channel;
    std::unique_ptr<TreeNode> node;
    std::string address;
    std::atomic<int> parts{0};
    std::atomic<int> stall_ms{0};  // its part takes this long (a stopped agent: no answer)
    // The channel goes first: its destructor waits for the workers still in `node`'s part (a
    // stalled one outlives its test), which would otherwise run on a destroyed node.
    ~Node() { channel.reset(); }
  };
  Node& add_node() {
    nodes_.push_back(std::make_unique<Node>());
    Node& n = *nodes_.back();
    const int number = static_cast<int>(nodes_.size());
    n.verifier = std::make_unique<TreeVerifier>(*authenticator_, uid_);
    n.channel = std::make_unique<TreeChannel>();
    std::atomic<TreeNode*>* ready = new std::atomic<TreeNode*>(nullptr);
    ready_.emplace_back(ready);
    // As an agent listens: a node answers once its part and its children's answers are in.
    Result<int> port = n.channel->listen_async(
        "127.0.0.1", 0,
        [ready](const v1::TreeMessage& message, const std::string& raw,
                TreeChannel::Respond respond) {
          TreeNode* node = ready->load();
          if (node == nullptr)
            return respond(grpc::Status(grpc::StatusCode::UNAVAILABLE, "starting"), {});
          node->handle(message, raw, std::move(respond));
        });
    EXPECT_TRUE(port) << port.error().message;
    n.address = "127.0.0.1:" + std::to_string(*port);
    n.node = std::make_unique<TreeNode>(
        n.address, *n.verifier, *n.channel, [&n, number](const v1::TreeBody&) {
          ++n.parts;
          std::this_thread::sleep_for(std::chrono::milliseconds(n.stall_ms.load()));
          v1::TreeReply reply;
          reply.set_agents(1);
          reply.set_processes(number);
          return reply;
        });
    ready->store(n.node.get());
    return n;
  }
  std::vector<std::string> addresses() const {
    std::vector<std::string> out;
    for (const auto& n : nodes_) out.push_back(n->address);
    return out;
  }
  v1::TreeBody ping() const {
    v1::TreeBody body;
    body.mutable_ping();
    return body;
  }
  // A message signed now, for `agents`, as a sender would send it.
  v1::TreeMessage signed_message(const std::vector<std::string>& agents) {
    v1::TreeBody body = ping();
    for (const std::string& a : agents) body.add_agents(a);
    body.set_fanout(2);
    body.set_deadline_seconds(5);
    v1::TreeMessage message;
    message.set_body(body.SerializeAsString());
    Result<v1::TreeAuth> auth = signer_->sign(message.body());
    EXPECT_TRUE(auth) << auth.error().message;
    if (auth) *message.mutable_auth() = *auth;
    return message;
  }
  // Sends `message` to one node directly; its status and answer.
  std::pair<grpc::Status, v1::TreeAnswer> call(const std::string& agent,
                                               const v1::TreeMessage& message) {
    std::promise<std::pair<grpc::Status, v1::TreeAnswer>> done;
    client_.send(agent, message, std::chrono::system_clock::now() + std::chrono::seconds(10),
                 [&](const grpc::Status& s, const v1::TreeAnswer& a) {
                   done.set_value({s, a});
                 });
    return done.get_future().get();
  }

  testing::TempDir dir_;
  const int uid_ = static_cast<int>(::geteuid());
  std::unique_ptr<MungeDaemon> munge_;
  std::unique_ptr<CredentialSource> credentials_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<TreeSigner> signer_;
  TreeChannel client_;
  std::unique_ptr<TreeSender> sender_;
  std::vector<std::unique_ptr<std::atomic<TreeNode*>>> ready_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(TreeTest, ASignedMessageIsAcceptedOnceAndAnyChangeOrReplayIsRefused) {
  TreeVerifier verifier(*authenticator_, uid_);
  v1::TreeMessage message = signed_message({"h:1"});
  Result<TreeSessionKey> key = verifier.verify(message);
  ASSERT_TRUE(key) << key.error().message;
  EXPECT_EQ(verifier.sessions(), 1u);
  // The same bytes again: a replay.
  Result<TreeSessionKey> again = verifier.verify(message);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Error::Code::kUnauthenticated);
  EXPECT_NE(again.error().message.find("seen before"), std::string::npos) << again.error().message;
  // A new message of the same session is accepted without a new MUNGE decode (one session).
  ASSERT_TRUE(verifier.verify(signed_message({"h:1"})));
  EXPECT_EQ(verifier.sessions(), 1u);
  // Any change to what was signed.
  struct Spoil {
    std::string what;
    std::function<void(v1::TreeMessage&)> spoil;
  };
  for (const Spoil& s : std::vector<Spoil>{
           {"body", [](v1::TreeMessage& m) { m.mutable_body()->push_back('x'); }},
           {"counter", [](v1::TreeMessage& m) { m.mutable_auth()->set_counter(999999); }},
           {"time",
            [](v1::TreeMessage& m) {
              m.mutable_auth()->set_issued_at(m.auth().issued_at() - 0.5);
            }},
           {"mac", [](v1::TreeMessage& m) { (*m.mutable_auth()->mutable_mac())[0] ^= 1; }},
       }) {
    v1::TreeMessage m = signed_message({"h:1"});
    s.spoil(m);
    Result<TreeSessionKey> refused = verifier.verify(m);
    ASSERT_FALSE(refused) << s.what;
    EXPECT_NE(refused.error().message.find("signature does not match"), std::string::npos)
        << s.what << ": " << refused.error().message;
  }
  // Too old by the receiver's clock (signed correctly, but long ago).
  v1::TreeMessage old = signed_message({"h:1"});
  old.mutable_auth()->set_issued_at(old.auth().issued_at() - 2 * kMaxMessageAge);
  EXPECT_NE(verifier.verify(old).error().message.find("s ago"), std::string::npos);
  // No session, no signature, garbage credential.
  v1::TreeMessage bare = signed_message({"h:1"});
  bare.mutable_auth()->clear_session();
  EXPECT_FALSE(verifier.verify(bare));
  v1::TreeMessage unsigned_one = signed_message({"h:1"});
  unsigned_one.mutable_auth()->clear_mac();
  EXPECT_FALSE(verifier.verify(unsigned_one));
  TreeVerifier fresh(*authenticator_, uid_);
  v1::TreeMessage forged = signed_message({"h:1"});
  forged.mutable_auth()->set_credential("MUNGE:garbage:");
  Result<TreeSessionKey> refused = fresh.verify(forged);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Error::Code::kUnauthenticated);
}

TEST_F(TreeTest, SessionsOfAnotherKeyOrAnotherUserAreRefused) {
  // A munged with another key: its credentials cannot be read with ours.
  Result<MungeDaemon> stranger = MungeDaemon::start(dir_ / "stranger");
  ASSERT_TRUE(stranger) << stranger.error().message;
  CredentialSource theirs(stranger->socket());
  TreeSigner their_signer(theirs, uid_);
  v1::TreeMessage message = signed_message({"h:1"});
  Result<v1::TreeAuth> auth = their_signer.sign(message.body());
  ASSERT_TRUE(auth);
  *message.mutable_auth() = *auth;
  TreeVerifier verifier(*authenticator_, uid_);
  Result<TreeSessionKey> refused = verifier.verify(message);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("MUNGE"), std::string::npos) << refused.error().message;
  // A receiver that takes only another uid's sessions.
  TreeVerifier picky(*authenticator_, uid_ + 4242);
  refused = picky.verify(signed_message({"h:1"}));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("belongs to uid"), std::string::npos)
      << refused.error().message;
}

TEST_F(TreeTest, AnswersAreSignedWithTheSessionAndBoundToTheirMessage) {
  TreeVerifier verifier(*authenticator_, uid_);
  v1::TreeMessage message = signed_message({"h:1"});
  Result<TreeSessionKey> key = verifier.verify(message);
  ASSERT_TRUE(key);
  v1::TreeAnswer answer;
  answer.set_body("reply");
  answer.set_mac(sign_answer(*key, message.auth(), answer.body()));
  EXPECT_TRUE(signer_->check_answer(message.auth(), answer));
  v1::TreeAnswer changed = answer;
  changed.set_body("forged");
  EXPECT_FALSE(signer_->check_answer(message.auth(), changed));
  // The same answer to another message of the session does not pass.
  v1::TreeMessage other = signed_message({"h:1"});
  EXPECT_FALSE(signer_->check_answer(other.auth(), answer));
}

TEST_F(TreeTest, EveryAgentOfATreeDoesItsPartOnceAndTheRepliesFoldUp) {
  for (int i = 0; i < 13; ++i) add_node();
  for (int fanout : {1, 2, 3, 16}) {
    for (auto& n : nodes_) n->parts = 0;
    v1::TreeReply reply = sender_->send(ping(), addresses(), {.fanout = fanout});
    EXPECT_EQ(reply.agents(), 13) << "fanout " << fanout;
    EXPECT_EQ(reply.processes(), 13 * 14 / 2);  // every part's number, summed
    EXPECT_EQ(reply.failed_size(), 0);
    for (auto& n : nodes_) EXPECT_EQ(n->parts.load(), 1) << n->address;
  }
}

TEST_F(TreeTest, ADeadInteriorAgentIsReportedAndItsSubtreeReachedInANewTree) {
  for (int i = 0; i < 7; ++i) add_node();
  std::vector<std::string> all = addresses();
  // Fanout 2 over 7: the root's first child (node 1) has nodes 2 and 3 below it.
  ASSERT_EQ(tree_children({all.begin() + 1, all.end()}, 2)[0].agent, all[1]);
  nodes_[1]->channel.reset();  // it stops listening: dead
  v1::TreeReply once = sender_->send_once(ping(), all, {.fanout = 2, .deadline_seconds = 2});
  EXPECT_EQ(once.agents(), 4);
  ASSERT_EQ(once.failed_size(), 1);
  EXPECT_EQ(once.failed(0), all[1]);
  EXPECT_EQ(std::set<std::string>(once.unreached().begin(), once.unreached().end()),
            (std::set<std::string>{all[2], all[3]}));
  v1::TreeReply whole = sender_->send(ping(), all, {.fanout = 2, .deadline_seconds = 2});
  EXPECT_EQ(whole.agents(), 6);  // everyone but the dead one
  ASSERT_EQ(whole.failed_size(), 1);
  EXPECT_EQ(whole.failed(0), all[1]);
  EXPECT_EQ(whole.unreached_size(), 0);
  EXPECT_EQ(nodes_[2]->parts.load(), 1);  // reached only by the second send's new tree
  EXPECT_EQ(nodes_[4]->parts.load(), 2);  // reached by both sends' first trees
}

// A child that takes its connection and never answers (a stopped agent) costs its parent its own
// share of the deadline only: the parent answers in time, naming the child. (The channel's thread
// slept through the child's deadline until other traffic woke it, up to a second, so the parent
// answered late and was reported lost itself: liveness declared a healthy agent down.)
TEST_F(TreeTest, ASilentChildIsReportedByItsParentWhichAnswersInTime) {
  add_node();
  Node& child = add_node();
  child.stall_ms = 3000;
  const std::vector<std::string> all = addresses();
  for (int round = 0; round < 3; ++round) {
    v1::TreeReply reply = sender_->send_once(ping(), all, {.fanout = 2, .deadline_seconds = 0.4});
    EXPECT_EQ(reply.agents(), 1) << "round " << round;
    ASSERT_EQ(reply.failed_size(), 1) << "round " << round;
    EXPECT_EQ(reply.failed(0), all[1]) << "round " << round;
    EXPECT_EQ(reply.unreached_size(), 0) << "round " << round;
  }
}

// The PMI exchange's hop to a parent agent (daemon/pmi_tree_link.h): a parent slow past the
// deadline (a host starved of CPU) is sent the contribution again and the barrier goes on; one
// that never answers fails the barrier after kAttempts sends, naming the parent.
TEST_F(TreeTest, APmiContributionIsSentAgainToASlowParentAndFailsOnlyWhenItNeverAnswers) {
  Node& slow = add_node();
  Node& stopped = add_node();
  slow.stall_ms = 1500;
  stopped.stall_ms = 4000;
  TreeChannel channel;
  PmiTreeLink link(channel, *credentials_, uid_, "127.0.0.1:1", /*deadline_seconds=*/0.4);
  const StepKey step{5, 1, 0};
  std::promise<std::string> slow_failed, stopped_failed;
  link.send_up(slow.address, step, 1, "[n1]",
               [&](const std::string& why) { slow_failed.set_value(why); });
  // The first send is under way; the parent is quick again before the second.
  ASSERT_TRUE(eventually([&] { return slow.parts.load() == 1; }));
  slow.stall_ms = 0;
  link.send_up(stopped.address, step, 1, "[n2]",
               [&](const std::string& why) { stopped_failed.set_value(why); });
  std::future<std::string> stopped_why = stopped_failed.get_future();
  ASSERT_EQ(stopped_why.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  const std::string why = stopped_why.get();
  EXPECT_NE(why.find(stopped.address), std::string::npos) << why;
  EXPECT_EQ(stopped.parts.load(), PmiTreeLink::kAttempts);
  EXPECT_EQ(slow.parts.load(), 2);  // the stalled first copy and the answered second
  link.stop();
  EXPECT_EQ(slow_failed.get_future().wait_for(std::chrono::seconds(0)),
            std::future_status::timeout);
}

TEST_F(TreeTest, HostileMessagesAreRefusedWithTheReasonAndTheNodeKeepsServing) {
  Node& node = add_node();
  // Bytes that are no frame at all: the connection is closed, nothing else happens.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(std::stoi(node.address.substr(10))));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  std::string junk(64, '\xff');
  ASSERT_EQ(::write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  char byte;
  EXPECT_EQ(::read(fd, &byte, 1), 0) << "the node should close a connection that sends junk";
  ::close(fd);
  // A frame that is not a message.
  v1::TreeMessage empty;
  auto [status, answer] = call(node.address, empty);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  // Signed, but a tree this node is not in.
  auto [outside, a2] = call(node.address, signed_message({"10.0.0.1:1"}));
  EXPECT_EQ(outside.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(outside.error_message().find("not in the message's tree"), std::string::npos);
  // Signed, and malformed: each limit named.
  v1::TreeMessage bad = signed_message({node.address});
  v1::TreeBody body;
  body.ParseFromString(bad.body());
  body.set_fanout(0);
  bad.set_body(body.SerializeAsString());
  *bad.mutable_auth() = *signer_->sign(bad.body());
  auto [malformed, a3] = call(node.address, bad);
  EXPECT_EQ(malformed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(malformed.error_message().rfind("fanout:", 0), 0u) << malformed.error_message();
  // A replay of a message it did.
  v1::TreeMessage good = signed_message({node.address});
  EXPECT_TRUE(call(node.address, good).first.ok());
  auto [replayed, a4] = call(node.address, good);
  EXPECT_EQ(replayed.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(replayed.error_message().find("seen before"), std::string::npos);
  // And it still serves.
  EXPECT_EQ(sender_->send(ping(), {node.address}, {}).agents(), 1);
  EXPECT_EQ(node.parts.load(), 2);
}

TEST(TreeMacTest, IsOpenSslsHmacSha256OfThePartsOneAfterTheOther) {
  for (int round = 0; round < 20; ++round) {
    TreeSessionKey key;
    ASSERT_EQ(RAND_bytes(key.key.data(), static_cast<int>(key.key.size())), 1);
    std::string a(static_cast<size_t>(round * 37), 'a'), b = "part b", c(200, '\0');
    ASSERT_EQ(RAND_bytes(reinterpret_cast<unsigned char*>(c.data()), 200), 1);
    const std::string whole = a + b + c;
    unsigned char expected[32];
    size_t length = 0;
    ASSERT_NE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.key.data(), key.key.size(),
                        reinterpret_cast<const unsigned char*>(whole.data()), whole.size(),
                        expected, sizeof expected, &length),
              nullptr);
    ASSERT_EQ(length, 32u);
    const std::string want(reinterpret_cast<const char*>(expected), 32);
    EXPECT_EQ(tree_mac(key, {a, b, c}), want) << "round " << round << ", key not prepared";
    prepare_key(key);
    EXPECT_EQ(tree_mac(key, {a, b, c}), want) << "round " << round;
    EXPECT_EQ(tree_mac(key, {whole}), want) << "round " << round;  // and again, from the states
    EXPECT_NE(tree_mac(key, {a, b, c + "x"}), want);
  }
}

TEST(TreeBodyTest, ChecksNameTheFieldAtFault) {
  v1::TreeBody body;
  body.add_agents("h:1");
  body.set_fanout(2);
  body.set_deadline_seconds(1);
  body.mutable_ping();
  EXPECT_TRUE(check_tree_body(body));
  auto field = [&](const std::function<void(v1::TreeBody&)>& spoil) {
    v1::TreeBody b = body;
    spoil(b);
    Status ok = check_tree_body(b);
    return ok ? std::string("ok") : ok.error().message.substr(0, ok.error().message.find(':'));
  };
  EXPECT_EQ(field([](v1::TreeBody& b) { b.clear_agents(); }), "agents");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.add_agents("h:1"); }), "agents");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.add_agents(std::string(300, 'x')); }), "agents");
  // Many agents, each once, pass; one of them twice, wherever, is named.
  auto many = [](v1::TreeBody& b) {
    for (int i = 2; i < 300; ++i) b.add_agents("h:" + std::to_string(i));
  };
  EXPECT_EQ(field(many), "ok");
  v1::TreeBody twice = body;
  many(twice);
  twice.add_agents("h:3");
  twice.add_agents("h:500");
  Status refused = check_tree_body(twice);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "agents: h:3 appears twice");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.set_fanout(65); }), "fanout");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.set_deadline_seconds(0); }), "deadline_seconds");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.set_deadline_seconds(61); }), "deadline_seconds");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.clear_op(); }), "op");
  EXPECT_EQ(field([](v1::TreeBody& b) { b.mutable_gang_switch()->add_freeze()->set_job_id(-1); }),
            "gang_switch.freeze");
  EXPECT_EQ(
      field([](v1::TreeBody& b) { b.mutable_gang_switch()->add_skip_activity()->set_job_id(-1); }),
      "gang_switch.skip_activity");
  // A step's PMI exchange (daemon/pmi_tree_link.h): a good one, then each field spoilt.
  auto exchange = [](v1::TreeBody& b) -> v1::PmiExchange& {
    v1::PmiExchange& x = *b.mutable_pmi_exchange();
    x.set_job_id(7);
    x.set_attempt(1);
    x.set_round(1);
    x.set_from("h:2");
    return x;
  };
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b); }), "ok");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).set_job_id(0); }), "pmi_exchange");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).set_attempt(0); }), "pmi_exchange");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).set_step(-1); }), "pmi_exchange");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).set_round(0); }), "pmi_exchange");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).clear_from(); }), "pmi_exchange.from");
  EXPECT_EQ(field([&](v1::TreeBody& b) { exchange(b).set_from(std::string(300, 'x')); }),
            "pmi_exchange.from");
}

}  // namespace
}  // namespace trellis
