// A TraceSink in front of a renderer that notes when the join begins
// writing and when it is done (WindowTimes::begun_ns, written_ns,
// build_times.h), for BuildOptions::phase_times; it passes everything on
// unchanged.
#ifndef GPUCAP_BUILDER_SRC_TIMED_SINK_H_
#define GPUCAP_BUILDER_SRC_TIMED_SINK_H_

#include "gpucap/builder/build_times.h"
#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

class TimedSink : public TraceSink {
 public:
  TimedSink(TraceSink* inner, WindowTimes* times) : inner_(inner), times_(times) {}

  Status Begin(const TraceHeader& header) override {
    times_->begun_ns = BuildClockNs();
    return inner_->Begin(header);
  }
  Status AddSlice(const Slice& slice) override { return inner_->AddSlice(slice); }
  Status AddCounter(const CounterPoint& point) override { return inner_->AddCounter(point); }
  Status End() override {
    times_->written_ns = BuildClockNs();
    return inner_->End();
  }
  std::unique_ptr<TraceSink> NewPiece(RenderedPiece* out) override { return inner_->NewPiece(out); }
  Status AddPiece(RenderedPiece* piece) override { return inner_->AddPiece(piece); }

 private:
  TraceSink* inner_;
  WindowTimes* times_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_TIMED_SINK_H_
