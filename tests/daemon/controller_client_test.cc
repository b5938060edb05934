// ControllerClient, the agents' way to the controllers: it fails over to the next address and
// stays with the one that answered, with a fresh MUNGE credential on every call.
#include <gtest/gtest.h>

#include "daemon/controller_client.h"
#include "daemon/munge_daemon.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

TEST(ControllerClientTest, FailsOverToTheNextControllerAndRemembersIt) {
  testing::TempDir dir;
  Result<MungeDaemon> munge = MungeDaemon::start(dir / "munge");
  ASSERT_TRUE(munge) << munge.error().message;
  testing::ControllerServer controller(munge->socket());
  ASSERT_TRUE(controller.ok());
  ControllerClient client(
      {{"127.0.0.1:1", controller.address()}, munge->socket(), std::chrono::milliseconds(5000)});
  for (int i = 0; i < 3; ++i) {
    v1::ExitRequest request;
    v1::ExitReply reply;
    grpc::Status status =
        client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
          return stub.ReportExit(&context, request, &reply);
        });
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(client.current_address(), controller.address());
  }
  EXPECT_EQ(controller.service().exit_reports(), 3);
  EXPECT_EQ(controller.service().unauthenticated_calls(), 0);  // a fresh credential each time

  ControllerClient nobody({{"127.0.0.1:1"}, munge->socket(), std::chrono::milliseconds(2000)});
  grpc::Status status = nobody.call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
    v1::ExitReply reply;
    return stub.ReportExit(&context, v1::ExitRequest(), &reply);
  });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("127.0.0.1:1"), std::string::npos);
}

}  // namespace
}  // namespace trellis
