// Correlation id -> row of the join's launch table. CUPTI hands out
// correlation ids in increasing order, so a window's ids fill a narrow range:
// there they index an array directly, and the join's lookups, made in the
// order ops ran, read it nearly in sequence instead of missing the cache once
// per op in a hash table. Ids spread thin (a damaged capture, ids from
// several processes) fall back to hashing.
#ifndef GPUCAP_BUILDER_SRC_CORRELATION_MAP_H_
#define GPUCAP_BUILDER_SRC_CORRELATION_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flat_map.h"

namespace gpucap::builder {

class CorrelationMap {
 public:
  static constexpr uint32_t kMissing = FlatMap::kMissing;

  // Empties the map for `n` keys in [min_key, max_key], keeping its memory.
  void Reset(uint64_t min_key, uint64_t max_key, size_t n) {
    dense_ = n > 0 && max_key >= min_key && max_key - min_key < 4 * static_cast<uint64_t>(n) + 4096;
    if (dense_) {
      base_ = min_key;
      slots_.assign(max_key - min_key + 1, kMissing);
    } else {
      slots_.clear();
      hashed_.Reset(n);
    }
  }

  // The first value inserted for a key stands; false when the key had one.
  bool Insert(uint64_t key, uint32_t value) {
    if (!dense_) return hashed_.Insert(key, value) == value;
    uint64_t i = key - base_;
    if (i >= slots_.size()) return true;
    if (slots_[i] != kMissing) return false;
    slots_[i] = value;
    return true;
  }

  uint32_t Find(uint64_t key) const {
    if (!dense_) return hashed_.Find(key);
    uint64_t i = key - base_;
    return i < slots_.size() ? slots_[i] : kMissing;
  }

  bool dense() const { return dense_; }

 private:
  bool dense_ = false;
  uint64_t base_ = 0;
  std::vector<uint32_t> slots_;
  FlatMap hashed_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_CORRELATION_MAP_H_
