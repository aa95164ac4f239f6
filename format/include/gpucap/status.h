// Errors cross gpucap's component boundaries as values. A Status is either ok
// or carries a code and a message written for the person reading it: the
// message names the file, the offset and what was wrong.
#ifndef GPUCAP_STATUS_H_
#define GPUCAP_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace gpucap {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,
    kNotFound,
    kCorrupt,       // the bytes are not what the format promises
    kUnsupported,   // well-formed, but from a newer or unknown producer
    kIoError,
    kNoSpace,
    kResourceExhausted,
    kInternal,
  };

  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Corrupt(std::string m) { return Status(Code::kCorrupt, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status NoSpace(std::string m) { return Status(Code::kNoSpace, std::move(m)); }
  static Status ResourceExhausted(std::string m) { return Status(Code::kResourceExhausted, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

const char* CodeName(Status::Code code);

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace gpucap

#define GPUCAP_RETURN_IF_ERROR(expr)         \
  do {                                       \
    ::gpucap::Status gpucap_status_ = (expr); \
    if (!gpucap_status_.ok()) return gpucap_status_; \
  } while (0)

#endif  // GPUCAP_STATUS_H_
