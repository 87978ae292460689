// A small status type for every fallible call in tflite-gles.
//
// No exceptions cross the C ABI, so every error travels as a Status with a
// message that says what failed and why; the delegate turns it into a
// TfLiteStatus plus a context->ReportError line.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tflite_gles {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with where it happened, keeping the original cause.
  Status WithContext(const std::string& where) const {
    if (ok_) return *this;
    return Error(where + ": " + message_);
  }

 private:
  bool ok_ = true;
  std::string message_;
};

// A value or the Status that explains its absence.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tflite_gles

#define TFG_STATUS_CONCAT_INNER(a, b) a##b
#define TFG_STATUS_CONCAT(a, b) TFG_STATUS_CONCAT_INNER(a, b)

// Returns early from the enclosing function when `expr` is an error Status.
#define TFG_RETURN_IF_ERROR(expr)                                   \
  do {                                                              \
    ::tflite_gles::Status tfg_status_ = (expr);                     \
    if (!tfg_status_.ok()) return tfg_status_;                      \
  } while (0)

// Assigns the value of a StatusOr expression or returns its error.
#define TFG_ASSIGN_OR_RETURN(lhs, expr)                                    \
  auto TFG_STATUS_CONCAT(tfg_or_, __LINE__) = (expr);                      \
  if (!TFG_STATUS_CONCAT(tfg_or_, __LINE__).ok())                          \
    return TFG_STATUS_CONCAT(tfg_or_, __LINE__).status();                  \
  lhs = std::move(*TFG_STATUS_CONCAT(tfg_or_, __LINE__))
