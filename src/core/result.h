// Result<T>: a value or an Error, returned across module boundaries instead of throwing.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace tessera {

struct Error {
  std::string message;
};

// E is the error type: Error almost everywhere; the test API server's results carry a
// Kubernetes Status instead (apiserver::ApiResult).
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const E& error() const { return std::get<E>(state_); }

 private:
  std::variant<T, E> state_;
};

// Status: a Result with no value.
struct Ok {};
using Status = Result<Ok>;

}  // namespace tessera
