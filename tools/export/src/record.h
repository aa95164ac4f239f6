// SQLite's record format (https://www.sqlite.org/fileformat2.html, "Record
// Format"): a header of varint serial types, one per column, then the
// values, big-endian. Values get the column's affinity first, as SQLite
// gives them on insert, so a record written here reads back as the same
// row an INSERT would have stored.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_
#define GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_

#include <cstddef>
#include <cstdint>
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

// Builds one record at a time into buffers it keeps (the hot path of the
// export: a few dozen columns per row, most of them small integers).
class RecordBuilder {
 public:
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

 private:
  void AddConverted(Value v, Affinity affinity);
  void AddInt(int64_t i) {
    if (i == 0 || i == 1) return Type(8 + static_cast<uint64_t>(i));  // schema format 4: no body
    // Serial types 1-6 hold 1, 2, 3, 4, 6 and 8 bytes.
    static constexpr uint8_t kBytes[] = {0, 1, 2, 3, 4, 6, 8};
    uint64_t type = i >= -128 && i <= 127 ? 1
                    : i >= -32768 && i <= 32767 ? 2
                    : i >= -8388608 && i <= 8388607 ? 3
                    : i >= -2147483648LL && i <= 2147483647LL ? 4
                    : i >= -(1LL << 47) && i < (1LL << 47) ? 5 : 6;
    Type(type);
    BigEndian(static_cast<uint64_t>(i), kBytes[type]);
  }
  void Type(uint64_t t) {
    if (types_len_ + 9 > types_.size()) types_.resize(2 * types_.size() + 64);
    if (t < 0x80) {
      types_[types_len_++] = static_cast<uint8_t>(t);
    } else {
      types_len_ += PutVarint(types_.data() + types_len_, t);
    }
  }
  uint8_t* Body(size_t n) {
    if (body_len_ + n > body_.size()) body_.resize(2 * (body_len_ + n) + 256);
    uint8_t* p = body_.data() + body_len_;
    body_len_ += n;
    return p;
  }
  void BigEndian(uint64_t u, size_t bytes) {
    uint8_t* p = Body(bytes);
    for (size_t k = bytes; k-- > 0; u >>= 8) p[k] = static_cast<uint8_t>(u);
  }
  std::vector<uint8_t> types_, body_, record_;
  size_t types_len_ = 0, body_len_ = 0;
  std::string number_;  // a number given text affinity
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_RECORD_H_
