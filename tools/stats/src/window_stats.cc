#include "gpucap/tools/stats/window_stats.h"

#include <cctype>
#include <functional>

namespace gpucap::tools {
namespace {

// Feeds one window's trace to the tallies and the timeline at once.
class Tee : public builder::TraceSink {
 public:
  Tee(builder::TraceSink* a, builder::TraceSink* b) : a_(*a), b_(*b) {}
  Status Begin(const builder::TraceHeader& h) override {
    header_rank_ = h.rank;
    header_world_ = h.world_size;
    header_host_ = h.host;
    start_ns_ = h.window_start_ns;
    end_ns_ = h.window_end_ns;
    GPUCAP_RETURN_IF_ERROR(a_.Begin(h));
    return b_.Begin(h);
  }
  Status AddSlice(const builder::Slice& s) override {
    GPUCAP_RETURN_IF_ERROR(a_.AddSlice(s));
    return b_.AddSlice(s);
  }
  Status AddCounter(const builder::CounterPoint& p) override {
    GPUCAP_RETURN_IF_ERROR(a_.AddCounter(p));
    return b_.AddCounter(p);
  }
  Status End() override {
    GPUCAP_RETURN_IF_ERROR(a_.End());
    return b_.End();
  }
  int32_t header_rank_ = -1, header_world_ = -1;
  std::string header_host_;
  int64_t start_ns_ = 0, end_ns_ = 0;

 private:
  builder::TraceSink& a_;
  builder::TraceSink& b_;
};

}  // namespace

std::string WindowKind(const std::string& label) {
  if (label.empty()) return "window";
  std::string kind;
  for (size_t i = 0; i < label.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(label[i]))) {
      if (i == 0 || !std::isdigit(static_cast<unsigned char>(label[i - 1]))) kind += 'N';
    } else {
      kind += label[i];
    }
  }
  return kind;
}

Result<CaptureStats> CollectWindowStats(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                        const builder::ProgressFn& progress) {
  builder::Builder builder(index, options);
  auto windows = builder.MatchedWindows();
  if (!windows.ok()) return windows.status();
  CaptureStats out;
  out.warnings = index.capture().report.Describe(index.path());
  TimelineCollector timeline(&out.timeline);
  out.windows.reserve(windows->size());
  for (size_t i = 0; i < windows->size(); ++i) {
    const builder::Window& w = (*windows)[i];
    if (progress) progress(w.label.empty() ? "window" : "window " + w.label, i + 1, windows->size());
    WindowStats& ws = out.windows.emplace_back();
    ws.window = w;
    StatsCollector stats(&ws.stats);
    stats.OnStreamBusy([&](uint32_t device, uint32_t stream, const Spans& joined) {
      timeline.AddBusy(device, stream, joined);
    });
    Tee tee(&stats, &timeline);
    builder::WindowReport report;
    GPUCAP_RETURN_IF_ERROR(builder.BuildWindow(w, &tee, &report));
    ws.start_ns = tee.start_ns_;
    ws.end_ns = tee.end_ns_;
    out.rank = tee.header_rank_;
    out.world_size = tee.header_world_;
    out.host = tee.header_host_;
  }
  for (const std::string& line : index.decoder().Describe(builder.decode_stats())) out.warnings.push_back(line);
  return out;
}

}  // namespace gpucap::tools
