#include "daemon/grpc_status.h"

namespace trellis {

grpc::Status to_grpc(const Error& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error.code) {
    case Error::Code::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case Error::Code::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case Error::Code::kDoesNotFitNow:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case Error::Code::kNeverFits:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case Error::Code::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case Error::Code::kPermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case Error::Code::kUnauthenticated:
      code = grpc::StatusCode::UNAUTHENTICATED;
      break;
    case Error::Code::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
  }
  return grpc::Status(code, error.message);
}

Error from_grpc(const grpc::Status& status, std::string_view what) {
  Error::Code code = Error::Code::kInternal;
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      code = Error::Code::kInvalidArgument;
      break;
    case grpc::StatusCode::NOT_FOUND:
      code = Error::Code::kNotFound;
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      code = Error::Code::kDoesNotFitNow;
      break;
    case grpc::StatusCode::FAILED_PRECONDITION:
      code = Error::Code::kNeverFits;
      break;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      code = Error::Code::kUnavailable;
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
      code = Error::Code::kPermissionDenied;
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      code = Error::Code::kUnauthenticated;
      break;
    default:
      break;
  }
  return Error{std::string(what) + ": " + status.error_message(), code};
}

}  // namespace trellis
