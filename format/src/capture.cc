#include "gpucap/format/capture.h"

#include <algorithm>
#include <type_traits>

namespace gpucap::format {
namespace {

// Files each decoded message into its list.
struct Sorter {
  Capture* c;
  uint32_t sequence;
  void operator()(SessionInfo&& s) {
    if (!c->session) c->session = std::move(s);
  }
  void operator()(DeviceInfo&& d) { c->devices.push_back(std::move(d)); }
  void operator()(ClockSample&& s) { c->clocks.push_back(s); }
  void operator()(StringDef&& s) { c->strings.push_back({sequence, std::move(s)}); }
  void operator()(RangeEvent&& e) { c->ranges.push_back(std::move(e)); }
  void operator()(GraphEvent&& e) { c->graphs.push_back(std::move(e)); }
  void operator()(WindowMark&& w) { c->windows.push_back(std::move(w)); }
  void operator()(ThreadInfo&& t) { c->threads.push_back(std::move(t)); }
  void operator()(StreamInfo&& s) { c->streams.push_back(s); }
  void operator()(MetadataBlob&& m) { c->metadata.push_back(std::move(m)); }
  void operator()(RecorderStats&& s) { c->stats.push_back(std::move(s)); }
  void operator()(CounterDef&& d) { c->counter_defs.push_back(std::move(d)); }
  void operator()(CounterSample&& s) { c->counter_samples.push_back(s); }
};

void Undecodable(ScanReport* report, const FrameRef& frame, const Status& s) {
  report->damage.push_back(
      Damage{DamageKind::kUndecodable, frame.offset, frame.end() - frame.offset, frame.type, s.message()});
}

// Takes one intact frame into the capture. Returns false only to stop.
void Take(Capture* c, const FrameRef& frame, std::vector<SmallMessage>* scratch) {
  auto type = static_cast<FrameType>(frame.type);
  if (type == FrameType::kActivityChunk) {
    auto chunk = DecodeChunk(*c->file, frame);
    if (!chunk.ok()) {
      Undecodable(&c->report, frame, chunk.status());
      return;
    }
    c->chunks.push_back(std::move(chunk).value());
    return;
  }
  if (type == FrameType::kTrailer) {
    if (!c->trailer) {
      auto t = DecodeTrailer(*c->file, frame);
      if (t.ok()) {
        c->trailer = std::move(t).value();
      } else {
        Undecodable(&c->report, frame, t.status());
      }
    }
    return;
  }
  scratch->clear();
  Status s = DecodeMessages(*c->file, frame, scratch);
  if (!s.ok()) {
    Undecodable(&c->report, frame, s);
    return;
  }
  Sorter sorter{c, frame.sequence};
  for (SmallMessage& m : *scratch) std::visit([&](auto&& v) { sorter(std::move(v)); }, std::move(m));
}

}  // namespace

Result<Capture> LoadCapture(const std::string& path, const LoadOptions& options) {
  auto file = CaptureFile::Open(path, options.read);
  if (!file.ok()) return file.status();
  Capture c;
  c.file = std::move(file).value();
  std::vector<SmallMessage> scratch;
  const Trailer* trailer = c.file->trailer();
  if (trailer != nullptr) {
    // A clean file: read the frames its index names, checking each one, and
    // leave chunk payloads for later unless asked.
    c.trailer = *trailer;
    ScanReport& r = c.report;
    r.file_bytes = c.file->size();
    r.has_trailer = true;
    for (const IndexEntry& e : trailer->index) {
      bool is_chunk = e.type == static_cast<uint16_t>(FrameType::kActivityChunk);
      // Chunk payloads are checked when decompressed, unless asked now.
      Result<FrameRef> frame = c.file->FrameAt(e.offset, !is_chunk || options.verify_chunks);
      if (!frame.ok()) {
        r.damage.push_back(Damage{DamageKind::kBadPayload, e.offset,
                                  sizeof(FrameHeader) + e.length, e.type, frame.status().message()});
        continue;
      }
      if (!IsKnownFrameType(frame->type)) {
        r.unknown_types[frame->type]++;
        continue;
      }
      r.frames++;
      r.frames_by_type[frame->type]++;
      Take(&c, *frame, &scratch);
    }
    r.frames++;  // the trailer itself
    r.frames_by_type[static_cast<uint16_t>(FrameType::kTrailer)]++;
  } else {
    // Take() reports undecodable frames into c.report as it goes; the scan's
    // own findings (bad headers, checksums, a cut tail) join them, in file
    // order, instead of replacing them.
    ScanReport scanned = c.file->Scan([&](const FrameRef& frame) {
      Take(&c, frame, &scratch);
      return true;
    });
    std::vector<Damage> undecodable = std::move(c.report.damage);
    c.report = std::move(scanned);
    c.report.damage.insert(c.report.damage.end(), undecodable.begin(), undecodable.end());
    std::stable_sort(c.report.damage.begin(), c.report.damage.end(),
                     [](const Damage& a, const Damage& b) { return a.offset < b.offset; });
  }
  if (options.verify_chunks) {
    // What a build would find decompressing them: a chunk whose bytes do
    // not restore (raw checksum, sizes) is damage here too, and left out.
    std::vector<uint64_t> raw;
    std::vector<ChunkView> good;
    good.reserve(c.chunks.size());
    bool bad = false;
    for (ChunkView& v : c.chunks) {
      Status s = DecompressChunk(*c.file, v, &raw);
      if (s.ok()) {
        good.push_back(std::move(v));
        continue;
      }
      bad = true;
      c.report.damage.push_back(Damage{DamageKind::kBadPayload, v.frame_offset, sizeof(FrameHeader) + v.stored.size(),
                                       static_cast<uint16_t>(FrameType::kActivityChunk), s.message()});
    }
    c.chunks = std::move(good);
    if (bad) {
      std::stable_sort(c.report.damage.begin(), c.report.damage.end(),
                       [](const Damage& a, const Damage& b) { return a.offset < b.offset; });
    }
  }
  return c;
}

}  // namespace gpucap::format
