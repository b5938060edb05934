// Error <-> grpc::Status: each Error::Code has one gRPC status code (core/result.h lists them), so
// a client learns the kind of failure from the code and the details from the message.
#pragma once

#include <grpcpp/support/status.h>

#include "core/result.h"

namespace trellis {

grpc::Status to_grpc(const Error& error);
template <typename T>
grpc::Status to_grpc(const Result<T>& result) {
  return result ? grpc::Status::OK : to_grpc(result.error());
}
// A failed call as an Error (the message prefixed with what was called).
Error from_grpc(const grpc::Status& status, std::string_view what);

}  // namespace trellis
