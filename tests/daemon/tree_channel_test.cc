// TreeChannel's contract on real loopback connections (daemon/tree/tree_channel.h): a request
// whose handler blocks holds up neither another request on the same connection nor the answers
// that handler itself waits for (its poll thread answers it, another polls meanwhile); a sooner
// deadline expires before a later one sent first; many requests from several threads at once are
// each answered once, by id.
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/tree/tree_channel.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::eventually;
using SystemClock = std::chrono::system_clock;

v1::TreeMessage message_of(const std::string& body) {
  v1::TreeMessage message;
  message.set_body(body);
  return message;
}

auto in_seconds(int seconds) {
  return SystemClock::now() + std::chrono::seconds(seconds);
}

// What came back to one send.
struct Outcome {
  std::promise<std::pair<grpc::StatusCode, std::string>> promise;
  std::future<std::pair<grpc::StatusCode, std::string>> future = promise.get_future();
  TreeChannel::Done done() {
    return [this](const grpc::Status& status, const v1::TreeAnswer& answer) {
      promise.set_value({status.error_code(), answer.body()});
    };
  }
  bool arrived() const {
    return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
};

// A gate a handler waits at until the test opens it (or 30 s pass: a test that fails does not
// hang).
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait_for(lock, std::chrono::seconds(30), [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

TEST(TreeChannelTest, ABlockedHandlerHoldsUpNeitherAnotherRequestNorTheAnswersItWaitsFor) {
  // `far` answers at once; `near` has a handler that blocks at the gate ("slow"), one that asks
  // `far` through near's own channel and waits for its answer ("ask"), and one that answers at
  // once. (What the handlers and callbacks use is made before the channels, and goes after them.)
  Gate gate;
  Outcome slow, fast, ask;
  TreeChannel far;
  Result<int> far_port =
      far.listen("127.0.0.1", 0, [](const v1::TreeMessage& m, v1::TreeAnswer* a) {
        a->set_body("far:" + m.body());
        return grpc::Status::OK;
      });
  ASSERT_TRUE(far_port) << far_port.error().message;
  const std::string far_address = "127.0.0.1:" + std::to_string(*far_port);

  std::atomic<int> blocked{0};
  TreeChannel near;
  Result<int> near_port =
      near.listen("127.0.0.1", 0, [&](const v1::TreeMessage& m, v1::TreeAnswer* a) {
        if (m.body() == "slow") {
          ++blocked;
          gate.wait();
        } else if (m.body() == "ask") {
          Outcome asked;
          near.send(far_address, message_of("question"), in_seconds(20), asked.done());
          if (asked.future.wait_for(std::chrono::seconds(20)) != std::future_status::ready)
            return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "far did not answer");
          a->set_body(asked.future.get().second);
          return grpc::Status::OK;
        }
        a->set_body("near:" + m.body());
        return grpc::Status::OK;
      });
  ASSERT_TRUE(near_port) << near_port.error().message;
  const std::string near_address = "127.0.0.1:" + std::to_string(*near_port);

  TreeChannel client;
  client.send(near_address, message_of("slow"), in_seconds(30), slow.done());
  ASSERT_TRUE(eventually([&] { return blocked == 1; }));
  // Same connection, while the slow one's handler blocks.
  client.send(near_address, message_of("fast"), in_seconds(20), fast.done());
  client.send(near_address, message_of("ask"), in_seconds(20), ask.done());
  ASSERT_EQ(fast.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(fast.future.get(), std::make_pair(grpc::StatusCode::OK, std::string("near:fast")));
  ASSERT_EQ(ask.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(ask.future.get(), std::make_pair(grpc::StatusCode::OK, std::string("far:question")));
  EXPECT_FALSE(slow.arrived());
  gate.open();
  ASSERT_EQ(slow.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(slow.future.get(), std::make_pair(grpc::StatusCode::OK, std::string("near:slow")));
}

TEST(TreeChannelTest, ASoonerDeadlineSentAfterALaterOneExpiresFirst) {
  // The server answers "hello" at once and holds every other request at the gate.
  Gate gate;
  Outcome hello, later, sooner;
  TreeChannel server;
  Result<int> port = server.listen("127.0.0.1", 0, [&](const v1::TreeMessage& m, v1::TreeAnswer*) {
    if (m.body() != "hello") gate.wait();
    return grpc::Status::OK;
  });
  ASSERT_TRUE(port) << port.error().message;
  const std::string address = "127.0.0.1:" + std::to_string(*port);
  TreeChannel client;
  // Connected first, so that both sends below go out from this thread, in this order.
  client.send(address, message_of("hello"), in_seconds(20), hello.done());
  ASSERT_EQ(hello.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  client.send(address, message_of("later"), in_seconds(25), later.done());
  client.send(address, message_of("sooner"), SystemClock::now() + std::chrono::milliseconds(200),
              sooner.done());
  ASSERT_EQ(sooner.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(sooner.future.get().first, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_FALSE(later.arrived());
  gate.open();
  ASSERT_EQ(later.future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(later.future.get().first, grpc::StatusCode::OK);
}

TEST(TreeChannelTest, ManyRequestsFromSeveralThreadsAreEachAnsweredOnceByTheirId) {
  std::atomic<int> right{0}, wrong{0}, calls{0};
  TreeChannel server;
  Result<int> port = server.listen("127.0.0.1", 0, [](const v1::TreeMessage& m, v1::TreeAnswer* a) {
    a->set_body(m.body());
    return grpc::Status::OK;
  });
  ASSERT_TRUE(port) << port.error().message;
  const std::string address = "127.0.0.1:" + std::to_string(*port);
  TreeChannel client;
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string body = std::to_string(t) + "." + std::to_string(i);
        client.send(address, message_of(body), in_seconds(30),
                    [&, body](const grpc::Status& status, const v1::TreeAnswer& answer) {
                      ++calls;
                      ++(status.ok() && answer.body() == body ? right : wrong);
                    });
      }
    });
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(eventually([&] { return calls == kThreads * kEach; }));
  EXPECT_EQ(right, kThreads * kEach);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace trellis
