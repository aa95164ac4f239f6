// A growing array of items in blocks of 256: addresses stay put as it grows
// (the join hands out pointers into its items), without an allocation per
// item as std::deque makes for large ones.
#ifndef GPUCAP_BUILDER_SRC_BLOCK_STORE_H_
#define GPUCAP_BUILDER_SRC_BLOCK_STORE_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpucap::builder {

template <class T>
class BlockStore {
 public:
  T& emplace_back() {
    if (n_ % kBlock == 0 && n_ / kBlock == blocks_.size()) blocks_.push_back(std::make_unique<T[]>(kBlock));
    T& t = blocks_[n_ / kBlock][n_ % kBlock];
    if (n_ < reused_) t = T();
    n_++;
    return t;
  }
  T& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  size_t size() const { return n_; }
  // Empties it but keeps its memory for the items to come: memory touched
  // again costs less than memory new to the process (a page fault each).
  void Rewind() {
    reused_ = std::max(reused_, n_);
    n_ = 0;
  }

 private:
  static constexpr size_t kBlock = 256;
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t n_ = 0;
  size_t reused_ = 0;  // items below this were made before a Rewind
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_BLOCK_STORE_H_
