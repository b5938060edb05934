// Result<T>: a value or an error message, returned across every boundary where input can be bad
// (parsing, requests, files). Exceptions are kept for programmer errors only.
//
//   Result<Torus> t = parse_machine("torus:8x8");
//   if (!t) { std::cerr << t.error().message; return 2; }
//   use(*t);
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace trellis {

// What went wrong, said so that a user can fix it: where (file:line, field, argument), what was
// found, and what was expected.
struct Error {
  std::string message;
};

// Builds an Error; a free function so call sites read `return fail("...")`.
inline Error fail(std::string message) {
  return Error{std::move(message)};
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
