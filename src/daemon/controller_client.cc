#include "daemon/controller_client.h"

namespace trellis {
namespace {

// The largest reply taken: gRPC's default of 4 MiB is a listing of about 70,000 nodes, and the
// seeds' machines go to 158,976 (Fugaku); 256 MiB stays a bound.
constexpr int kMaxReplyBytes = 256 << 20;

}  // namespace

ControllerClient::ControllerClient(Options options)
    : options_(std::move(options)),
      credentials_(options_.munge_socket),
      stubs_(options_.addresses.size()) {}

std::shared_ptr<v1::Controller::Stub> ControllerClient::stub(size_t index) {
  std::lock_guard lock(mutex_);
  if (!stubs_[index]) {
    grpc::ChannelArguments arguments;
    arguments.SetMaxReceiveMessageSize(kMaxReplyBytes);
    stubs_[index] = v1::Controller::NewStub(grpc::CreateCustomChannel(
        options_.addresses[index], grpc::InsecureChannelCredentials(), arguments));
  }
  return stubs_[index];
}

grpc::Status ControllerClient::call(const Call& call) {
  size_t count = options_.addresses.size();
  if (count == 0) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no controller address");
  size_t first;
  {
    std::lock_guard lock(mutex_);
    first = preferred_;
  }
  grpc::Status last;
  for (size_t tried = 0; tried < count; ++tried) {
    size_t index = (first + tried) % count;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
    // A credential is per attempt: munged refuses a replayed one.
    if (Status attached = credentials_.attach(context); !attached) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, attached.error().message);
    }
    grpc::Status status = call(*stub(index), context);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      last = grpc::Status(status.error_code(), "controller " + options_.addresses[index] + ": " +
                                                   status.error_message());
      continue;
    }
    std::lock_guard lock(mutex_);
    preferred_ = index;
    return status;
  }
  return last;
}

std::string ControllerClient::current_address() const {
  std::lock_guard lock(mutex_);
  return options_.addresses.empty() ? std::string() : options_.addresses[preferred_];
}

}  // namespace trellis
