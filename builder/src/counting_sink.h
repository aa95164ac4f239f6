// A TraceSink in front of a renderer that counts what passes into a counter
// shared by every window being built, and every kStep events calls `tick`:
// how a long window shows its progress without the join knowing of it.
#ifndef GPUCAP_BUILDER_COUNTING_SINK_H_
#define GPUCAP_BUILDER_COUNTING_SINK_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

class CountingSink : public TraceSink {
 public:
  static constexpr uint32_t kStep = 1 << 16;

  CountingSink(TraceSink* inner, std::atomic<uint64_t>* events, std::function<void()> tick)
      : inner_(inner), events_(events), tick_(std::move(tick)) {}

  Status Begin(const TraceHeader& header) override { return inner_->Begin(header); }
  Status AddSlice(const Slice& slice) override {
    Count(1 + slice.flows_out.size() + slice.flows_in.size());
    return inner_->AddSlice(slice);
  }
  Status AddCounter(const CounterPoint& point) override {
    Count(1);
    return inner_->AddCounter(point);
  }
  Status End() override {
    Flush();
    return inner_->End();
  }
  // A piece's slices are counted as its renderer takes them, on whichever
  // thread renders it.
  std::unique_ptr<TraceSink> NewPiece(RenderedPiece* out) override {
    std::unique_ptr<TraceSink> inner = inner_->NewPiece(out);
    if (inner == nullptr) return nullptr;
    auto piece = std::make_unique<CountingSink>(inner.get(), events_, tick_);
    piece->owned_ = std::move(inner);
    return piece;
  }
  Status AddPiece(RenderedPiece* piece) override { return inner_->AddPiece(piece); }

 private:
  void Count(uint64_t n) {
    pending_ += n;
    if (pending_ >= kStep) Flush();
  }
  void Flush() {
    events_->fetch_add(pending_, std::memory_order_relaxed);
    pending_ = 0;
    if (tick_) tick_();
  }

  TraceSink* inner_;
  std::unique_ptr<TraceSink> owned_;  // a piece's renderer
  std::atomic<uint64_t>* events_;
  std::function<void()> tick_;
  uint64_t pending_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_COUNTING_SINK_H_
