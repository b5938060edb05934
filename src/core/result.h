// Result<T>: a value or an error (a message and a code), returned across every boundary where input
// can be bad (parsing, requests, files). Exceptions are kept for programmer errors only.
//
//   Result<Torus> t = parse_machine("torus:8x8");
//   if (!t) { std::cerr << t.error().message; return 2; }
//   use(*t);
#pragma once

#include <cassert>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace trellis {

// What went wrong, said so that a user can fix it: where (file:line, field, argument), what was
// found, and what was expected; and a code saying what kind of failure it is, so that callers
// (a scheduler, a daemon answering a client) can act on it without reading the message.
struct Error {
  // The kinds of failure. They map one to one onto gRPC status codes for the daemon's API:
  // kInvalidArgument -> INVALID_ARGUMENT, kNotFound -> NOT_FOUND, kDoesNotFitNow ->
  // RESOURCE_EXHAUSTED, kNeverFits -> FAILED_PRECONDITION, kUnavailable -> UNAVAILABLE,
  // kPermissionDenied -> PERMISSION_DENIED, kUnauthenticated -> UNAUTHENTICATED,
  // kInternal -> INTERNAL.
  enum class Code {
    kInvalidArgument,   // bad input: a malformed spec, option or file
    kNotFound,          // a named thing (file, allocator, job) does not exist
    kDoesNotFitNow,     // an allocator cannot place the request on the nodes free now
    kNeverFits,         // the request cannot be placed on this machine even when it is idle
    kUnavailable,       // a resource could not be reached or read right now; retrying may help
    kPermissionDenied,  // the caller is known but may not do this (another user's job)
    kUnauthenticated,   // the caller could not be identified (no or a bad credential)
    kInternal,          // a broken invariant or a library failure: a bug, not the caller's fault
  };

  std::string message;
  Code code = Code::kInvalidArgument;
};

// Builds an Error; a free function so call sites read `return fail("...")`. Without a code the
// error is an invalid argument, the common case at input boundaries.
inline Error fail(std::string message) {
  return Error{std::move(message), Error::Code::kInvalidArgument};
}
inline Error fail(Error::Code code, std::string message) {
  return Error{std::move(message), code};
}

// The text of the last system call's error (errno), for messages.
inline std::string errno_text() {
  return std::strerror(errno);
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit on purpose
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace trellis
