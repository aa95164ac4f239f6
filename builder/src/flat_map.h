// An open-addressing hash map from 64-bit keys to 32-bit values, for the
// join's hot lookups (correlation id -> row). Millions of entries, no
// erasure, no per-entry allocation.
#ifndef GPUCAP_BUILDER_SRC_FLAT_MAP_H_
#define GPUCAP_BUILDER_SRC_FLAT_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpucap::builder {

class FlatMap {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  explicit FlatMap(size_t expected = 0) { Rehash(Capacity(expected)); }

  // Inserts or, with overwrite, replaces; returns the value now stored.
  uint32_t Insert(uint64_t key, uint32_t value, bool overwrite = false) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.size() * 2);
    Slot& s = Probe(key);
    if (s.used && !overwrite) return s.value;
    if (!s.used) size_++;
    s = Slot{key, value, true};
    return value;
  }

  uint32_t Find(uint64_t key) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.used) return kMissing;
      if (s.key == key) return s.value;
    }
  }

  size_t size() const { return size_; }

  // Empties the map for about `expected` keys, keeping its memory.
  void Reset(size_t expected) {
    slots_.assign(Capacity(expected), Slot{});
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    bool used = false;
  };

  static size_t Capacity(size_t n) {
    size_t c = 16;
    while (c * 3 < n * 4 + 4) c *= 2;
    return c;
  }
  static size_t Hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  Slot& Probe(uint64_t key) {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used || s.key == key) return s;
    }
  }
  void Rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    size_ = 0;
    for (const Slot& s : old) {
      if (s.used) Insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_FLAT_MAP_H_
