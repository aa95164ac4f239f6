// SQLite's order of two stored values in an index column
// (https://www.sqlite.org/datatype3.html, "Comparison Expressions", and
// fileformat2.html's "Index B-Trees"): NULL first, then numbers by value
// (an integer and a real compare as numbers, exactly), then text by memcmp
// (the BINARY collation). The one rule both the in-memory sort
// (index_keys.h) and the merge of spilled runs (index_merge.h) follow.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_INDEX_ORDER_H_
#define GPUCAP_TOOLS_EXPORT_SRC_INDEX_ORDER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "record.h"

namespace gpucap::tools::sqlite {

// An integer against a real, by value: the double converted to int64 only
// where it fits; the fraction decides ties.
inline int CompareIntReal(int64_t i, double d) {
  if (d < -9223372036854775808.0) return 1;
  if (d >= 9223372036854775808.0) return -1;
  const int64_t t = static_cast<int64_t>(d);  // toward zero
  if (i != t) return i < t ? -1 : 1;
  const double fraction = d - static_cast<double>(t);
  return fraction > 0 ? -1 : fraction < 0 ? 1 : 0;
}

// -1, 0 or 1 as `a` sorts before, with or after `b`; texts as given.
inline int CompareStored(Value::Type ta, int64_t ia, double da, const char* pa, size_t na, Value::Type tb,
                         int64_t ib, double db, const char* pb, size_t nb) {
  auto cls = [](Value::Type t) { return t == Value::Type::kNull ? 0 : t == Value::Type::kText ? 2 : 1; };
  const int ca = cls(ta), cb = cls(tb);
  if (ca != cb) return ca < cb ? -1 : 1;
  if (ca == 0) return 0;
  if (ca == 1) {
    if (ta == Value::Type::kInt && tb == Value::Type::kInt) return ia < ib ? -1 : ia > ib ? 1 : 0;
    if (ta == Value::Type::kReal && tb == Value::Type::kReal) return da < db ? -1 : da > db ? 1 : 0;
    if (ta == Value::Type::kInt) return CompareIntReal(ia, db);
    return -CompareIntReal(ib, da);
  }
  const int m = std::memcmp(pa, pb, std::min(na, nb));
  if (m != 0) return m < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

inline int CompareStored(const Value& a, const Value& b) {
  return CompareStored(a.type, a.i, a.d, a.text.data(), a.text.size(), b.type, b.i, b.d, b.text.data(),
                       b.text.size());
}

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_INDEX_ORDER_H_
