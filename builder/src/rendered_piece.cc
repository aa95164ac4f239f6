// RenderedPiece and BlockPool (output.h): a piece's bytes kept block by
// block until the window's sink takes them in order.
#include "gpucap/builder/output.h"

#include <algorithm>

namespace gpucap::builder {

ByteBlock BlockPool::Take(size_t capacity) {
  ByteBlock b;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      b = std::move(free_.back());
      free_.pop_back();
    }
  }
  b.Reserve(capacity);
  return b;
}

void BlockPool::Give(ByteBlock block) {
  if (block.capacity == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < kKept) free_.push_back(std::move(block));
}

namespace {

class RenderedPieceSink : public ByteSink {
 public:
  explicit RenderedPieceSink(RenderedPiece* into) : into_(into) {}

  Status Append(std::string_view bytes) override {
    if (bytes.empty()) return Status::Ok();
    ByteBlock b = into_->pool != nullptr ? into_->pool->Take(bytes.size()) : ByteBlock();
    b.Reserve(bytes.size());
    std::copy(bytes.begin(), bytes.end(), b.data.get());
    into_->blocks.emplace_back(std::move(b), bytes.size());
    return Status::Ok();
  }
  // Keeps the writer's block and gives it another of the same size.
  Status AppendBlock(ByteBlock* block, size_t used) override {
    if (used == 0) return Status::Ok();
    size_t capacity = block->capacity;
    into_->blocks.emplace_back(std::move(*block), used);
    *block = into_->pool != nullptr ? into_->pool->Take(capacity) : ByteBlock();
    block->Reserve(capacity);
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }

 private:
  RenderedPiece* into_;
};

}  // namespace

Status RenderedPiece::MoveTo(ByteSink* sink) {
  Status status = Status::Ok();
  for (auto& [block, used] : blocks) {
    if (status.ok()) status = sink->AppendBlock(&block, used);
    if (pool != nullptr) pool->Give(std::move(block));
  }
  blocks.clear();
  return status;
}

std::unique_ptr<ByteSink> NewRenderedPieceSink(RenderedPiece* into) {
  return std::make_unique<RenderedPieceSink>(into);
}

}  // namespace gpucap::builder
