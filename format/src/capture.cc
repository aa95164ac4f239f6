#include "gpucap/format/capture.h"

#include <algorithm>
#include <array>
#include <optional>
#include <type_traits>
#include <unordered_set>

#include "gpucap/format/memory_limit.h"

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

// What the decoded messages hold in memory, by kind (SmallMessage's
// alternatives), against the capture's limit (memory_limit.h).
class Spending {
 public:
  Spending(std::string path, uint64_t file_bytes)
      : path_(std::move(path)), file_bytes_(file_bytes), limit_(MemoryLimitFor(file_bytes)) {}

  // Adds `messages` (before they join the capture: at most one frame's
  // worth is held past the limit); an error once their cost passes it.
  Status Add(const std::vector<SmallMessage>& messages) {
    for (const SmallMessage& m : messages) {
      uint64_t b = DecodedBytes(m);
      // Every thread becomes tracks, stacks and names in every command.
      if (auto tid = ThreadOf(m); tid && threads_.insert(*tid).second) thread_bytes_ += kThreadBytes;
      bytes_[m.index()] += b;
      counts_[m.index()]++;
      total_ += b;
    }
    if (limit_ == UINT64_MAX || (total_ <= limit_ / kWorkFactor && thread_bytes_ <= limit_ - total_ * kWorkFactor)) {
      return Status::Ok();
    }
    static constexpr std::array<const char*, std::variant_size_v<SmallMessage>> kNames = {
        "sessions", "devices", "clock samples", "strings", "range events", "graph events", "window marks",
        "threads", "metadata blobs", "recorder stats", "counters", "counter samples", "streams"};
    size_t most = 0;  // the kind that weighs most: named in the message
    for (size_t i = 1; i < bytes_.size(); ++i) {
      if (bytes_[i] > bytes_[most]) most = i;
    }
    std::string limit = MemorySizeText(limit_);
    if (limit_ == kDefaultPerFileByte * file_bytes_ + kDefaultFixedBytes) {
      limit += " (10x the file's " + MemorySizeText(file_bytes_) + " + 256 MB)";
    }
    return Status::ResourceExhausted(
        path_ + ": too large to read within the memory limit: " + std::to_string(counts_[most]) + " " +
        kNames[most] + " (and counting) decode to " + MemorySizeText(bytes_[most]) + ", " +
        MemorySizeText(total_) + " in all, and the command needs about " + std::to_string(kWorkFactor) +
        "x that" + (thread_bytes_ != 0 ? " plus " + MemorySizeText(thread_bytes_) + " for " +
                                             std::to_string(threads_.size()) + " threads"
                                       : std::string()) +
        ", past the limit of " + limit + "; raise it with --max-memory SIZE (e.g. --max-memory " +
        SizeFlag(total_ * kWorkFactor * 2) + ", or none)");
  }

 private:
  // What the commands build per thread of the program (its tracks, stacks
  // and names), beyond its events: measured on ManyThreads
  // (memory_families.h), up to about 2.2 KB (merge).
  static constexpr uint64_t kThreadBytes = 3072;
  static std::optional<uint32_t> ThreadOf(const SmallMessage& m) {
    if (const auto* r = std::get_if<RangeEvent>(&m)) return r->os_tid;
    if (const auto* t = std::get_if<ThreadInfo>(&m)) return t->os_tid;
    if (const auto* g = std::get_if<GraphEvent>(&m)) return g->os_tid;
    return std::nullopt;
  }
  static std::string SizeFlag(uint64_t bytes) {
    uint64_t g = (bytes + (1ull << 30) - 1) >> 30;
    return std::to_string(std::max<uint64_t>(g, 1)) + "G";
  }
  std::string path_;
  uint64_t file_bytes_;
  uint64_t limit_;
  uint64_t total_ = 0;
  std::array<uint64_t, std::variant_size_v<SmallMessage>> bytes_{};
  std::array<uint64_t, std::variant_size_v<SmallMessage>> counts_{};
  std::unordered_set<uint32_t> threads_;
  uint64_t thread_bytes_ = 0;
};

void Undecodable(ScanReport* report, const FrameRef& frame, const Status& s) {
  report->damage.push_back(
      Damage{DamageKind::kUndecodable, frame.offset, frame.end() - frame.offset, frame.type, s.message()});
}

// Takes one intact frame into the capture; an error (past the memory
// limit) stops the load.
Status Take(Capture* c, const FrameRef& frame, std::vector<SmallMessage>* scratch, Spending* spending) {
  auto type = static_cast<FrameType>(frame.type);
  if (type == FrameType::kActivityChunk) {
    auto chunk = DecodeChunk(*c->file, frame);
    if (!chunk.ok()) {
      Undecodable(&c->report, frame, chunk.status());
      return Status::Ok();
    }
    c->chunks.push_back(std::move(chunk).value());
    return Status::Ok();
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
    return Status::Ok();
  }
  scratch->clear();
  Status s = DecodeMessages(*c->file, frame, scratch);
  if (!s.ok()) {
    Undecodable(&c->report, frame, s);
    return Status::Ok();
  }
  if (Status over = spending->Add(*scratch); !over.ok()) return over;
  Sorter sorter{c, frame.sequence};
  for (SmallMessage& m : *scratch) std::visit([&](auto&& v) { sorter(std::move(v)); }, std::move(m));
  return Status::Ok();
}

}  // namespace

Result<Capture> LoadCapture(const std::string& path, const LoadOptions& options) {
  auto file = CaptureFile::Open(path, options.read);
  if (!file.ok()) return file.status();
  Capture c;
  c.file = std::move(file).value();
  std::vector<SmallMessage> scratch;
  Spending spending(path, c.file->size());
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
      if (Status s = Take(&c, *frame, &scratch, &spending); !s.ok()) return s;
    }
    r.frames++;  // the trailer itself
    r.frames_by_type[static_cast<uint16_t>(FrameType::kTrailer)]++;
  } else {
    // Take() reports undecodable frames into c.report as it goes; the scan's
    // own findings (bad headers, checksums, a cut tail) join them, in file
    // order, instead of replacing them.
    Status over;
    ScanReport scanned = c.file->Scan([&](const FrameRef& frame) {
      over = Take(&c, frame, &scratch, &spending);
      return over.ok();
    });
    if (!over.ok()) return over;
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
