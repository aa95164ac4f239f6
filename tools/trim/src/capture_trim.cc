#include "gpucap/tools/trim/capture_trim.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include "gpucap/tools/trim/anonymize.h"
#include "gpucap/builder/name_matcher.h"
#include "gpucap/builder/record_walk.h"
#include "gpucap/builder/strings.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/capture_writer.h"
#include "gpucap/format/output_file.h"
#include "gpucap/format/sink.h"

namespace gpucap::tools {
namespace {

using format::Field;
using format::SmallMessage;

constexpr auto kWriterTimeout = std::chrono::seconds(120);

// Hands work to the writer without ever having it dropped: messages go in
// batches, and every so many submissions the queue is drained.
class Feeder {
 public:
  explicit Feeder(format::CaptureWriter* w) : w_(*w) {}

  Status Message(SmallMessage m) {
    batch_.push_back(std::move(m));
    return batch_.size() >= 4096 ? FlushBatch() : Status::Ok();
  }
  Status Activity(format::ActivityBuffer b) {
    GPUCAP_RETURN_IF_ERROR(FlushBatch());
    if (!w_.SubmitActivity(std::move(b))) return Dropped();
    return Pace();
  }
  Status FlushBatch() {
    if (batch_.empty()) return Status::Ok();
    std::vector<SmallMessage> batch;
    batch.swap(batch_);
    if (!w_.Submit(std::move(batch))) return Dropped();
    return Pace();
  }

 private:
  // At most kInFlight submissions ahead of the writer: each holds up to a
  // batch of 4096 messages or a chunk, and with 64 a loaded machine let
  // the queue grow by tens of MB (a 2.6 MB capture's trim peaked at 104-122
  // MB from run to run, past the hostile tests' budget).
  static constexpr int kInFlight = 8;
  Status Pace() {
    if (++pending_ < kInFlight) return Status::Ok();
    pending_ = 0;
    if (!w_.Flush(kWriterTimeout)) return Dropped();
    return Status::Ok();
  }
  Status Dropped() {
    Status e = w_.error();
    return e.ok() ? Status::Internal("the capture writer dropped work while trimming") : e;
  }
  format::CaptureWriter& w_;
  std::vector<SmallMessage> batch_;
  int pending_ = 0;
};

// The capture's lists: definitions whole, the rest as the plan keeps them.
Status WriteLists(const format::Capture& c, const TrimPlan& plan, const TrimOptions& options, const Anonymizer* anon,
                  Feeder* feed) {
  if (c.session) {
    format::SessionInfo s = *c.session;
    for (const auto& kv : options.provenance) s.options.push_back(kv);
    if (anon) anon->Session(&s);
    GPUCAP_RETURN_IF_ERROR(feed->Message(s));
  }
  for (format::DeviceInfo d : c.devices) {
    if (anon) anon->Device(&d);
    GPUCAP_RETURN_IF_ERROR(feed->Message(d));
  }
  for (format::ThreadInfo t : c.threads) {
    if (anon) anon->Thread(&t);
    GPUCAP_RETURN_IF_ERROR(feed->Message(t));
  }
  for (const format::StreamInfo& s : c.streams) GPUCAP_RETURN_IF_ERROR(feed->Message(s));
  for (const format::CounterDef& d : c.counter_defs) GPUCAP_RETURN_IF_ERROR(feed->Message(d));
  for (format::WindowMark m : c.windows) {
    if (anon) anon->WindowMark(&m);
    GPUCAP_RETURN_IF_ERROR(feed->Message(m));
  }
  for (size_t i = 0; i < c.clocks.size(); ++i) {
    if (plan.clocks[i]) GPUCAP_RETURN_IF_ERROR(feed->Message(c.clocks[i]));
  }
  for (size_t i = 0; i < c.metadata.size(); ++i) {
    if (!plan.metadata[i]) continue;
    format::MetadataBlob b = c.metadata[i];
    if (anon) anon->Metadata(&b);
    GPUCAP_RETURN_IF_ERROR(feed->Message(std::move(b)));
  }
  for (size_t i = 0; i < c.graphs.size(); ++i) {
    if (!plan.graphs[i]) continue;
    format::GraphEvent e = c.graphs[i];
    if (anon) anon->Graph(&e);
    GPUCAP_RETURN_IF_ERROR(feed->Message(std::move(e)));
  }
  for (size_t i = 0; i < c.ranges.size(); ++i) {
    if (!plan.ranges[i]) continue;
    format::RangeEvent e = c.ranges[i];
    if (anon) anon->Range(&e);
    GPUCAP_RETURN_IF_ERROR(feed->Message(std::move(e)));
  }
  for (size_t i = 0; i < c.counter_samples.size(); ++i) {
    if (plan.counter_samples[i]) GPUCAP_RETURN_IF_ERROR(feed->Message(c.counter_samples[i]));
  }
  return Status::Ok();
}

// Activity: per source chunk, its kept records in walk order, with the text
// of every string they point to defined just before.
class ChunkRepacker {
 public:
  ChunkRepacker(const builder::CaptureIndex& index, const Anonymizer* anon, Feeder* feed, TrimResult* result)
      : index_(index), c_(index.capture()), anon_(anon), feed_(*feed), result_(*result), resolver_(c_.strings) {}

  Status Write(size_t chunk, const std::vector<uint8_t>& keep);

 private:
  // Defines `pointer`'s text (hashed when anonymizing) unless defined so already.
  void Define(uint64_t pointer, uint32_t sequence, bool kernel, bool domain, Status* status);

  const builder::CaptureIndex& index_;
  const format::Capture& c_;
  const Anonymizer* anon_;  // null: names as they are
  Feeder& feed_;
  TrimResult& result_;
  builder::StringResolver resolver_;
  std::unordered_map<uint64_t, std::string> defined_;  // pointer -> text as last written
  std::vector<uint64_t> raw_;
};

void ChunkRepacker::Define(uint64_t pointer, uint32_t sequence, bool kernel, bool domain, Status* status) {
  if (pointer == 0 || !status->ok()) return;
  builder::StringResolver::Resolution r = resolver_.Resolve(pointer, sequence);
  if (r.index == builder::kNoString) return;  // unresolved in the source too
  const std::string& text = c_.strings[r.index].def.text;
  std::string shown = !anon_ ? text : kernel ? anon_->Kernel(text) : domain ? anon_->Domain(text) : anon_->RangeName(text);
  auto it = defined_.find(pointer);
  if (it != defined_.end() && it->second == shown) return;
  defined_[pointer] = shown;
  *status = feed_.Message(format::StringDef{pointer, shown});
}

Status ChunkRepacker::Write(size_t chunk, const std::vector<uint8_t>& keep) {
  if (std::find(keep.begin(), keep.end(), 1) == keep.end()) return Status::Ok();
  const format::ChunkView& view = c_.chunks[chunk];
  GPUCAP_RETURN_IF_ERROR(format::DecompressChunk(*c_.file, view, &raw_));
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(raw_.data()), view.info.raw_size);
  auto out = std::make_shared<std::vector<uint64_t>>();
  size_t used = 0;
  format::ChunkInfo info;
  info.context_id = view.info.context_id;
  info.stream_id = view.info.stream_id;
  std::map<uint32_t, std::pair<uint64_t, uint32_t>> kinds;  // kind -> (count, stride)
  uint64_t lo = UINT64_MAX, start_hi = 0, end_hi = 0;
  Status strings = Status::Ok();
  builder::RecordWalk(index_.decoder().shapes(), view.info).Run(bytes, [&](const builder::RawRecord& r) {
    if (r.index >= keep.size() || !keep[r.index]) return;
    if ((used + r.stride + 7) / 8 > out->size()) out->resize(std::max<size_t>((used + r.stride + 7) / 8, out->size() * 2));
    std::memcpy(reinterpret_cast<uint8_t*>(out->data()) + used, r.bytes, r.stride);
    used += r.stride;
    auto& k = kinds[r.kind];
    k.first++;
    k.second = r.stride;
    auto [start, end] = builder::SpanOf(r);
    if (start != 0) {
      lo = std::min(lo, start);
      start_hi = std::max(start_hi, start);
      end_hi = std::max(end_hi, end);
    }
    uint32_t family = r.layout ? builder::FamilyOf(r.kind) : 0;
    if (family == builder::kKernels) Define(r.U(Field::kName), view.sequence, true, false, &strings);
    if (family == builder::kMarkers) {
      Define(r.U(Field::kName), view.sequence, false, false, &strings);
      Define(r.U(Field::kDomain), view.sequence, false, true, &strings);
    }
  });
  GPUCAP_RETURN_IF_ERROR(strings);
  if (used == 0) return Status::Ok();
  for (auto [kind, n] : kinds) {
    info.kind_counts.push_back({kind, n.first});
    info.record_sizes.push_back({kind, n.second});
    info.record_count += static_cast<uint32_t>(n.first);
  }
  info.raw_size = static_cast<uint32_t>(used);
  if (lo != UINT64_MAX) {
    info.min_start_ns = lo;
    info.max_start_ns = start_hi;
    info.max_end_ns = end_hi;
  }
  format::ActivityBuffer b;
  b.data = reinterpret_cast<const uint8_t*>(out->data());
  b.size = used;
  b.info = info;
  b.release = [out] {};  // the buffer lives until the writer is done with it
  result_.chunks++;
  result_.records += info.record_count;
  return feed_.Activity(std::move(b));
}

format::Trailer TrimmedTrailer(const builder::CaptureIndex& index, const Anonymizer* anon) {
  const format::Capture& c = index.capture();
  format::Trailer trailer;
  if (c.trailer) {
    trailer.clean_shutdown = c.trailer->clean_shutdown;
    trailer.stop_reason = c.trailer->stop_reason;
    trailer.trigger = c.trailer->trigger;  // a trimmed flight-recorder dump still says what wrote it
    trailer.stats = c.trailer->stats;
  } else if (!c.stats.empty()) {
    trailer.stats = c.stats.back();
  }
  if (anon) {
    anon->Stats(&trailer.stats);
    trailer.stop_reason = anon->StopReason(trailer.stop_reason);
    // "api: <why>" carries the program's own words: hashed as a stop reason's are.
    if (!trailer.trigger.empty()) trailer.trigger = anon->StopReason(trailer.trigger);
  }
  // The source's end, so ranges left open end where they ended there, and
  // windows relative to the capture resolve the same.
  trailer.end_cupti_ns = index.extent().end_ns;
  return trailer;
}

}  // namespace

Result<TrimResult> WriteTrimmedCapture(const builder::CaptureIndex& index, const TrimPlan& plan,
                                       const TrimOptions& options, format::OutputFile* out) {
  const format::Capture& c = index.capture();
  const std::string& path = out->path();
  std::optional<Anonymizer> anonymizer;
  if (options.anonymize) anonymizer.emplace(*options.anonymize, options.keep_names, c);
  const Anonymizer* anon = anonymizer ? &*anonymizer : nullptr;
  auto sink = format::FileSinkFromFd(out->ReleaseFd(), path);
  format::WriterOptions wo;
  wo.created_realtime_ns = c.file->header().created_realtime_ns;
  wo.own_queue_high_water = false;  // the recording's, so that a trim is the same bytes every time
  auto started = format::CaptureWriter::Start(std::move(sink), wo);
  if (!started.ok()) return started.status();
  std::unique_ptr<format::CaptureWriter> writer = std::move(started).value();
  Feeder feed(writer.get());
  TrimResult result;
  auto write_all = [&]() -> Status {
    GPUCAP_RETURN_IF_ERROR(WriteLists(c, plan, options, anon, &feed));
    ChunkRepacker chunks(index, anon, &feed, &result);
    for (const auto& [chunk, keep] : plan.records) GPUCAP_RETURN_IF_ERROR(chunks.Write(chunk, keep));
    return feed.FlushBatch();
  };
  Status s = write_all();
  Status closed = writer->Close(TrimmedTrailer(index, anon), kWriterTimeout);
  if (s.ok()) s = closed;
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  struct stat st;
  if (!out->temp_path().empty() && stat(out->temp_path().c_str(), &st) == 0) {
    result.bytes = static_cast<uint64_t>(st.st_size);
  }
  return result;
}

Result<TrimResult> WriteTrimmedCapture(const builder::CaptureIndex& index, const TrimPlan& plan,
                                       const TrimOptions& options, const std::string& path) {
  auto out = format::OutputFile::Create(path, format::OutputFile::Access::kSeekable);  // removed unless committed
  if (!out.ok()) return out.status();
  auto result = WriteTrimmedCapture(index, plan, options, out->get());
  if (!result.ok()) return result.status();
  Status s = (*out)->Commit();
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return result;
}

}  // namespace gpucap::tools
