// SQLite's record format (https://www.sqlite.org/fileformat2.html, "Record
// Format"): a header of varint serial types, one per column, then the
// values, big-endian. Values get the column's affinity first, as SQLite
// gives them on insert, so a record written here reads back as the same
// row an INSERT would have stored.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_
#define GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace gpucap::tools::sqlite {

// SQLite's varint: 1-9 bytes, big-endian, 7 bits a byte, the ninth byte 8.
size_t VarintLength(uint64_t v);
size_t PutVarint(uint8_t* out, uint64_t v);

enum class Affinity : uint8_t { kBlob, kText, kNumeric, kInteger, kReal };
// From a column's declared type (the rules of "Determination Of Column
// Affinity"; the export declares INTEGER, REAL, TEXT or nothing).
Affinity AffinityOf(std::string_view declared_type);

struct Value {
  enum class Type : uint8_t { kNull, kInt, kReal, kText };
  Type type = Type::kNull;
  int64_t i = 0;
  double d = 0;
  std::string_view text;
  static Value Null() { return {}; }
  static Value Int(int64_t v) { return {Type::kInt, v, 0, {}}; }
  static Value Real(double v) { return {Type::kReal, 0, v, {}}; }
  static Value Text(std::string_view v) { return {Type::kText, 0, 0, v}; }
};

// The value SQLite stores for `v` in a column of `affinity` (NaN -> NULL,
// numeric text -> number, integral real -> integer, number -> text for
// TEXT): what a record holds and an index on the column sorts. A text made
// from a number points into `*number`.
Value Stored(Value v, Affinity affinity, std::string* number);
inline Value StoredFast(const Value& v, Affinity affinity, std::string* number) {
  if (v.type == Value::Type::kInt && affinity != Affinity::kText && affinity != Affinity::kReal) return v;
  if (v.type == Value::Type::kNull) return v;
  return Stored(v, affinity, number);
}

// The serial type of integer `i` (1-6 by magnitude, 8 and 9 for 0 and 1:
// schema format 4, no body) and how many body bytes it takes.
// Serial types 1-6 hold 1, 2, 3, 4, 6 and 8 bytes; the size follows from
// the magnitude (two's complement: ~i for negatives) and a sign bit, found
// with one count of leading zeros rather than a chain of compares.
inline uint8_t SizedIntSerialType(int64_t i) {
  const uint64_t u = static_cast<uint64_t>(i), mag = i < 0 ? ~u : u;
  static constexpr uint8_t kTypeOfBytes[9] = {0, 1, 2, 3, 4, 5, 5, 6, 6};
  return kTypeOfBytes[(72 - __builtin_clzll(mag | 1)) / 8];  // (bits + sign + 7) / 8
}
inline uint8_t IntSerialType(int64_t i) {
  return i == 0 || i == 1 ? static_cast<uint8_t>(8 + i) : SizedIntSerialType(i);
}
inline constexpr uint8_t kSerialBytes[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
// The low `bytes` (0-8) bytes of `u` at `out`, most significant first, as
// one 8-byte store of the shifted, byte-swapped value: `out` needs 8
// bytes of room.
inline void PutBigEndian(uint8_t* out, uint64_t u, size_t bytes) {
  const uint64_t top = bytes == 0 ? 0 : u << (8 * (8 - bytes));
  const uint64_t be = std::endian::native == std::endian::little ? __builtin_bswap64(top) : top;
  std::memcpy(out, &be, 8);
}

// Builds one record at a time into buffers it keeps (the hot path of the
// export: a few dozen columns per row, most of them small integers). A
// record has at most kMaxColumns columns: the buffers always have room for
// that many serial types and numbers, so adding an integer checks no size.
class RecordBuilder {
 public:
  static constexpr size_t kMaxColumns = 64;
  void Clear() {
    types_len_ = 0;
    body_len_ = 0;
  }
  // Appends the next column's value, converted by `affinity`.
  void Add(const Value& v, Affinity affinity) {
    if (v.type == Value::Type::kInt && affinity != Affinity::kText && affinity != Affinity::kReal) return AddInt(v.i);
    if (v.type == Value::Type::kNull) return Type(0);
    AddConverted(v, affinity);
  }
  // The record: header then body. Valid until the next Clear.
  const std::vector<uint8_t>& Finish();
  // Finish's bytes written at `out` (Size() of them) without the copy in
  // between: TableBtree puts a row's record straight on its leaf.
  size_t Size() const { return HeaderSize() + body_len_; }
  void CopyTo(uint8_t* out) const;

 private:
  // Room for kMaxColumns serial types (9 bytes at most each) and numbers
  // (8-byte stores) beyond what texts take.
  static constexpr size_t kTypesRoom = 9 * kMaxColumns, kNumbersRoom = 8 * kMaxColumns + 8;
  void AddConverted(Value v, Affinity affinity);
  // The header's size counts its own varint: one byte under 127 types' bytes.
  size_t HeaderSize() const {
    if (types_len_ < 127) [[likely]] return types_len_ + 1;
    size_t header = types_len_ + 1;
    while (types_len_ + VarintLength(header) != header) header = types_len_ + VarintLength(header);
    return header;
  }
  [[gnu::always_inline]] void AddInt(int64_t i) {
    if (i == 0 || i == 1) {  // schema format 4: no body
      types_[types_len_++] = static_cast<uint8_t>(8 + i);
      return;
    }
    const uint8_t type = SizedIntSerialType(i);
    types_[types_len_++] = type;
    BigEndian(static_cast<uint64_t>(i), kSerialBytes[type]);
  }
  void Type(uint64_t t) {
    if (t < 0x80) {
      types_[types_len_++] = static_cast<uint8_t>(t);
    } else {
      types_len_ += PutVarint(types_.data() + types_len_, t);
    }
  }
  // `n` bytes of text: the room for numbers stays after them.
  uint8_t* Body(size_t n) {
    if (body_len_ + n + kNumbersRoom > body_.size()) body_.resize(2 * (body_len_ + n) + kNumbersRoom);
    uint8_t* p = body_.data() + body_len_;
    body_len_ += n;
    return p;
  }
  void BigEndian(uint64_t u, size_t bytes) {  // 1-8 bytes, one 8-byte store
    PutBigEndian(body_.data() + body_len_, u, bytes);
    body_len_ += bytes;
  }
  std::vector<uint8_t> types_ = std::vector<uint8_t>(kTypesRoom), body_ = std::vector<uint8_t>(kNumbersRoom);
  std::vector<uint8_t> record_;
  size_t types_len_ = 0, body_len_ = 0;
  std::string number_;  // a number given text affinity
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_
