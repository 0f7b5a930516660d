// Result<T>: a value or an Error that carries what went wrong (its ErrorKind, mapped to the exit
// code in common/exit_codes.h alone) and one message for the user. The message names the
// variable, file or flag, the bad value, and what was expected.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "common/exit_codes.h"

namespace tv {

struct Error {
  ErrorKind kind;
  std::string message;
  int carried = 0;  // kWorkerFailed: the worker's exit code; kStoppedBySignal: the signal
  int exit_code() const { return exit_code_of(kind, carried); }
  // An error whose code arrived as a number (another node's failure, a child's exit status).
  static Error from_exit_code(int code, std::string message) {
    const ErrorKind k = kind_of_exit_code(code);
    const int carried = k == ErrorKind::kWorkerFailed      ? code
                        : k == ErrorKind::kStoppedBySignal ? code - 128
                                                           : 0;
    return Error{k, std::move(message), carried};
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace tv
