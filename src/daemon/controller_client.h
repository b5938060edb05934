// Calls the controllers (trellisd) of a cluster, for the CLI and the agents.
//
// Controllers keep no state of their own (it is all in the store), so any of them can answer
// any call: the client tries them in turn, starting with the last one that answered, and moves
// on when one cannot be reached (UNAVAILABLE) or does not answer in time (DEADLINE_EXCEEDED).
// Every attempt carries a fresh MUNGE credential and its own deadline.
//
//   ControllerClient client({.addresses = {"c1:6817", "c2:6817"}, .munge_socket = socket});
//   v1::SubmitReply reply;
//   grpc::Status status = client.call([&](v1::Controller::Stub& stub, grpc::ClientContext& ctx) {
//     return stub.Submit(&ctx, request, &reply);
//   });
//
// Thread-safe; channels are made on first use of each address and kept.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/auth.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

class ControllerClient {
 public:
  struct Options {
    std::vector<std::string> addresses;        // "host:port", in order of preference
    std::string munge_socket;                  // "" = libmunge's default
    std::chrono::milliseconds deadline{5000};  // per attempt
  };
  // One attempt: make the call on `stub` with `context` (credential and deadline already set).
  // It may run several times, once per address tried, so it must not consume its inputs.
  using Call = std::function<grpc::Status(v1::Controller::Stub&, grpc::ClientContext&)>;

  explicit ControllerClient(Options options);

  // The first answer from a controller that could be reached (which may itself be an error
  // such as INVALID_ARGUMENT), or the last failure when none could. UNAVAILABLE without trying
  // when there is no address or no credential can be made.
  grpc::Status call(const Call& call);

  // The address that answered last (the first one before any call).
  std::string current_address() const;
  const std::vector<std::string>& addresses() const { return options_.addresses; }

 private:
  std::shared_ptr<v1::Controller::Stub> stub(size_t index);

  Options options_;
  CredentialSource credentials_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<v1::Controller::Stub>> stubs_;  // guarded by mutex_
  size_t preferred_ = 0;                                      // guarded by mutex_
};

}  // namespace trellis
