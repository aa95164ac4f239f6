// Appends JSON tokens to a buffer that is handed to a ByteSink in large
// pieces. Numbers are formatted without locale or printf; strings are
// escaped for JSON and made valid UTF-8. The buffer is written through a raw
// pointer: a trace is mostly short appends, where std::string::append's
// bookkeeping costs more than the copy.
#ifndef GPUCAP_BUILDER_SRC_JSON_WRITER_H_
#define GPUCAP_BUILDER_SRC_JSON_WRITER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gpucap/builder/json_string.h"
#include "gpucap/builder/output.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// A short piece of text kept in a fixed block, so that copying it is a
// fixed-size copy the compiler inlines (the writer's slack takes the
// overrun): the per-track and per-category pieces every event repeats.
struct Piece {
  static constexpr size_t kCapacity = 64;
  char text[kCapacity] = {};
  uint8_t len = 0;

  bool complete = true;  // false: the text was longer than kCapacity and is cut

  Piece() = default;
  explicit Piece(std::string_view s)
      : len(static_cast<uint8_t>(std::min(s.size(), kCapacity))), complete(s.size() <= kCapacity) {
    std::memcpy(text, s.data(), len);
  }
};

// Writers for hot paths that hold a cursor: each returns the position after
// what it wrote. The caller has made room (JsonWriter::Room).
char* PutUint(char* p, uint64_t v);
char* PutMicros(char* p, int64_t ns);  // ns as us with exactly three decimals
inline char* PutPiece(char* p, const Piece& piece) {
  std::memcpy(p, piece.text, Piece::kCapacity);
  return p + piece.len;
}
// Copies s to p. Most pieces of a trace are short (keys, API names): those
// are copied inline with overlapping fixed-size moves rather than through a
// call to memcpy, which profiles showed as a tenth of a build.
// Copies n bytes, W <= n <= 2W, as two W-byte moves that overlap.
template <size_t W>
inline void CopyEnds(char* p, const char* s, size_t n) {
  char head[W], tail[W];
  std::memcpy(head, s, W);
  std::memcpy(tail, s + n - W, W);
  std::memcpy(p, head, W);
  std::memcpy(p + n - W, tail, W);
}
inline void CopyShort(char* p, const char* s, size_t n) {
  if (n > 32) {
    std::memcpy(p, s, n);
  } else if (n >= 16) {
    CopyEnds<16>(p, s, n);
  } else if (n >= 8) {
    CopyEnds<8>(p, s, n);
  } else if (n >= 4) {
    CopyEnds<4>(p, s, n);
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = s[i];
  }
}
inline char* PutBytes(char* p, std::string_view s) {
  CopyShort(p, s.data(), s.size());
  return p + s.size();
}

// Writes times as PutMicros does, for a stream of times that mostly share
// their leading digits (a track's events in time order, a flow at its
// slice's start): when only the last two digits of the microseconds change,
// the previous text is copied and patched instead of formatted again.
class TimeText {
 public:
  char* Put(char* p, int64_t ns);

 private:
  uint64_t hundreds_ = 0;  // microseconds / 100 of text_; 0: not kept
  uint8_t len_ = 0;
  char text_[24] = {};     // the microseconds' digits (the last two stale), then anything
};

class JsonWriter {
 public:
  // Longest number Put* writes, and how much past its end a Piece may copy.
  static constexpr size_t kMaxNumber = 24;
  static constexpr size_t kPieceOverrun = Piece::kCapacity;
  explicit JsonWriter(ByteSink* sink, size_t flush_bytes = 1 << 20) : sink_(sink), flush_bytes_(flush_bytes) {
    buf_.Reserve(flush_bytes + kSlack);
  }

  void Raw(std::string_view s) {
    Reserve(s.size());
    CopyShort(buf_.data.get() + used_, s.data(), s.size());
    used_ += s.size();
  }
  void Char(char c) {
    Reserve(1);
    buf_.data[used_++] = c;
  }
  // "key": for a key of gpucap's own (plain ASCII), copied as it is.
  void Key(std::string_view key) {
    Reserve(key.size() + 3);
    char* p = buf_.data.get() + used_;
    *p++ = '"';
    CopyShort(p, key.data(), key.size());
    p += key.size();
    *p++ = '"';
    *p++ = ':';
    used_ = p - buf_.data.get();
  }
  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  // Shortest text that reads back as the same double; null if not finite.
  void Double(double v);
  // Six significant digits, as printf's %g.
  void Float6(double v);
  // ns as us with exactly three decimals: 1234567 -> 1234.567.
  void Micros(int64_t ns);

  // Room for n bytes (plus kPieceOverrun) at the cursor, which Commit moves
  // to `end`. Nothing else may write in between.
  char* Room(size_t n) {
    Reserve(n + kPieceOverrun);
    return buf_.data.get() + used_;
  }
  void Commit(char* end) { used_ = static_cast<size_t>(end - buf_.data.get()); }

  // What was written since Position() returned `from`, valid until the next
  // flush (or the next write, which may move the buffer).
  size_t Position() const { return used_; }
  std::string_view Since(size_t from) const { return {buf_.data.get() + from, used_ - from}; }

  // Hands the buffer to the sink once it is large.
  Status MaybeFlush() { return used_ >= flush_bytes_ ? Flush() : Status::Ok(); }
  Status Flush();

 private:
  static constexpr size_t kSlack = 64;
  static constexpr size_t kFloat6Cache = 8192;  // 4096 sets of 2
  void Reserve(size_t n) {
    if (used_ + n + kSlack > buf_.capacity) [[unlikely]] Grow(n);
  }
  void Grow(size_t n);

  // Formatting to six digits is slow and traces repeat their values
  // (blocks per SM of the same kernels): a direct-mapped cache.
  struct Float6Entry {
    uint64_t bits = ~uint64_t{0};
    uint8_t len = 0;
    char text[23];
  };
  std::vector<Float6Entry> float6_cache_ = std::vector<Float6Entry>(kFloat6Cache);

  ByteSink* sink_;
  size_t flush_bytes_;
  ByteBlock buf_;  // sized ahead, handed to the sink when full; used_ bytes are written
  size_t used_ = 0;
  std::string scratch_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_JSON_WRITER_H_
