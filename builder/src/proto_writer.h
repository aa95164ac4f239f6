// Protocol buffer wire encoding, appended to a growing byte buffer: the few
// field kinds a trace needs (varint, fixed64, length-delimited), in the
// spirit of Perfetto's protozero. No schema, no objects, no allocation per
// message: a writer appends tags and values in field order.
//
// Nested messages get the shortest length prefix, not protozero's fixed
// four-byte one: a trace is millions of small nested messages (a debug
// annotation is 5-10 bytes), so three padding bytes each would be a third
// of the file. Begin() leaves one byte for the length; End() writes it, and
// in the rare message of 128 bytes or more moves the body to make room.
// Nested messages must end innermost first.
#ifndef GPUCAP_BUILDER_SRC_PROTO_WRITER_H_
#define GPUCAP_BUILDER_SRC_PROTO_WRITER_H_

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace gpucap::builder::proto {

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr uint32_t Tag(uint32_t field, WireType type) { return field << 3 | static_cast<uint32_t>(type); }

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` at `p` (which has room for 10 bytes); returns the end.
// Most values in a trace (tags, iids, small deltas) take one byte.
inline uint8_t* WriteVarint(uint64_t v, uint8_t* p) {
  if (v < 0x80) {
    *p = static_cast<uint8_t>(v);
    return p + 1;
  }
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

class Writer {
 public:
  // Where a nested message's length goes; handed back to End().
  struct Nested {
    size_t at;
  };

  // The capacity is allocated, not touched: a renderer of pieces holds
  // several writers of ~1 MB per window, and zeroing them (std::string's
  // resize) faulted in pages no byte was written to (bench/README.md,
  // session 12).
  explicit Writer(size_t capacity = 1 << 16)
      : buf_(std::make_unique_for_overwrite<char[]>(capacity)), capacity_(capacity) {}

  // Makes room for `n` more bytes. Every Append* below needs at most 20
  // bytes beyond what it copies, and checks for itself.
  void Reserve(size_t n) {
    if (size_ + n > capacity_) [[unlikely]] Grow(n);
  }

  [[gnu::always_inline]] void Varint(uint32_t field, uint64_t v) {
    Reserve(20);
    uint8_t* p = Data() + size_;
    p = WriteVarint(Tag(field, WireType::kVarint), p);
    size_ = WriteVarint(v, p) - Data();
  }
  // int32/int64 fields carry negative numbers as 10-byte varints.
  void Int(uint32_t field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }

  [[gnu::always_inline]] void Fixed64(uint32_t field, uint64_t v) {
    Reserve(20);
    uint8_t* p = WriteVarint(Tag(field, WireType::kFixed64), Data() + size_);
    std::memcpy(p, &v, 8);  // little-endian hosts only, as the rest of gpucap
    size_ = p + 8 - Data();
  }
  void Double(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    Fixed64(field, bits);
  }

  void Bytes(uint32_t field, std::string_view bytes) {
    Reserve(20 + bytes.size());
    uint8_t* p = WriteVarint(Tag(field, WireType::kLengthDelimited), Data() + size_);
    p = WriteVarint(bytes.size(), p);
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    size_ = p + bytes.size() - Data();
  }
  void String(uint32_t field, std::string_view s) { Bytes(field, s); }

  [[gnu::always_inline]] Nested Begin(uint32_t field) {
    Reserve(20);
    uint8_t* p = WriteVarint(Tag(field, WireType::kLengthDelimited), Data() + size_);
    size_ = p - Data();
    Nested n{size_};
    size_ += 1;
    return n;
  }
  [[gnu::always_inline]] void End(Nested n) {
    size_t body = size_ - n.at - 1;
    if (body < 0x80) {
      buf_[n.at] = static_cast<char>(body);
      return;
    }
    size_t extra = VarintSize(body) - 1;
    Reserve(extra);
    uint8_t* start = Data() + n.at + 1;
    std::memmove(start + extra, start, body);
    WriteVarint(body, Data() + n.at);
    size_ += extra;
  }

  // For writing encoded bytes in place: room for `n` bytes at the end,
  // then Commit() with where the writing stopped.
  [[gnu::always_inline]] uint8_t* Cursor(size_t n) {
    Reserve(n);
    return Data() + size_;
  }
  void Commit(uint8_t* end) { size_ = static_cast<size_t>(end - Data()); }

  // Raw bytes, already encoded.
  void Raw(std::string_view bytes) {
    Reserve(bytes.size());
    std::memcpy(Data() + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
  }

  std::string_view view() const { return {buf_.get(), size_}; }
  size_t size() const { return size_; }
  void Clear() { size_ = 0; }

 private:
  uint8_t* Data() { return reinterpret_cast<uint8_t*>(buf_.get()); }
  void Grow(size_t n) {
    size_t capacity = std::max(capacity_ * 2, size_ + n);
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ != 0) std::memcpy(bigger.get(), buf_.get(), size_);
    buf_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> buf_;  // capacity_ bytes; those past size_ are scratch
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace gpucap::builder::proto

#endif  // GPUCAP_BUILDER_SRC_PROTO_WRITER_H_
