// Boxed<T>: a T kept on the heap, with a value's copy and equality, one
// pointer wide while it holds nothing.
//
// For a field that few values of a struct carry but that would make every
// value of it large: a capture's range events hold an NVTX payload schema
// only when they register one, and millions of them decode at once, so the
// schema (88 bytes) lives behind a pointer that is null for the rest.
// Reading an empty box gives a default T; writing through one fills it.
#ifndef GPUCAP_FORMAT_BOXED_H_
#define GPUCAP_FORMAT_BOXED_H_

#include <memory>
#include <utility>

namespace gpucap::format {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: a T converts
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    value_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  bool empty() const { return value_ == nullptr; }
  const T& operator*() const { return value_ ? *value_ : Empty(); }
  const T* operator->() const { return &**this; }
  T& operator*() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  T* operator->() { return &**this; }

  // Equal when the values are: an empty box equals a default T.
  bool operator==(const Boxed& other) const { return **this == *other; }

 private:
  static const T& Empty() {
    static const T empty{};
    return empty;
  }
  std::unique_ptr<T> value_;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_BOXED_H_
