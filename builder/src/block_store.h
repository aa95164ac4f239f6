// A growing array of items in blocks of 256: addresses stay put as it grows
// (the join hands out pointers into its items), without an allocation per
// item as std::deque makes for large ones.
#ifndef GPUCAP_BUILDER_SRC_BLOCK_STORE_H_
#define GPUCAP_BUILDER_SRC_BLOCK_STORE_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace gpucap::builder {

template <class T>
class BlockStore {
 public:
  T& emplace_back() {
    if (n_ % kBlock == 0) blocks_.push_back(std::make_unique<T[]>(kBlock));
    T& t = blocks_[n_ / kBlock][n_ % kBlock];
    n_++;
    return t;
  }
  T& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  size_t size() const { return n_; }
  void clear() {
    blocks_.clear();
    n_ = 0;
  }

 private:
  static constexpr size_t kBlock = 256;
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t n_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_BLOCK_STORE_H_
